package io.queuebridge.connect.source;

import io.queuebridge.connect.common.TestMetrics;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;

/** The framework boundary for task unit tests: stored offsets and real plugin metrics. */
final class FakeTaskContext implements SourceTaskContext {
  final Map<Map<String, ?>, Map<String, Object>> storedOffsets = new HashMap<>();
  final Metrics metrics = new Metrics();
  private final Map<String, String> configs;

  FakeTaskContext(Map<String, String> configs) {
    this.configs = configs;
  }

  @Override
  public Map<String, String> configs() {
    return configs;
  }

  @Override
  public OffsetStorageReader offsetStorageReader() {
    return new OffsetStorageReader() {
      @Override
      public <T> Map<String, Object> offset(Map<String, T> partition) {
        return storedOffsets.get(partition);
      }

      @Override
      public <T> Map<Map<String, T>, Map<String, Object>> offsets(
          Collection<Map<String, T>> partitions) {
        Map<Map<String, T>, Map<String, Object>> out = new HashMap<>();
        for (Map<String, T> p : partitions) {
          out.put(p, storedOffsets.get(p));
        }
        return out;
      }
    };
  }

  @Override
  public PluginMetrics pluginMetrics() {
    return new PluginMetricsImpl(metrics, Map.of("connector", "test", "task", "0"));
  }

  /** The value of a plugin metric of this task. */
  Object metric(String name) {
    return TestMetrics.value(metrics, name);
  }
}
