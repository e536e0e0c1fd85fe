package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.core.message.Message;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class TailCommandTest {
  private static final Pattern OFFSET_LINE = Pattern.compile("(?m)^offset (\\d+) ");

  @TempDir Path dir;

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void showsKeyValueHeadersPropertiesAndKafkaCoordinates(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("tail", "orders", "--max", "2");

      assertThat(run.err()).isEmpty();
      assertThat(run.status()).isZero();
      assertThat(run.out())
          .isEqualTo(
"""
offset 1  accepted 2025-01-31T09:03:21Z  topic orders  id order-1
  key         order-1
  value       base64:AAEC/w==
  header      trace: t-1
  header      raw: base64:wyg=
  property    tenant: eu
  kafka       topic orders, partition 0, offset 18
  timestamp   2025-01-31T09:01:41Z (create_time)

offset 2  accepted 2025-01-31T09:03:22Z  topic orders  id order-2
  key         order-2
  value       (tombstone)
  header      trace: t-2
  header      raw: base64:wyg=
  property    tenant: eu
  kafka       topic orders, partition 0, offset 19
  timestamp   2025-01-31T09:01:42Z (create_time)

""");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void startsWhereFromSays(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      assertThat(offsets(store.run("tail", "jobs"))).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
      assertThat(offsets(store.run("tail", "jobs", "--max", "2"))).containsExactly(4L, 5L);
      assertThat(offsets(store.run("tail", "jobs", "--from", "earliest", "--max", "2")))
          .containsExactly(0L, 1L);
      assertThat(offsets(store.run("tail", "jobs", "--from", "4"))).containsExactly(4L, 5L);
      assertThat(offsets(store.run("tail", "jobs", "--from", "6"))).isEmpty();
      assertThat(offsets(store.run("tail", "jobs", "--from", "latest"))).isEmpty();
      assertThat(offsets(store.run("tail", "jobs", "--from", "2025-01-31T09:00:02Z")))
          .containsExactly(2L, 3L, 4L, 5L);
      assertThat(offsets(store.run("tail", "jobs", "--from", "2025-01-31T10:00:03.500+01:00")))
          .containsExactly(4L, 5L);
      assertThat(offsets(store.run("tail", "jobs", "--from", "earliest", "--max", "0"))).hasSize(6);
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void anOffsetOutsideTheQueueIsAOneLineError(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("tail", "jobs", "--from", "99");

      assertThat(run.status()).isEqualTo(1);
      assertThat(run.err())
          .isEqualTo(
              "queue-bridge: --from 99: not an offset of queue 'jobs' (expected 0 to 6, its head to"
                  + " its tail)\n");
    }
  }

  @Test
  void aPositionThatIsNoneOfTheFormsIsAUsageError() {
    Cli.Run run = Cli.run("tail", "jobs", "--from", "yesterday", "--store-type", "memory");

    assertThat(run.status()).isEqualTo(2);
    assertThat(run.err())
        .startsWith(
            "queue-bridge: --from 'yesterday': expected earliest, latest, an offset, or an ISO-8601"
                + " time such as 2025-01-31T09:00:00Z\n");
    assertThat(Cli.run("tail", "jobs", "--max", "-1", "--store-type", "memory").status())
        .isEqualTo(2);
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void showsBinaryAsHexOnRequest(FixtureStore.Kind kind) {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("tail", "orders", "--from", "1", "--max", "1", "--hex");

      assertThat(run.out()).contains("  value       hex:000102ff\n").contains("raw: hex:c328\n");
    }
  }

  @ParameterizedTest
  @EnumSource(FixtureStore.Kind.class)
  void printsOneJsonObjectPerMessage(FixtureStore.Kind kind) throws Exception {
    try (FixtureStore store = FixtureStore.create(kind, dir)) {
      Cli.Run run = store.run("tail", "orders", "--from", "earliest", "-o", "json");

      assertThat(run.status()).isZero();
      List<JsonNode> lines = new ArrayList<>();
      for (String line : run.out().split("\n")) {
        lines.add(new ObjectMapper().readTree(line));
      }
      assertThat(lines).hasSize(3);
      JsonNode text = lines.get(0);
      assertThat(text.get("queue").asText()).isEqualTo("orders");
      assertThat(text.get("offset").asLong()).isZero();
      assertThat(text.get("createdAt").asText()).isEqualTo("2025-01-31T09:03:20Z");
      assertThat(text.get("key").get("utf8").asText()).isEqualTo("order-0");
      assertThat(text.get("value").get("utf8").asText()).isEqualTo("{\"id\":0}");
      assertThat(text.get("headers").get(1).get("key").asText()).isEqualTo("raw");
      assertThat(text.get("headers").get(1).get("value").get("base64").asText()).isEqualTo("wyg=");
      assertThat(text.get("properties").get("x-kafka-offset").asText()).isEqualTo("17");
      assertThat(text.get("kafka").get("topic").asText()).isEqualTo("orders");
      assertThat(text.get("kafka").get("partition").asText()).isEqualTo("0");
      assertThat(text.get("timestamp").asLong())
          .isEqualTo(StoreFixture.T0.plusSeconds(100).toEpochMilli());
      assertThat(text.get("timestampType").asText()).isEqualTo("create_time");
      assertThat(lines.get(1).get("value").get("base64").asText()).isEqualTo("AAEC/w==");
      assertThat(lines.get(2).get("value").isNull()).as("a tombstone").isTrue();
    }
  }

  @Test
  void followsNewMessagesUntilInterrupted() throws Exception {
    try (FixtureStore store = FixtureStore.create(FixtureStore.Kind.MEMORY, dir)) {
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      AtomicInteger status = new AtomicInteger(-1);
      Thread follower =
          new Thread(
              () ->
                  status.set(
                      QueueBridgeCli.commandLine(
                              FixtureStore.serving(store.memory()),
                              StoreFixture.CLOCK,
                              new PrintWriter(out),
                              new PrintWriter(err))
                          .execute(
                              "tail", "jobs", "--max", "1", "--follow", "--store-type", "memory")));
      follower.start();
      await().atMost(Duration.ofSeconds(10)).until(() -> out.toString().contains("offset 5 "));

      store
          .memory()
          .queues()
          .append(
              "jobs",
              Message.builder()
                  .id("job-6")
                  .topic("jobs/email")
                  .value(StoreFixture.utf8("line one\nline two"))
                  .createdAt(StoreFixture.T0.plus(Duration.ofMinutes(50)))
                  .build());
      await().atMost(Duration.ofSeconds(10)).until(() -> out.toString().contains("offset 6 "));
      follower.interrupt();
      follower.join(Duration.ofSeconds(10).toMillis());

      assertThat(follower.isAlive()).isFalse();
      assertThat(status.get()).as(err.toString()).isZero();
      assertThat(err.toString()).isEmpty();
      assertThat(out.toString())
          .contains("  key         (none)\n  value       line one\n              line two\n");
    }
  }

  private static List<Long> offsets(Cli.Run run) {
    assertThat(run.status()).as(run.err()).isZero();
    List<Long> offsets = new ArrayList<>();
    Matcher m = OFFSET_LINE.matcher(run.out());
    while (m.find()) {
      offsets.add(Long.parseLong(m.group(1)));
    }
    return offsets;
  }
}
