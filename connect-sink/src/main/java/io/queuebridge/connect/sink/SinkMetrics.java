package io.queuebridge.connect.sink;

import io.queuebridge.connect.common.metrics.TaskMetrics;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.Sensor;
import org.apache.kafka.common.metrics.stats.Avg;
import org.apache.kafka.common.metrics.stats.CumulativeSum;
import org.apache.kafka.common.metrics.stats.Max;
import org.apache.kafka.common.metrics.stats.Rate;

/**
 * The sink task's metrics ({@link TaskMetrics}: the worker's plugin metrics where it has them, JMX
 * MBeans of the same names otherwise; tagged with the connector and the task): records and bytes
 * appended (total and rate), records appended with a due time, batch size, durability-barrier
 * latency, records skipped below the watermark, errant records. Removed with the task ({@link
 * #close()}).
 */
final class SinkMetrics {
  private final TaskMetrics metrics;
  private final Sensor records;
  private final Sensor bytes;
  private final Sensor delayed;
  private final Sensor batchSize;
  private final Sensor barrierLatency;
  private final Sensor skipped;
  private final Sensor errant;

  SinkMetrics(TaskMetrics metrics) {
    this.metrics = metrics;
    this.records = metrics.sensor("records-appended");
    records.add(
        name("records-appended-total", "Records appended to the stream."), new CumulativeSum());
    records.add(name("records-appended-rate", "Records appended per second."), new Rate());
    this.bytes = metrics.sensor("bytes-appended");
    bytes.add(
        name("bytes-appended-total", "Bytes (key + value + headers) appended."),
        new CumulativeSum());
    bytes.add(name("bytes-appended-rate", "Bytes appended per second."), new Rate());
    this.delayed = metrics.sensor("records-delayed");
    delayed.add(
        name(
            "records-delayed-total",
            "Records appended with a delay or due time from queue.delay.header or"
                + " queue.deliver.at.header (one already due when written included)."),
        new CumulativeSum());
    this.batchSize = metrics.sensor("batch-size");
    batchSize.add(name("batch-size-avg", "Records per durable batch."), new Avg());
    batchSize.add(name("batch-size-max", "Largest durable batch."), new Max());
    this.barrierLatency = metrics.sensor("barrier-latency");
    barrierLatency.add(
        name("barrier-latency-avg-ms", "Append + durability barrier time per batch, ms."),
        new Avg());
    barrierLatency.add(
        name("barrier-latency-max-ms", "Longest append + durability barrier, ms."), new Max());
    this.skipped = metrics.sensor("records-skipped");
    skipped.add(
        name("records-skipped-total", "Records skipped because the stream already held them."),
        new CumulativeSum());
    this.errant = metrics.sensor("records-errant");
    errant.add(
        name("records-errant-total", "Records reported to the errant record reporter."),
        new CumulativeSum());
  }

  private MetricName name(String name, String description) {
    return metrics.name(name, description);
  }

  void appended(int count, long byteCount, int delayedCount, long nanos) {
    records.record(count);
    bytes.record(byteCount);
    delayed.record(delayedCount);
    batchSize.record(count);
    barrierLatency.record(nanos / 1_000_000.0);
  }

  void skipped() {
    skipped.record(1);
  }

  void errant() {
    errant.record(1);
  }

  void close() {
    metrics.close();
  }
}
