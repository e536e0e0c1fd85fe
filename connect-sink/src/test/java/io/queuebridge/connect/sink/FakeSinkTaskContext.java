package io.queuebridge.connect.sink;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkTaskContext;

/**
 * Connect's sink task context (the framework boundary), reduced to what the task uses; records
 * rewinds, pauses and timeouts, and answers with a settable errant record reporter.
 */
class FakeSinkTaskContext implements SinkTaskContext {
  final Map<TopicPartition, Long> rewinds = new HashMap<>();
  final Set<TopicPartition> paused = new HashSet<>();
  final Set<TopicPartition> assignment;
  long timeoutMs = -1;

  /** What {@link #errantRecordReporter} answers; null (no reporter) unless a test sets one. */
  ErrantRecordReporter reporter;

  private final PluginMetrics pluginMetrics;

  FakeSinkTaskContext(PluginMetrics pluginMetrics, TopicPartition... assigned) {
    this.pluginMetrics = pluginMetrics;
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
  public void pause(TopicPartition... partitions) {
    paused.addAll(List.of(partitions));
  }

  @Override
  public void resume(TopicPartition... partitions) {
    List.of(partitions).forEach(paused::remove);
  }

  @Override
  public void requestCommit() {}

  @Override
  public ErrantRecordReporter errantRecordReporter() {
    return reporter;
  }

  @Override
  public PluginMetrics pluginMetrics() {
    return pluginMetrics;
  }
}
