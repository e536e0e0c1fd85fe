package io.queuebridge.connect.common.metrics;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.MetricValueProvider;
import org.apache.kafka.common.metrics.Sensor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connector task's metrics, registered the same way on every Connect worker the plugin runs on.
 *
 * <p>A worker with plugin metrics (KIP-877, Kafka Connect 4.1 and later) gets them through its task
 * context's {@code pluginMetrics()}: the worker tags them with the connector and the task and
 * reports them to every reporter it has (JMX, and any {@code metric.reporters}). An older worker
 * has no such method; there the task registers the same metrics itself as JMX MBeans under the same
 * names, {@code kafka.connect:type=plugins,connector=<name>,task=<index>}, so that a dashboard
 * reading them works on every worker version. What the older worker does not give: the worker's
 * other {@code metric.reporters} do not see them.
 *
 * <p>Which of the two a task uses is decided once, at {@link #forTask}, by looking at the worker's
 * task context type: no call that the worker does not have is ever made.
 *
 * <p>Thread-safe: sensors and the registries behind them are.
 */
public final class TaskMetrics implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TaskMetrics.class);

  /** The KIP-877 method of {@code SinkTaskContext} and {@code SourceTaskContext}. */
  static final String PLUGIN_METRICS_METHOD = "pluginMetrics";

  /** The type {@code pluginMetrics()} returns, on a worker that has it. */
  static final String PLUGIN_METRICS_TYPE = "org.apache.kafka.common.metrics.PluginMetrics";

  /** Where the metrics went. */
  public enum Registry {
    /** The worker's plugin metrics (KIP-877). */
    WORKER,
    /** MBeans of the task's own, on the platform MBean server (workers before Connect 4.1). */
    JMX
  }

  private final Backend backend;
  private final String sensorPrefix;
  private final Set<String> sensors = new LinkedHashSet<>();
  private final List<MetricName> metrics = new ArrayList<>();
  private boolean closed;

  private TaskMetrics(Backend backend, String connector, int task) {
    this.backend = backend;
    // a worker's plugin metrics name sensors in the worker's one registry, without the task's tags:
    // two tasks asking for "records" would share one sensor and count each other's records
    this.sensorPrefix = connector + "-" + task + ".";
  }

  /**
   * The metrics of one task.
   *
   * @param context the task's context as the worker gave it ({@code SinkTaskContext} or {@code
   *     SourceTaskContext})
   * @param contextType the context's API interface ({@code SinkTaskContext.class} or {@code
   *     SourceTaskContext.class}), as the running worker loaded it
   * @param connector the connector's name (the {@code connector} tag on a worker without plugin
   *     metrics)
   * @param task the task's index (the {@code task} tag there)
   */
  public static TaskMetrics forTask(
      Object context, Class<?> contextType, String connector, int task) {
    Object pluginMetrics = workerPluginMetrics(context, contextType);
    if (pluginMetrics != null) {
      log.debug("Task {}-{} registers its metrics through the worker (KIP-877)", connector, task);
      return new TaskMetrics(WorkerBackend.of(pluginMetrics), connector, task);
    }
    JmxBackend jmx = new JmxBackend(connector, task);
    log.info(
        "This Connect worker has no plugin metrics (KIP-877, Connect 4.1 and later): task {}-{}"
            + " registers its metrics as JMX MBeans {}",
        connector,
        task,
        jmx.objectName());
    return new TaskMetrics(jmx, connector, task);
  }

  /** Metrics of the task's own as JMX MBeans, whatever the worker has (tests). */
  static TaskMetrics jmx(String connector, int task) {
    return new TaskMetrics(new JmxBackend(connector, task), connector, task);
  }

  /**
   * The worker's {@code PluginMetrics} for this task, or null when the worker has none: its context
   * type declares no {@code pluginMetrics()} returning that type, or the call is unsupported.
   */
  static Object workerPluginMetrics(Object context, Class<?> contextType) {
    Method method;
    try {
      method = contextType.getMethod(PLUGIN_METRICS_METHOD);
    } catch (NoSuchMethodException e) {
      return null;
    }
    if (!method.getReturnType().getName().equals(PLUGIN_METRICS_TYPE)) {
      return null;
    }
    try {
      return method.invoke(context);
    } catch (InvocationTargetException e) {
      if (e.getCause() instanceof UnsupportedOperationException
          || e.getCause() instanceof LinkageError) {
        return null; // a context that declares the method without implementing it
      }
      throw new IllegalStateException(
          "the worker's " + contextType.getSimpleName() + ".pluginMetrics() failed", e.getCause());
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(
          "cannot call " + contextType.getName() + ".pluginMetrics()", e);
    }
  }

  /** Where this task's metrics are registered. */
  public Registry registry() {
    return backend.registry();
  }

  /** A metric name of this task (the worker's or this registry's tags added). */
  public MetricName name(String name, String description) {
    return backend.metricName(name, description);
  }

  /**
   * A new sensor of this task, removed with {@link #close()}; its name is this task's own (another
   * task's sensor of the same name is another sensor).
   */
  public synchronized Sensor sensor(String name) {
    checkOpen();
    String own = sensorPrefix + name;
    Sensor sensor = backend.addSensor(own);
    sensors.add(own);
    return sensor;
  }

  /** Adds a metric (a gauge, say) of this task, removed with {@link #close()}. */
  public synchronized void add(MetricName name, MetricValueProvider<?> value) {
    checkOpen();
    backend.addMetric(name, value);
    metrics.add(name);
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("the task's metrics are closed");
    }
  }

  /** Removes every sensor and metric of this task; idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      sensors.forEach(backend::removeSensor);
      metrics.forEach(backend::removeMetric);
    } finally {
      backend.close();
    }
  }

  /** A registry of metrics: the worker's plugin metrics, or the task's own. */
  interface Backend extends AutoCloseable {
    Registry registry();

    MetricName metricName(String name, String description);

    Sensor addSensor(String name);

    void removeSensor(String name);

    void addMetric(MetricName name, MetricValueProvider<?> value);

    void removeMetric(MetricName name);

    @Override
    void close();
  }
}
