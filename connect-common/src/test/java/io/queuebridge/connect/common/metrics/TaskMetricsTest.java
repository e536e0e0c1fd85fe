package io.queuebridge.connect.common.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.management.ManagementFactory;
import java.lang.reflect.Proxy;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.common.metrics.stats.CumulativeSum;
import org.apache.kafka.connect.sink.SinkTaskContext;
import org.junit.jupiter.api.Test;

class TaskMetricsTest {
  private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();

  /** A task context type of a worker before Connect 4.1: no {@code pluginMetrics()}. */
  interface OldTaskContext {
    Map<String, String> configs();
  }

  /** A context type that declares {@code pluginMetrics()} but does not implement it. */
  interface UnsupportedTaskContext {
    PluginMetrics pluginMetrics();
  }

  @Test
  void aWorkerWithPluginMetricsGetsTheMetrics() throws Exception {
    Metrics registry = new Metrics();
    PluginMetrics plugin =
        new PluginMetricsImpl(registry, new LinkedHashMap<>(Map.of("connector", "c", "task", "3")));
    SinkTaskContext context = proxy(SinkTaskContext.class, plugin);

    TaskMetrics metrics = TaskMetrics.forTask(context, SinkTaskContext.class, "c", 3);
    try {
      assertThat(metrics.registry()).isEqualTo(TaskMetrics.Registry.WORKER);
      Sensor sensor = metrics.sensor("records");
      sensor.add(metrics.name("records-total", "Records."), new CumulativeSum());
      sensor.record(5);
      assertThat(value(registry, "records-total")).isEqualTo(5.0);
      assertThat(registry.metrics().keySet())
          .filteredOn(n -> n.name().equals("records-total"))
          .singleElement()
          .satisfies(n -> assertThat(n.tags()).containsEntry("connector", "c"));
    } finally {
      metrics.close();
    }
    assertThat(registry.metrics().keySet()).noneMatch(n -> n.name().equals("records-total"));
  }

  @Test
  void twoTasksOnOneWorkersPluginMetricsCountOnlyTheirOwnRecords() {
    Metrics worker = new Metrics();
    TaskMetrics[] tasks = new TaskMetrics[2];
    for (int t = 0; t < 2; t++) {
      PluginMetrics plugin =
          new PluginMetricsImpl(
              worker, new LinkedHashMap<>(Map.of("connector", "c", "task", Integer.toString(t))));
      tasks[t] =
          TaskMetrics.forTask(proxy(SinkTaskContext.class, plugin), SinkTaskContext.class, "c", t);
    }
    try {
      Sensor zero = tasks[0].sensor("records");
      zero.add(tasks[0].name("records-total", "Records."), new CumulativeSum());
      Sensor one = tasks[1].sensor("records");
      one.add(tasks[1].name("records-total", "Records."), new CumulativeSum());
      zero.record(2);
      one.record(5);
      assertThat(worker.metrics().entrySet())
          .filteredOn(e -> e.getKey().name().equals("records-total"))
          .extracting(e -> e.getKey().tags().get("task") + "=" + e.getValue().metricValue())
          .containsExactlyInAnyOrder("0=2.0", "1=5.0");
    } finally {
      tasks[0].close();
      tasks[1].close();
    }
  }

  @Test
  void aWorkerWithoutPluginMetricsGetsJmxBeansOfTheSameName() throws Exception {
    OldTaskContext context = proxy(OldTaskContext.class, null);
    ObjectName bean = new ObjectName("kafka.connect:type=plugins,connector=old-sink,task=1");

    TaskMetrics metrics = TaskMetrics.forTask(context, OldTaskContext.class, "old-sink", 1);
    try {
      assertThat(metrics.registry()).isEqualTo(TaskMetrics.Registry.JMX);
      Sensor sensor = metrics.sensor("records");
      sensor.add(metrics.name("records-total", "Records."), new CumulativeSum());
      long[] lag = {7};
      metrics.add(metrics.name("lag", "Lag."), (Gauge<Long>) (config, now) -> lag[0]);
      sensor.record(2);
      sensor.record(3);

      assertThat(SERVER.getAttribute(bean, "records-total")).isEqualTo(5.0);
      assertThat(SERVER.getAttribute(bean, "lag")).isEqualTo(7L);
      lag[0] = 9;
      assertThat(SERVER.getAttribute(bean, "lag")).isEqualTo(9L);
      assertThat(
              SERVER.queryNames(new ObjectName("kafka.connect:type=kafka-metrics-count,*"), null))
          .as("the task's registry does not report its own metric count")
          .isEmpty();
    } finally {
      metrics.close();
    }
    assertThat(SERVER.isRegistered(bean)).as("unregistered with the task").isFalse();
    assertThatThrownBy(() -> metrics.sensor("late"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }

  @Test
  void twoTasksOfOneConnectorInOneWorkerHaveABeanEach() throws Exception {
    try (TaskMetrics a = TaskMetrics.jmx("two", 0);
        TaskMetrics b = TaskMetrics.jmx("two", 1)) {
      a.sensor("records").add(a.name("records-total", "Records."), new CumulativeSum());
      b.sensor("records").add(b.name("records-total", "Records."), new CumulativeSum());
      assertThat(
              SERVER.queryNames(new ObjectName("kafka.connect:type=plugins,connector=two,*"), null))
          .extracting(n -> n.getKeyProperty("task"))
          .containsExactlyInAnyOrder("0", "1");
    }
  }

  @Test
  void aContextThatDeclaresButDoesNotImplementPluginMetricsFallsBackToJmx() {
    UnsupportedTaskContext context =
        (UnsupportedTaskContext)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {UnsupportedTaskContext.class},
                (p, m, args) -> {
                  throw new UnsupportedOperationException("not on this worker");
                });
    try (TaskMetrics metrics = TaskMetrics.forTask(context, UnsupportedTaskContext.class, "u", 0)) {
      assertThat(metrics.registry()).isEqualTo(TaskMetrics.Registry.JMX);
    }
  }

  private static <T> T proxy(Class<T> type, Object pluginMetrics) {
    return type.cast(
        Proxy.newProxyInstance(
            TaskMetricsTest.class.getClassLoader(),
            new Class<?>[] {type},
            (p, m, args) -> {
              if (m.getName().equals("pluginMetrics")) {
                return pluginMetrics;
              }
              throw new UnsupportedOperationException(m.getName());
            }));
  }

  private static Object value(Metrics metrics, String name) {
    return metrics.metrics().entrySet().stream()
        .filter(e -> e.getKey().name().equals(name))
        .findFirst()
        .orElseThrow()
        .getValue()
        .metricValue();
  }
}
