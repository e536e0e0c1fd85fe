package io.queuebridge.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;

/**
 * What the tests that drive a {@link ChildConnectWorker} share: posting the example connector
 * configs, waiting for them to run, and reading back what reached Kafka the way a {@code
 * read_committed} consumer does.
 */
final class ConnectFlows {
  private static final ObjectMapper JSON = new ObjectMapper();

  private ConnectFlows() {}

  /**
   * Starts a one-broker KRaft cluster for the child-JVM worker tests: transactions on one replica,
   * no initial group rebalance delay, and the transactions of a killed task aborted within a second
   * of their {@code transaction.timeout.ms}.
   */
  static EmbeddedKafkaCluster startBroker(Map<String, String> extra) {
    Properties broker = new Properties();
    broker.put("transaction.state.log.replication.factor", "1");
    broker.put("transaction.state.log.min.isr", "1");
    broker.put("offsets.topic.replication.factor", "1");
    broker.put("group.initial.rebalance.delay.ms", "0");
    // how often the broker aborts transactions older than their producer's transaction.timeout.ms
    // (10 s by default): those of a killed task, which a restarting worker waits for
    broker.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000");
    broker.putAll(extra);
    EmbeddedKafkaCluster kafka = new EmbeddedKafkaCluster(1, broker);
    kafka.start();
    return kafka;
  }

  /** The messages in {@code stream} now, read beside the worker through a read-only open. */
  static long streamSize(Path store, String stream) {
    try (Storage view =
        QueueStores.provider("file").openReadOnly(Map.of("path", store.toString()))) {
      return view.queues().tail(stream) - view.queues().head(stream);
    } catch (QueueNotFoundException notYet) {
      return 0;
    }
  }

  /** One of the example connector configs the plugin archive ships in {@code etc/}. */
  static ExampleConfig example(String file) {
    return ExampleConfig.read(PluginUnderTest.dir().resolve("etc").resolve(file));
  }

  /** Posts connector {@code name} with {@code config} to the worker's REST API. */
  static void post(ChildConnectWorker worker, String name, Map<String, String> config)
      throws Exception {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("name", name);
    body.put("config", config);
    assertThat(worker.rest().createConnector(JSON.writeValueAsString(body))).isEqualTo(name);
  }

  /** Waits until connector {@code name} and its {@code tasks} tasks run, none failed. */
  static void awaitRunning(ChildConnectWorker worker, String name, int tasks, Duration timeout) {
    ConnectRestClient rest = worker.rest();
    await(name + " and " + tasks + " task(s) running")
        .atMost(timeout)
        .pollInterval(Duration.ofMillis(200))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              assertThat(rest.failureTrace(name)).isEmpty();
              assertThat(rest.isRunning(name)).isTrue();
              assertThat(rest.status(name).path("tasks").size()).isEqualTo(tasks);
            });
  }

  static long endOffsetSum(Admin admin, String topic, IsolationLevel isolation) throws Exception {
    return endOffsets(admin, topic, isolation).values().stream().mapToLong(Long::longValue).sum();
  }

  /** The end offset of each partition of {@code topic}, as a consumer of {@code isolation} sees. */
  static Map<TopicPartition, Long> endOffsets(Admin admin, String topic, IsolationLevel isolation)
      throws Exception {
    int partitions =
        admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
    }
    Map<TopicPartition, Long> out =
        new TreeMap<>(Comparator.comparingInt(TopicPartition::partition));
    admin
        .listOffsets(latest, new ListOffsetsOptions(isolation))
        .all()
        .get()
        .forEach((tp, info) -> out.put(tp, info.offset()));
    return out;
  }

  /** Records of {@code topic} a read_committed consumer sees now (0 before the topic exists). */
  static long committedRecords(EmbeddedKafkaCluster kafka, String topic, Duration timeout)
      throws Exception {
    try (Admin admin = kafka.createAdminClient()) {
      if (!admin.listTopics().names().get().contains(topic)) {
        return 0;
      }
    }
    return readAllCommitted(kafka, topic, timeout).size();
  }

  /**
   * Every record of {@code topic} a read_committed consumer sees: each partition read from its
   * beginning up to its last stable offset (never waiting for an open transaction).
   */
  static List<RecordSnapshot> readAllCommitted(
      EmbeddedKafkaCluster kafka, String topic, Duration timeout) throws Exception {
    Map<TopicPartition, Long> stable;
    try (Admin admin = kafka.createAdminClient()) {
      stable = endOffsets(admin, topic, IsolationLevel.READ_COMMITTED);
    }
    return ReadCommitted.upTo(kafka, topic, stable, timeout).stream()
        .map(RecordSnapshot::consumed)
        .toList();
  }

  /** Waits until every transaction on {@code topic} is committed or aborted. */
  static void awaitNoOpenTransaction(EmbeddedKafkaCluster kafka, String topic, Duration timeout) {
    try (Admin admin = kafka.createAdminClient()) {
      await(topic + " has no open transaction")
          .atMost(timeout)
          .ignoreExceptions()
          .pollInterval(Duration.ofMillis(200))
          .until(
              () ->
                  endOffsets(admin, topic, IsolationLevel.READ_COMMITTED)
                      .equals(endOffsets(admin, topic, IsolationLevel.READ_UNCOMMITTED)));
    }
  }
}
