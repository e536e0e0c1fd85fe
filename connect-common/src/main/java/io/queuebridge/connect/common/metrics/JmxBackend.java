package io.queuebridge.connect.common.metrics;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.JmxReporter;
import org.apache.kafka.common.metrics.KafkaMetricsContext;
import org.apache.kafka.common.metrics.MetricConfig;
import org.apache.kafka.common.metrics.MetricValueProvider;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.MetricsReporter;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.utils.Time;

/**
 * A task's own metrics registry reported as JMX MBeans on the platform MBean server, with the names
 * a worker with plugin metrics (KIP-877) gives them: domain {@code kafka.connect}, group {@code
 * plugins}, tags {@code connector} and {@code task}.
 */
final class JmxBackend implements TaskMetrics.Backend {
  static final String DOMAIN = "kafka.connect";
  static final String GROUP = "plugins";

  /**
   * The registry's own metric count (group {@code kafka-metrics-count}) is not reported: the
   * worker's MBean of that name is the worker's.
   */
  private static final String EXCLUDE = DOMAIN.replace(".", "\\.") + ":type=kafka-metrics-count.*";

  private final Map<String, String> tags = new LinkedHashMap<>();
  private final Metrics metrics;

  JmxBackend(String connector, int task) {
    tags.put("connector", connector);
    tags.put("task", Integer.toString(task));
    JmxReporter reporter = new JmxReporter();
    reporter.configure(Map.of("metrics.jmx.exclude", EXCLUDE));
    this.metrics =
        new Metrics(
            new MetricConfig(),
            List.<MetricsReporter>of(reporter),
            Time.SYSTEM,
            new KafkaMetricsContext(DOMAIN));
  }

  /** The MBean all of this task's metrics are attributes of. */
  String objectName() {
    StringBuilder name = new StringBuilder(DOMAIN).append(":type=").append(GROUP);
    tags.forEach((k, v) -> name.append(',').append(k).append('=').append(v));
    return name.toString();
  }

  @Override
  public TaskMetrics.Registry registry() {
    return TaskMetrics.Registry.JMX;
  }

  @Override
  public MetricName metricName(String name, String description) {
    return metrics.metricName(name, GROUP, description, tags);
  }

  @Override
  public Sensor addSensor(String name) {
    return metrics.sensor(name);
  }

  @Override
  public void removeSensor(String name) {
    metrics.removeSensor(name);
  }

  @Override
  public void addMetric(MetricName name, MetricValueProvider<?> value) {
    metrics.addMetric(name, value);
  }

  @Override
  public void removeMetric(MetricName name) {
    metrics.removeMetric(name);
  }

  @Override
  public void close() {
    metrics.close(); // unregisters the MBeans
  }
}
