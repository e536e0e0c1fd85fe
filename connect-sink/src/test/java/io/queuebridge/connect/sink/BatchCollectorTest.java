package io.queuebridge.connect.sink;

import static io.queuebridge.connect.sink.SinkFixture.records;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.PublishRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BatchCollectorTest {
  private static final TopicPartition TP0 = new TopicPartition("in", 0);
  private static final TopicPartition TP1 = new TopicPartition("in", 1);

  @TempDir Path dir;
  private SinkFixture fixture;
  private FakeSinkTaskContext context;
  private Watermarks watermarks;
  private Rewinder rewinder;
  private final List<SinkRecord> reported = new ArrayList<>();
  private final List<Throwable> reportedErrors = new ArrayList<>();

  @AfterEach
  void close() {
    fixture.close();
  }

  /** A collector over {@code fixture}; with {@code tolerant} errant records are reported. */
  private BatchCollector collector(SinkFixture f, boolean tolerant) {
    fixture = f;
    context = new FakeSinkTaskContext(f.pluginMetrics, TP0, TP1);
    watermarks = new Watermarks(f.config, f.manager());
    rewinder = f.rewinder(context, MutableClock.at("2026-01-01T00:00:00Z"));
    ErrantRecordReporter reporter =
        (record, error) -> {
          reported.add(record);
          reportedErrors.add(error);
          return CompletableFuture.completedFuture(null);
        };
    return f.collector(watermarks, rewinder, tolerant ? reporter : null);
  }

  @Test
  void recordsBelowTheWatermarkAreSkippedAndCounted() {
    BatchCollector collector = collector(new SinkFixture(dir), false);
    watermarks.of("s").put(TP0, 5L);
    collector.collect(records(TP0, 0, 10), Map.of());
    Batch batch = collector.take();
    assertThat(batch.records).isEqualTo(5);
    assertThat(batch.queues.get("s").requests).hasSize(5);
    assertThat(batch.queues.get("s").next).containsExactly(Map.entry(TP0, 10L));
    assertThat(batch.first).as("where a failure rewinds to").containsExactly(Map.entry(TP0, 0L));
    assertThat(batch.seen).containsExactly(Map.entry(TP0, 10L));
    assertThat(fixture.metric("records-skipped-total")).isEqualTo(5.0);
    assertThat(collector.isEmpty()).isTrue();
  }

  @Test
  void putsAreCollectedIntoOneBatchUntilTaken() {
    BatchCollector collector = collector(new SinkFixture(dir), false);
    assertThat(collector.isEmpty()).isTrue();
    assertThat(collector.take()).isNull();
    collector.collect(records(TP0, 0, 3), Map.of());
    collector.collect(records(TP1, 0, 2), Map.of());
    collector.collect(records(TP0, 3, 4), Map.of());
    assertThat(collector.full()).isFalse();
    Batch batch = collector.take();
    assertThat(batch.records).isEqualTo(6);
    assertThat(batch.seen).containsExactly(Map.entry(TP0, 4L), Map.entry(TP1, 2L));
    assertThat(batch.bytes).isEqualTo(batch.queues.get("s").bytes).isPositive();
  }

  @Test
  void aBatchOfMaxWaitingRecordsIsFull() {
    BatchCollector collector = collector(new SinkFixture(dir), false);
    collector.collect(records(TP0, 0, BatchCollector.MAX_WAITING_RECORDS - 1), Map.of());
    assertThat(collector.full()).isFalse();
    collector.collect(
        records(TP0, BatchCollector.MAX_WAITING_RECORDS - 1, BatchCollector.MAX_WAITING_RECORDS),
        Map.of());
    assertThat(collector.full()).isTrue();
  }

  @Test
  void recordsAtOrAboveAPendingRewindAreLeftOut() {
    BatchCollector collector = collector(new SinkFixture(dir), false);
    collector.collect(records(TP0, 0, 10), Map.of(TP0, 3L));
    Batch batch = collector.take();
    assertThat(batch.records).isEqualTo(3);
    assertThat(batch.seen).containsExactly(Map.entry(TP0, 3L));
  }

  @Test
  void aClassicQueuesBatchStopsAtItsMaxDepthAndTheRecordsBeyondAreRewound() {
    SinkFixture f = new SinkFixture(dir, Map.of(QueueSinkConfig.QUEUE_ROUTING_CONFIG, "matching"));
    f.manager().createQueue(QueueConfig.durable("work").topics("in").maxDepth(10).build());
    BatchCollector collector = collector(f, false);
    List<SinkRecord> put = new ArrayList<>(records(TP0, 0, 25));
    put.addAll(records(TP1, 0, 1));
    collector.collect(put, Map.of());
    assertThat(collector.full()).as("capped: hand over now").isTrue();
    Batch batch = collector.take();
    assertThat(batch.capped).isTrue();
    assertThat(batch.queues.get("work").requests).hasSize(10);
    assertThat(batch.seen).containsExactly(Map.entry(TP0, 10L));
    assertThat(rewinder.applyRewinds())
        .as("from the first record that does not fit, in every partition")
        .containsExactlyInAnyOrderEntriesOf(Map.of(TP0, 10L, TP1, 0L));
    assertThat(context.rewinds).containsExactlyInAnyOrderEntriesOf(Map.of(TP0, 10L, TP1, 0L));
  }

  @Test
  void aRecordOverTheMaximumSizeFailsTheTaskWithoutTolerance() {
    BatchCollector collector =
        collector(
            new SinkFixture(dir, Map.of(QueueSinkConfig.QUEUE_MAX_MESSAGE_BYTES_CONFIG, "4")),
            false);
    assertThatThrownBy(() -> collector.collect(records(TP0, 0, 1), Map.of()))
        .isInstanceOf(ConnectException.class)
        .hasMessageContaining("in-0@0")
        .hasMessageContaining("exceeds the maximum message size 4 of queue 's'")
        .hasMessageContaining("errors.tolerance=all");
  }

  @Test
  void underToleranceAnErrantRecordIsReportedAndTheWatermarkPassesIt() {
    BatchCollector collector =
        collector(
            new SinkFixture(dir, Map.of(QueueSinkConfig.QUEUE_MAX_MESSAGE_BYTES_CONFIG, "4")),
            true);
    collector.collect(records(TP0, 0, 2), Map.of());
    Batch batch = collector.take();
    assertThat(reported)
        .extracting(SinkRecord::kafkaOffset)
        .as("both too large")
        .containsExactly(0L, 1L);
    assertThat(batch.records).isZero();
    assertThat(batch.queues.get("s").requests).isEmpty();
    assertThat(batch.queues.get("s").next).containsExactly(Map.entry(TP0, 2L));
    assertThat(batch.seen).containsExactly(Map.entry(TP0, 2L));
    assertThat(fixture.metric("records-errant-total")).isEqualTo(2.0);
  }

  private static void delayHeader(SinkRecord record, String value) {
    record.headers().addBytes("delay-ms", value.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aRecordWithAMalformedDelayIsErrantAndTheOthersAreCollectedWithTheirDelays() {
    BatchCollector collector =
        collector(
            new SinkFixture(dir, Map.of(QueueSinkConfig.DELAY_HEADER_CONFIG, "delay-ms")), true);
    List<SinkRecord> put = records(TP0, 0, 4);
    delayHeader(put.get(0), "2000");
    delayHeader(put.get(1), "soon");
    delayHeader(put.get(3), "0");
    collector.collect(put, Map.of());
    Batch batch = collector.take();
    assertThat(reported).extracting(SinkRecord::kafkaOffset).containsExactly(1L);
    assertThat(reportedErrors)
        .singleElement()
        .asString()
        .contains("record in-0@1: header 'delay-ms' (queue.delay.header) = 'soon'")
        .contains("expected the delay in milliseconds");
    assertThat(batch.queues.get("s").requests)
        .extracting(PublishRequest::delay)
        .containsExactly(Duration.ofSeconds(2), null, null);
    assertThat(batch.queues.get("s").next)
        .as("the watermark passes the errant record")
        .containsExactly(Map.entry(TP0, 4L));
    assertThat(batch.records).isEqualTo(3);
  }

  @Test
  void withoutToleranceAMalformedDelayFailsTheTaskNamingRecordHeaderAndValueOnce() {
    BatchCollector collector =
        collector(
            new SinkFixture(dir, Map.of(QueueSinkConfig.DELAY_HEADER_CONFIG, "delay-ms")), false);
    List<SinkRecord> put = records(TP0, 0, 3);
    delayHeader(put.get(2), "-5");
    assertThatThrownBy(() -> collector.collect(put, Map.of()))
        .isInstanceOf(ConnectException.class)
        .hasMessageStartingWith(
            "cannot write record in-0@2: header 'delay-ms' (queue.delay.header) = '-5' is"
                + " negative; expected the delay in milliseconds")
        .hasMessageContaining("errors.tolerance=all");
    assertThat(collector.take().queues.get("s").requests)
        .as("the records before it stay collected")
        .hasSize(2);
  }

  @Test
  void aDelayOneTargetQueueRefusesMakesTheRecordErrantForEveryTargetAtMappingTime() {
    SinkFixture f =
        new SinkFixture(
            dir,
            Map.of(
                QueueSinkConfig.QUEUE_ROUTING_CONFIG,
                "matching",
                QueueSinkConfig.DELAY_HEADER_CONFIG,
                "delay-ms"));
    f.manager()
        .createQueue(
            QueueConfig.durable("minute").topics("in").maxDelay(Duration.ofMinutes(1)).build());
    f.manager().createQueue(QueueConfig.durable("all").topics("#").build());
    BatchCollector collector = collector(f, true);
    List<SinkRecord> put = records(TP0, 0, 3);
    delayHeader(put.get(0), "60000");
    delayHeader(put.get(1), "60001"); // "all" would take it (7 days), "minute" would not
    collector.collect(put, Map.of());
    Batch batch = collector.take();
    assertThat(reported).extracting(SinkRecord::kafkaOffset).containsExactly(1L);
    assertThat(reportedErrors)
        .singleElement()
        .asString()
        .contains("= '60001': a delay beyond the maxDelay of queue 'minute'")
        .contains("expected at most PT1M (60000 ms)");
    for (String queue : List.of("minute", "all")) {
      assertThat(batch.queues.get(queue).requests)
          .as(queue)
          .extracting(PublishRequest::delay)
          .containsExactly(Duration.ofMinutes(1), null);
      assertThat(batch.queues.get(queue).next).containsExactly(Map.entry(TP0, 3L));
    }
  }

  @Test
  void dropForgetsTheCollectedRecordsAndSaysWhereTheyStarted() {
    BatchCollector collector = collector(new SinkFixture(dir), false);
    assertThat(collector.drop()).isEmpty();
    collector.collect(records(TP0, 4, 8), Map.of());
    collector.collect(records(TP1, 2, 3), Map.of());
    assertThat(collector.drop()).containsOnly(Map.entry(TP0, 4L), Map.entry(TP1, 2L));
    assertThat(collector.isEmpty()).isTrue();
  }
}
