package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The commands read a {@code file} store that another process is writing: a child JVM ({@link
 * StreamWriterProcess}) holds the store, appends to a protected stream as the sink does and moves a
 * reader's group, while {@code queues}, {@code groups}, {@code describe} and {@code tail}, named by
 * the shipped sink example with its placeholder filled in, report exactly what the child wrote; a
 * command that would change the store is refused naming the child as holder.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class LiveStoreTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path EXAMPLE =
      Paths.get("../examples/connectors/sink-protected-stream.json");

  @TempDir Path tmp;

  @Test
  void theCommandsReadWhatAWriterInAnotherProcessCommitsWhileItHoldsTheStore() throws Exception {
    Path store = tmp.resolve("store");
    Path config =
        Files.writeString(
            tmp.resolve("sink.json"),
            Files.readString(EXAMPLE).replace("${STORE_DIR}", store.toString()));
    Process child =
        new ProcessBuilder(
                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-cp",
                System.getProperty("java.class.path"),
                StreamWriterProcess.class.getName(),
                store.toString(),
                "200",
                "120",
                "90")
            .redirectError(tmp.resolve("child.err").toFile())
            .start();
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread pump =
        new Thread(
            () -> {
              try (BufferedReader out =
                  new BufferedReader(
                      new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l = out.readLine(); l != null; l = out.readLine()) {
                  lines.add(l);
                }
              } catch (java.io.IOException e) {
                lines.add("pump failed: " + e);
              }
            },
            "writer stdout");
    pump.setDaemon(true);
    pump.start();
    try (PrintWriter toChild =
        new PrintWriter(new OutputStreamWriter(child.getOutputStream(), StandardCharsets.UTF_8))) {
      assertThat(lines.poll(60, TimeUnit.SECONDS))
          .as("the writer's report (stderr: %s)", tmp.resolve("child.err"))
          .isEqualTo("ready tail=200 cursor=120 committed=90");

      JsonNode orders = queue(config, "orders");
      assertThat(orders.get("messages").asLong()).isEqualTo(200);
      assertThat(orders.get("firstOffset").asLong()).isZero();
      assertThat(orders.get("lastOffset").asLong()).isEqualTo(199);
      assertThat(orders.get("protected").asBoolean()).isTrue();
      assertThat(orders.get("bytes").asLong()).isPositive();
      JsonNode archiver =
          json(Cli.run("groups", "orders", "--config", config.toString(), "-o", "json")).get(0);
      assertThat(archiver.get("cursor").asLong()).isEqualTo(120);
      assertThat(archiver.get("committed").asLong()).isEqualTo(90);
      assertThat(archiver.get("lag").asLong()).isEqualTo(110);
      JsonNode last =
          json(
              Cli.run(
                  "tail", "orders", "--from", "199", "--config", config.toString(), "-o", "json"));
      assertThat(last.get("key").get("utf8").asText()).isEqualTo("order-199");

      for (int round = 1; round <= 3; round++) {
        toChild.println("more");
        toChild.flush();
        long tail = 200 + 10L * round;
        assertThat(lines.poll(60, TimeUnit.SECONDS)).isEqualTo("appended " + tail);
        await()
            .atMost(Duration.ofSeconds(30))
            .untilAsserted(
                () -> assertThat(queue(config, "orders").get("messages").asLong()).isEqualTo(tail));
        assertThat(
                json(Cli.run("groups", "orders", "--config", config.toString(), "-o", "json"))
                    .get(0)
                    .get("lag")
                    .asLong())
            .isEqualTo(tail - 90);
      }

      Cli.Run purge = Cli.run("purge", "orders", "--yes", "--config", config.toString());
      assertThat(purge.status()).isEqualTo(1);
      assertThat(purge.err()).contains("locked").contains(Long.toString(child.pid()));
      assertThat(queue(config, "orders").get("messages").asLong()).isEqualTo(230);
    } finally {
      child.destroyForcibly();
      child.waitFor(30, TimeUnit.SECONDS);
    }
  }

  private static JsonNode queue(Path config, String name) throws Exception {
    for (JsonNode q : json(Cli.run("queues", "--config", config.toString(), "-o", "json"))) {
      if (q.get("name").asText().equals(name)) {
        return q;
      }
    }
    throw new AssertionError("no queue " + name);
  }

  private static JsonNode json(Cli.Run run) throws Exception {
    assertThat(run.err()).isEmpty();
    assertThat(run.status()).isZero();
    return JSON.readTree(run.out());
  }
}
