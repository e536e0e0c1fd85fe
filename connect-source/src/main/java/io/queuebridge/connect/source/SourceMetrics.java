package io.queuebridge.connect.source;

import io.queuebridge.connect.common.metrics.TaskMetrics;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.Gauge;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.CumulativeSum;
import org.apache.kafka.common.metrics.stats.Rate;

/**
 * The source task's metrics ({@link TaskMetrics}: the worker's plugin metrics where it has them,
 * JMX MBeans of the same names otherwise; tagged with the connector and the task):
 *
 * <ul>
 *   <li>{@code records-polled-total} / {@code -rate}: records handed to Connect;
 *   <li>{@code records-committed-total}: records Kafka accepted (or Connect dropped) and that were
 *       acknowledged in {@code commitRecord};
 *   <li>{@code lag}: messages of the task's queues not yet acknowledged (streams: tail minus the
 *       accepted prefix; classic queues: the group's lag — in shared mode every task reports the
 *       whole group's);
 *   <li>{@code in-flight} / {@code in-flight-bytes}: classic-queue messages claimed and not yet
 *       acknowledged;
 *   <li>{@code claim-renewals-total}, {@code claims-lost-total}: claims renewed, and claims found
 *       taken away (renewal came too late, or the message was settled elsewhere);
 *   <li>{@code dlq-moves-total}: poison messages dead-lettered;
 *   <li>{@code records-skipped-total}: expired stream messages, and poison messages skipped under
 *       {@code errors.tolerance=all}.
 * </ul>
 *
 * Thread-safe (sensors are). {@link #close()} removes them with the task.
 */
final class SourceMetrics implements AutoCloseable {
  private final TaskMetrics metrics;
  private final Sensor polled;
  // commitRecord runs on the producer's network thread: a counter, not a sensor (no lock, no clock)
  private final LongAdder committed = new LongAdder();
  private final Sensor renewals;
  private final Sensor claimsLost;
  private final Sensor dlqMoves;
  private final Sensor skipped;

  SourceMetrics(
      TaskMetrics metrics, LongSupplier lag, LongSupplier inFlight, LongSupplier inFlightBytes) {
    this.metrics = metrics;
    this.polled = metrics.sensor("records-polled");
    polled.add(name("records-polled-total", "Records handed to Connect."), new CumulativeSum());
    polled.add(name("records-polled-rate", "Records handed to Connect per second."), new Rate());
    gauge(
        "records-committed-total",
        "Records acknowledged after Kafka accepted them (or Connect dropped them).",
        committed::sum);
    this.renewals = metrics.sensor("claim-renewals");
    renewals.add(
        name("claim-renewals-total", "Claims of in-flight classic-queue messages renewed."),
        new CumulativeSum());
    this.claimsLost = metrics.sensor("claims-lost");
    claimsLost.add(
        name("claims-lost-total", "In-flight claims found taken away when renewing or acking."),
        new CumulativeSum());
    this.dlqMoves = metrics.sensor("dlq-moves");
    dlqMoves.add(name("dlq-moves-total", "Poison messages dead-lettered."), new CumulativeSum());
    this.skipped = metrics.sensor("records-skipped");
    skipped.add(
        name("records-skipped-total", "Expired or tolerated poison stream messages skipped."),
        new CumulativeSum());
    gauge("lag", "Messages of the task's queues not yet acknowledged.", lag);
    gauge("in-flight", "Classic-queue messages claimed and not yet acknowledged.", inFlight);
    gauge(
        "in-flight-bytes",
        "Bytes of classic-queue messages claimed and not yet acknowledged.",
        inFlightBytes);
  }

  private MetricName name(String name, String description) {
    return metrics.name(name, description);
  }

  private void gauge(String name, String description, LongSupplier value) {
    metrics.add(
        name(name, description),
        (Gauge<Long>)
            (config, now) -> {
              try {
                return value.getAsLong();
              } catch (RuntimeException e) {
                return -1L; // the store is gone or failing: say so without throwing at a reporter
              }
            });
  }

  void polled(int n) {
    polled.record(n);
  }

  void committed() {
    committed.increment();
  }

  void renewed(int n) {
    renewals.record(n);
  }

  void claimsLost(int n) {
    claimsLost.record(n);
  }

  void dlqMove() {
    dlqMoves.record(1);
  }

  void skipped() {
    skipped.record(1);
  }

  @Override
  public void close() {
    metrics.close();
  }
}
