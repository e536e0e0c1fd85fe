package io.queuebridge.connect.common.metrics;

import java.util.LinkedHashMap;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.MetricValueProvider;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.Sensor;

/**
 * The worker's plugin metrics (KIP-877). The only class of the plugin that names {@link
 * PluginMetrics}: it is loaded only once {@link TaskMetrics#forTask} has found that the worker has
 * that type, so an older worker never links it.
 */
final class WorkerBackend implements TaskMetrics.Backend {
  private final PluginMetrics metrics;

  private WorkerBackend(PluginMetrics metrics) {
    this.metrics = metrics;
  }

  static WorkerBackend of(Object pluginMetrics) {
    return new WorkerBackend((PluginMetrics) pluginMetrics);
  }

  @Override
  public TaskMetrics.Registry registry() {
    return TaskMetrics.Registry.WORKER;
  }

  @Override
  public MetricName metricName(String name, String description) {
    return metrics.metricName(name, description, new LinkedHashMap<>());
  }

  @Override
  public Sensor addSensor(String name) {
    return metrics.addSensor(name);
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
    // the worker closes its plugin metrics with the task
  }
}
