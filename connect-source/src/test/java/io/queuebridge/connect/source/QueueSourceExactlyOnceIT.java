package io.queuebridge.connect.source;

import static io.queuebridge.connect.source.SourceTestSupport.append;
import static io.queuebridge.connect.source.SourceTestSupport.values;
import static io.queuebridge.connect.source.SourceTestSupport.valuesOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.SharedStores;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.runtime.SourceConnectorConfig;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly once out of a stream (KIP-618) on workers with {@code
 * exactly.once.source.support=enabled} while the flow is disturbed: the connector and its task
 * restarted, a worker leaving and one joining. A {@code read_committed} consumer of the target
 * topic then sees every message exactly once, checked value by value.
 */
class QueueSourceExactlyOnceIT {
  private static final Duration TIMEOUT = Duration.ofMinutes(3);

  @TempDir static Path store;
  private static EmbeddedConnectCluster cluster;
  private static SharedStores.Lease lease;

  @BeforeAll
  static void start() {
    lease = SourceTestSupport.openStore(store);
    cluster = SourceTestSupport.startCluster("source-eos", 2, true);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.stop();
    }
    if (lease != null) {
      lease.close();
    }
  }

  private static Map<String, String> props(String queue, String topic, String boundary) {
    Map<String, String> props = SourceTestSupport.sourceProps(store, 1);
    props.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, queue);
    props.put(QueueSourceConfig.TOPIC_CONFIG, topic);
    props.put(QueueSourceConfig.POLL_MAX_RECORDS_CONFIG, "500");
    props.put(SourceConnectorConfig.EXACTLY_ONCE_SUPPORT_CONFIG, "required");
    props.put(SourceConnectorConfig.TRANSACTION_BOUNDARY_CONFIG, boundary);
    return props;
  }

  /** Distinct committed values in {@code topic}. */
  private static long committedDistinct(String topic) {
    return valuesOf(SourceTestSupport.readAllFlat(cluster, topic, true)).stream()
        .distinct()
        .count();
  }

  private static void awaitCommitted(String topic, long n) {
    await(topic + " holds " + n + " committed records")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .until(() -> committedDistinct(topic) >= n);
  }

  private static void appendPhase(String queue, String prefix, int from, int n) {
    for (int i = from; i < from + n; i += 1_000) {
      append(lease, queue, values(prefix, i, Math.min(i + 1_000, from + n)));
    }
  }

  private static void assertExactlyOnce(String topic, String prefix, int total) {
    awaitCommitted(topic, total);
    List<String> committed = valuesOf(SourceTestSupport.readAllFlat(cluster, topic, true));
    Map<String, Integer> counts = new HashMap<>();
    committed.forEach(v -> counts.merge(v, 1, Integer::sum));
    assertThat(counts.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey))
        .as("values committed more than once")
        .isEmpty();
    assertThat(committed).hasSize(total);
    assertThat(counts.keySet()).containsExactlyInAnyOrderElementsOf(values(prefix, 0, total));
  }

  @Test
  void everyMessageExactlyOnceThroughRestartsAndWorkerChanges() {
    String queue = "eos";
    String topic = "eos-out";
    String name = "eos-source";
    SourceTestSupport.createStream(lease, queue);
    cluster.kafka().createTopic(topic, 3);
    Map<String, String> props = props(queue, topic, "poll");
    props.put(QueueSourceConfig.POLL_MAX_RECORDS_CONFIG, "100");
    cluster.configureConnector(name, props);
    int phase = 20_000;
    List<Runnable> disruptions =
        List.of(
            () -> cluster.restartConnectorAndTasks(name, false, true, false),
            () -> cluster.restartTask(name, 0),
            cluster::removeWorker,
            () -> {
              cluster.addWorker();
              cluster.restartConnectorAndTasks(name, false, true, false);
            });
    int midFlow = 0;
    int appended = 0;
    for (Runnable disruption : disruptions) {
      appendPhase(queue, "eos", appended, phase);
      appended += phase;
      long started = appended - phase + 2_000L;
      await("records of the phase flowing")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(100))
          .until(() -> SourceTestSupport.endOffsetSum(cluster, topic, true) >= started);
      // the last stable offsets count transaction markers too: below what was appended means
      // records of this phase were still on their way when the flow was disturbed
      long stable = SourceTestSupport.endOffsetSum(cluster, topic, true);
      if (stable < appended) {
        midFlow++;
      }
      System.out.printf("disturbing at %d stable offsets of %d appended%n", stable, appended);
      disruption.run();
    }
    appendPhase(queue, "eos", appended, phase);
    appended += phase;
    assertThat(midFlow).as("disruptions that hit records in flight").isGreaterThanOrEqualTo(3);
    assertExactlyOnce(topic, "eos", appended);
    cluster.deleteConnector(name);
  }

  @Test
  void connectorDefinedTransactionsAreExactlyOnceToo() {
    String queue = "eos-connector";
    String topic = "eos-connector-out";
    String name = "eos-connector-source";
    SourceTestSupport.createStream(lease, queue);
    cluster.kafka().createTopic(topic, 2);
    Map<String, String> props = props(queue, topic, "connector");
    props.put(QueueSourceConfig.POLL_MAX_RECORDS_CONFIG, "200");
    props.put(QueueSourceConfig.KAFKA_TRANSACTION_MAX_RECORDS_CONFIG, "1500");
    cluster.configureConnector(name, props);

    appendPhase(queue, "tx", 0, 8_000);
    awaitCommitted(topic, 3_000);
    cluster.restartTask(name, 0);
    appendPhase(queue, "tx", 8_000, 7_001);
    // 15,001 is not a multiple of 1,500: the last transaction is committed because the task went
    // idle, not because it was full.
    assertExactlyOnce(topic, "tx", 15_001);
    cluster.deleteConnector(name);
  }
}
