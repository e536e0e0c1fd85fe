package io.queuebridge.connect.common;

import org.apache.kafka.common.metrics.Metrics;

/** Reads the connectors' plugin metrics in their unit tests. */
public final class TestMetrics {
  private TestMetrics() {}

  /**
   * The value of the metric {@code name} (any tags) in {@code metrics}.
   *
   * @throws AssertionError if there is none
   */
  public static Object value(Metrics metrics, String name) {
    return metrics.metrics().entrySet().stream()
        .filter(e -> e.getKey().name().equals(name))
        .findFirst()
        .map(e -> e.getValue().metricValue())
        .orElseThrow(() -> new AssertionError("no metric " + name));
  }
}
