package io.queuebridge.connect.sink;

import io.queuebridge.connect.common.TestMetrics;
import io.queuebridge.connect.common.metrics.TaskMetrics;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.SharedStores;
import io.queuebridge.core.store.QueueStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTaskContext;

/**
 * What the parts of the sink task work with in their unit tests: a real store ({@code file} by
 * default) in a directory holding the declared stream {@code s}, the sink config, and the task's
 * plugin metrics.
 */
final class SinkFixture implements AutoCloseable {
  final Metrics metrics = new Metrics();
  final PluginMetrics pluginMetrics =
      new PluginMetricsImpl(metrics, new LinkedHashMap<>(Map.of("task", "t")));
  final SinkMetrics sinkMetrics =
      new SinkMetrics(
          TaskMetrics.forTask(
              new FakeSinkTaskContext(pluginMetrics), SinkTaskContext.class, "test", 0));
  final QueueSinkConfig config;
  final SharedStores.Lease lease;

  /**
   * What "now" is for the due times the collector's mapper reads; set before {@link #collector}.
   */
  Clock clock = Clock.systemUTC();

  /**
   * @param props sink keys over {@code queue.name=s}, {@code queue.store.type=file} and {@code
   *     queue.store.path=dir}
   */
  SinkFixture(Path dir, Map<String, String> props) {
    Map<String, String> all = new HashMap<>();
    all.put(QueueSinkConfig.QUEUE_NAME_CONFIG, "s");
    all.put(QueueSinkConfig.STORE_TYPE_CONFIG, "file");
    all.put(QueueSinkConfig.STORE_PATH_CONFIG, dir.toString());
    all.putAll(props);
    config = new QueueSinkConfig(all);
    lease = config.acquireStore();
    lease.manager().declareProtectedStream(config.streamContract());
  }

  SinkFixture(Path dir) {
    this(dir, Map.of());
  }

  QueueManager manager() {
    return lease.manager();
  }

  QueueStore queues() {
    return lease.storage().queues();
  }

  /** A rewinder on {@code context} with the configured backoff, measured by {@code clock}. */
  Rewinder rewinder(SinkTaskContext context, Clock clock) {
    return new Rewinder(context, clock, config.retryBackoff(), manager(), queues());
  }

  /** A collector as the task builds it; errant records go to {@code reporter} (null: they fail). */
  BatchCollector collector(
      Watermarks watermarks, Rewinder rewinder, ErrantRecordReporter reporter) {
    return new BatchCollector(
        config,
        manager(),
        watermarks,
        new RecordMapper(config, clock),
        new ErrantRecords(reporter, sinkMetrics),
        rewinder,
        sinkMetrics);
  }

  /** The value of one of the task's metrics. */
  Object metric(String name) {
    return TestMetrics.value(metrics, name);
  }

  /** Records {@code from} to {@code to} (exclusive) of {@code tp}, bytes keys and values. */
  static List<SinkRecord> records(TopicPartition tp, long from, long to) {
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

  @Override
  public void close() {
    sinkMetrics.close();
    lease.close();
    metrics.close();
  }
}
