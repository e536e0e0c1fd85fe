package io.queuebridge.connect.sink;

import static io.queuebridge.connect.sink.SinkFixture.records;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.RetriableException;
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
    assertThat(writer.pending()).isTrue();
    assertThat(writer.busy()).as("room for one more").isFalse();
    BatchWriter.Outcome outcome = writer.await();
    assertThat(outcome.batch()).isSameAs(batch);
    assertThat(outcome.failure()).isNull();
    assertThat(outcome.failedOn()).isNull();
    assertThat(writer.pending()).isFalse();
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
    writer.submit(batch(3, 5)); // prepared while the first is held
    assertThat(writer.busy()).isTrue();
    assertThat(writer.finished()).as("the writer is held").isFalse();
    assertThatThrownBy(() -> writer.submit(batch(5, 6)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("2 batches are still in flight");

    FlakyStoreProvider.hold.countDown();
    await().atMost(Duration.ofSeconds(10)).until(writer::finished);
    assertThat(writer.await().failure()).isNull();
    assertThat(writer.await().failure()).isNull();
    assertThat(FlakyStoreProvider.BATCHES).hasValue(2);
    assertThat(fixture.queues().tail("s")).isEqualTo(5);
    assertThat(fixture.manager().durableStreamCheckpoints("s"))
        .containsEntry(KafkaCoordinates.checkpointKey("in", 0), "5");
  }

  @Test
  void twoBatchesInFlightReachTheStoreInTheOrderSubmitted() {
    open("file");
    Batch first = batch(0, 4);
    Batch second = batch(4, 7);
    writer.submit(first);
    writer.submit(second);
    assertThat(writer.await().batch()).isSameAs(first);
    assertThat(writer.await().batch()).isSameAs(second);
    List<String> keys = new ArrayList<>();
    for (Message m : fixture.queues().readBatch("s", 0, 100)) {
      keys.add(new String(m.key(), StandardCharsets.UTF_8));
    }
    assertThat(keys).containsExactly("k0", "k1", "k2", "k3", "k4", "k5", "k6");
  }

  @Test
  void aBatchBehindAFailedOneIsNotWrittenAndTheWriterGoesOnOnceBothAreAwaited() {
    open("flaky");
    FlakyStoreProvider.hold = new CountDownLatch(1);
    FlakyStoreProvider.FAIL_BEFORE_APPEND.set(1);
    Batch failing = batch(0, 3);
    Batch behind = batch(3, 5);
    writer.submit(failing);
    writer.submit(behind);
    FlakyStoreProvider.hold.countDown();

    BatchWriter.Outcome first = writer.await();
    assertThat(first.batch()).isSameAs(failing);
    assertThat(first.failure()).isInstanceOf(QueueStoreException.class);
    assertThat(first.skipped()).isFalse();
    BatchWriter.Outcome second = writer.await();
    assertThat(second.batch()).isSameAs(behind);
    assertThat(second.skipped()).isTrue();
    assertThat(second.failure())
        .isInstanceOf(RetriableException.class)
        .hasMessageContaining("a batch before it failed");
    assertThat(fixture.queues().tail("s")).as("neither batch written").isZero();
    assertThat(FlakyStoreProvider.BATCHES).as("the second never reached the store").hasValue(0);

    writer.submit(batch(0, 2)); // the writer goes on once every outcome is out
    assertThat(writer.await().failure()).isNull();
    assertThat(fixture.queues().tail("s")).isEqualTo(2);
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
    assertThat(writer.pending()).isFalse();

    writer.submit(batch(4, 6)); // the writer goes on after a failure
    assertThat(writer.await().failure()).isNull();
  }
}
