package io.queuebridge.connect.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.KafkaCoordinates;
import io.queuebridge.core.Message;
import io.queuebridge.core.SharedStores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTaskContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sink task's exactly-once mechanics against a real file store, with Connect's task context
 * (the framework boundary) replaced by a recording fake.
 */
class QueueSinkTaskTest {
  private static final TopicPartition TP0 = new TopicPartition("in", 0);
  private static final TopicPartition TP1 = new TopicPartition("in", 1);

  @TempDir Path dir;
  private final Metrics metrics = new Metrics();
  private final List<QueueSinkTask> tasks = new ArrayList<>();

  @AfterEach
  void stopTasks() {
    tasks.forEach(QueueSinkTask::stop);
    metrics.close();
    FlakyStoreProvider.FAIL_AFTER_APPEND.set(0);
  }

  private Map<String, String> props(String storeType) {
    Map<String, String> p = new HashMap<>();
    p.put(QueueSinkConfig.QUEUE_NAME_CONFIG, "s");
    p.put(QueueSinkConfig.STORE_TYPE_CONFIG, storeType);
    p.put(QueueSinkConfig.STORE_PATH_CONFIG, dir.toString());
    return p;
  }

  private QueueSinkTask start(FakeContext context, String storeType) {
    QueueSinkTask task = new QueueSinkTask();
    task.initialize(context);
    task.start(props(storeType));
    tasks.add(task);
    return task;
  }

  private static List<SinkRecord> records(TopicPartition tp, long from, long to) {
    List<SinkRecord> out = new ArrayList<>();
    for (long o = from; o < to; o++) {
      out.add(
          new SinkRecord(
              tp.topic(),
              tp.partition(),
              Schema.OPTIONAL_BYTES_SCHEMA,
              ("k" + o).getBytes(StandardCharsets.UTF_8),
              Schema.OPTIONAL_BYTES_SCHEMA,
              (tp.partition() + "-" + o).getBytes(StandardCharsets.UTF_8),
              o));
    }
    return out;
  }

  private List<Message> stream() {
    try (SharedStores.Lease lease = SharedStores.acquire("file", Map.of("path", dir.toString()))) {
      var q = lease.storage().queues();
      return q.readBatch("s", q.head("s"), 10_000);
    }
  }

  private static Set<String> coordinates(List<Message> messages) {
    Set<String> out = new HashSet<>();
    for (Message m : messages) {
      assertThat(
              out.add(
                  m.properties().get(KafkaCoordinates.PARTITION)
                      + "@"
                      + m.properties().get(KafkaCoordinates.OFFSET)))
          .as("duplicate %s", m)
          .isTrue();
    }
    return out;
  }

  @Test
  void openRewindsEachPartitionToTheStoredWatermark() {
    FakeContext first = new FakeContext(TP0, TP1);
    QueueSinkTask task = start(first, "file");
    task.open(List.of(TP0, TP1));
    assertThat(first.rewinds).isEmpty();
    task.put(records(TP0, 0, 10));
    task.put(records(TP1, 0, 3));
    task.stop();
    tasks.remove(task);

    FakeContext second = new FakeContext(TP0, TP1);
    start(second, "file").open(List.of(TP0, TP1));
    assertThat(second.rewinds).containsExactlyInAnyOrderEntriesOf(Map.of(TP0, 10L, TP1, 3L));
  }

  @Test
  void recordsBelowTheWatermarkAreSkippedSoARedeliveryWritesNothingTwice() {
    FakeContext context = new FakeContext(TP0);
    QueueSinkTask task = start(context, "file");
    task.open(List.of(TP0));
    task.put(records(TP0, 0, 10));
    task.put(records(TP0, 5, 15)); // Kafka redelivers 5..9 (e.g. offsets not yet committed)
    assertThat(coordinates(stream())).hasSize(15);

    QueueSinkTask restarted = start(new FakeContext(TP0), "file");
    restarted.open(List.of(TP0));
    restarted.put(records(TP0, 0, 20)); // an old committed offset: everything again
    assertThat(coordinates(stream())).hasSize(20);
  }

  @Test
  void preCommitReportsOnlyWhatIsDurable() {
    FakeContext context = new FakeContext(TP0, TP1);
    QueueSinkTask task = start(context, "file");
    task.open(List.of(TP0, TP1));
    Map<TopicPartition, OffsetAndMetadata> current = new LinkedHashMap<>();
    current.put(TP0, new OffsetAndMetadata(50));
    current.put(TP1, new OffsetAndMetadata(50));
    assertThat(task.preCommit(current)).isEmpty();
    task.put(records(TP0, 0, 7));
    assertThat(task.preCommit(current)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(7)));
  }

  @Test
  void aFailedBarrierThatAppendedIsNotDuplicatedWhenConnectRetriesTheBatch() {
    FakeContext context = new FakeContext(TP0);
    QueueSinkTask task = start(context, "flaky");
    task.open(List.of(TP0));
    task.put(records(TP0, 0, 5));
    FlakyStoreProvider.FAIL_AFTER_APPEND.set(1);
    List<SinkRecord> batch = records(TP0, 5, 10);
    assertThatThrownBy(() -> task.put(batch)).isInstanceOf(RetriableException.class);
    assertThat(context.timeoutMs).isEqualTo(QueueSinkConfig.RETRY_BACKOFF_MS_DEFAULT);
    assertThat(task.preCommit(Map.of(TP0, new OffsetAndMetadata(10))))
        .containsExactly(Map.entry(TP0, new OffsetAndMetadata(5)));

    task.put(batch); // Connect redelivers the same batch after the backoff
    task.put(records(TP0, 10, 12));
    task.stop();
    tasks.remove(task);
    assertThat(coordinates(stream())).hasSize(12);
  }

  /** Connect's task context, reduced to what the task uses; records rewinds and timeouts. */
  private final class FakeContext implements SinkTaskContext {
    final Map<TopicPartition, Long> rewinds = new HashMap<>();
    final Set<TopicPartition> assignment;
    long timeoutMs = -1;
    private final PluginMetrics pluginMetrics =
        new PluginMetricsImpl(metrics, new LinkedHashMap<>(Map.of("task", "t" + tasks.size())));

    FakeContext(TopicPartition... assigned) {
      this.assignment = Set.of(assigned);
    }

    @Override
    public Map<String, String> configs() {
      return Map.of();
    }

    @Override
    public void offset(Map<TopicPartition, Long> offsets) {
      rewinds.putAll(offsets);
    }

    @Override
    public void offset(TopicPartition tp, long offset) {
      rewinds.put(tp, offset);
    }

    @Override
    public void timeout(long timeoutMs) {
      this.timeoutMs = timeoutMs;
    }

    @Override
    public Set<TopicPartition> assignment() {
      return assignment;
    }

    @Override
    public void pause(TopicPartition... partitions) {}

    @Override
    public void resume(TopicPartition... partitions) {}

    @Override
    public void requestCommit() {}

    @Override
    public PluginMetrics pluginMetrics() {
      return pluginMetrics;
    }
  }
}
