package io.queuebridge.connect.sink;

import static io.queuebridge.connect.sink.SinkFixture.records;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.KafkaCoordinates;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BatchWriterTest {
  private static final TopicPartition TP0 = new TopicPartition("in", 0);

  @TempDir Path dir;
  private SinkFixture fixture;
  private BatchWriter writer;

  @AfterEach
  void close() {
    if (FlakyStoreProvider.hold != null) {
      FlakyStoreProvider.hold.countDown(); // never leave the writer waiting
    }
    assertThat(writer.stop()).isTrue();
    fixture.close();
    FlakyStoreProvider.FAIL_AFTER_APPEND.set(0);
    FlakyStoreProvider.BATCHES.set(0);
    FlakyStoreProvider.hold = null;
  }

  private void open(String storeType) {
    fixture = new SinkFixture(dir, Map.of(QueueSinkConfig.STORE_TYPE_CONFIG, storeType));
    writer = new BatchWriter("s", fixture.manager(), fixture.sinkMetrics);
  }

  /** Offsets {@code from} to {@code to} (exclusive) of TP0, collected as the task does. */
  private Batch batch(long from, long to) {
    FakeSinkTaskContext context = new FakeSinkTaskContext(fixture.pluginMetrics, TP0);
    BatchCollector collector =
        fixture.collector(
            new Watermarks(fixture.config, fixture.manager()),
            fixture.rewinder(context, MutableClock.at("2026-01-01T00:00:00Z")),
            null);
    collector.collect(records(TP0, from, to), Map.of());
    return collector.take();
  }

  @Test
  void aBatchIsDurableWithItsWatermarksOnceAwaited() {
    open("file");
    assertThat(writer.await()).as("nothing in flight").isNull();
    Batch batch = batch(0, 5);
    writer.submit(batch);
    assertThat(writer.busy()).isTrue();
    BatchWriter.Outcome outcome = writer.await();
    assertThat(outcome.batch()).isSameAs(batch);
    assertThat(outcome.failure()).isNull();
    assertThat(outcome.failedOn()).isNull();
    assertThat(writer.busy()).isFalse();
    assertThat(fixture.queues().tail("s")).isEqualTo(5);
    assertThat(fixture.manager().durableStreamCheckpoints("s"))
        .containsEntry(KafkaCoordinates.checkpointKey("in", 0), "5");
    assertThat(fixture.metric("records-appended-total")).isEqualTo(5.0);
    assertThat(fixture.metric("batch-size-max")).isEqualTo(5.0);
  }

  @Test
  void submitReturnsAtOnceAndFinishedSaysWhenAwaitWillNotBlock() {
    open("flaky");
    FlakyStoreProvider.hold = new CountDownLatch(1);
    writer.submit(batch(0, 3));
    assertThat(writer.busy()).isTrue();
    assertThat(writer.finished()).as("the writer is held").isFalse();
    assertThatThrownBy(() -> writer.submit(batch(3, 4))).isInstanceOf(IllegalStateException.class);

    FlakyStoreProvider.hold.countDown();
    await().atMost(Duration.ofSeconds(10)).until(writer::finished);
    assertThat(writer.await().failure()).isNull();
    assertThat(FlakyStoreProvider.BATCHES).hasValue(1);
  }

  @Test
  void aFailedBarrierIsTheOutcomeNamingTheQueue() {
    open("flaky");
    FlakyStoreProvider.FAIL_AFTER_APPEND.set(1);
    Batch batch = batch(0, 4);
    writer.submit(batch);
    BatchWriter.Outcome outcome = writer.await();
    assertThat(outcome.batch()).isSameAs(batch);
    assertThat(outcome.failure()).isInstanceOf(QueueStoreException.class);
    assertThat(outcome.failedOn()).isSameAs(batch.queues.get("s"));
    assertThat(outcome.queue()).isEqualTo("s");
    assertThat(writer.busy()).isFalse();

    writer.submit(batch(4, 6)); // the writer goes on after a failure
    assertThat(writer.await().failure()).isNull();
  }
}
