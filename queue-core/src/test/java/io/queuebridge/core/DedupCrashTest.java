package io.queuebridge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.config.AckDurability;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deduplication survives a crash (BEHAVIOUR Q-DEDUP): a child JVM ({@link DedupCrashWriter})
 * publishes with deduplication ids under {@code FSYNC} and reports each acknowledged publish; the
 * test kills it with SIGKILL, reopens the file store inside the window, and retries every
 * acknowledged id: each answers the offset it was acknowledged with, stores nothing and is counted.
 */
class DedupCrashTest {
  @TempDir Path tmp;

  @Test
  @Timeout(value = 2, unit = TimeUnit.MINUTES)
  void afterSigkillAndReopenInsideTheWindowEveryAcknowledgedIdIsStillRefused() throws Exception {
    Path dir = tmp.resolve("store");
    Map<Integer, Long> acked = new ConcurrentHashMap<>();
    Process child =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                DedupCrashWriter.class.getName(),
                dir.toString())
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                  String[] f = line.split(" ");
                  if (f[0].equals("ack")) {
                    acked.put(Integer.parseInt(f[1]), Long.parseLong(f[2]));
                  }
                }
              } catch (java.io.IOException e) {
                // the child died
              }
            });
    reader.start();
    try {
      await().atMost(Duration.ofSeconds(60)).until(() -> acked.size() >= 300);
    } finally {
      child.destroyForcibly(); // SIGKILL on Linux
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
      reader.join(10_000);
    }
    assertThat(child.exitValue()).as("killed, not exited").isNotZero();

    try (Storage storage = QueueStores.file(dir)) {
      QueueManager m =
          new QueueManager(
              storage, QueueManagerConfig.builder().ackDurability(AckDurability.FSYNC).build());
      m.deliveryScheduler(new RecordingScheduler());
      try {
        long tail = storage.queues().tail("q");
        assertThat(tail).isGreaterThanOrEqualTo(acked.size());
        for (Map.Entry<Integer, Long> a : acked.entrySet()) {
          Message stored = storage.queues().read("q", a.getValue());
          assertThat(stored.properties())
              .containsEntry(MessageProperties.DEDUP_ID, "id-" + a.getKey());
          long retry =
              m.publishTo(
                  "q",
                  PublishRequest.builder("q")
                      .value("retry".getBytes(StandardCharsets.UTF_8))
                      .deduplicationId("id-" + a.getKey())
                      .build());
          assertThat(retry).as("retry of id-%d", a.getKey()).isEqualTo(a.getValue());
        }
        assertThat(storage.queues().tail("q")).as("the retries stored nothing").isEqualTo(tail);
        assertThat(m.metrics().duplicatesRefused()).isEqualTo(acked.size());
        long fresh =
            m.publishTo(
                "q",
                PublishRequest.builder("q")
                    .value("new".getBytes(StandardCharsets.UTF_8))
                    .deduplicationId("fresh")
                    .build());
        assertThat(fresh).isEqualTo(tail);
      } finally {
        m.stop();
      }
    }
  }
}
