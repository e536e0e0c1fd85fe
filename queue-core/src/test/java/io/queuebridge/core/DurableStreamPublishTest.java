package io.queuebridge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.config.RetentionPolicy;
import io.queuebridge.core.errors.DurableSyncUnsupportedException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException.FieldMismatch;
import io.queuebridge.core.errors.QueueFullException;
import io.queuebridge.core.errors.QueueMessageTooLargeException;
import io.queuebridge.core.errors.QueueNotDurableException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueNotProtectedException;
import io.queuebridge.core.errors.QueueNotReservedException;
import io.queuebridge.core.errors.QueueNotStreamException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The exact durable publish (BEHAVIOUR Q-EXACT): every precondition is checked, in order, before
 * anything is appended; the recording store shows that nothing was.
 */
class DurableStreamPublishTest {
  private static final String STREAM = "events";
  private static final QueueConfig CONTRACT =
      QueueConfig.reservedStream(STREAM)
          .topics("orders/#")
          .maxMessageSize(100)
          .messageTtl(Duration.ZERO)
          .build();

  private final MutableClock clock = MutableClock.at("2026-03-01T12:00:00Z");
  private final RecordingStore store = new RecordingStore().durableSync(true);
  private final RecordingScheduler scheduler = new RecordingScheduler();
  private final QueueManager manager = newManager();

  {
    manager.deliveryScheduler(scheduler);
  }

  /** A manager on {@link #store} with the contract and the clock. */
  private QueueManager newManager() {
    return new QueueManager(
        store,
        QueueManagerConfig.builder()
            .clock(clock)
            .protectedQueueContracts(List.of(CONTRACT))
            .build());
  }

  @AfterEach
  void tearDown() {
    Thread.interrupted();
    manager.stop();
    store.close();
  }

  private void createStream() {
    manager.createQueue(CONTRACT);
    store.clearCalls();
    scheduler.clear();
  }

  private static PublishRequest request(int valueBytes) {
    return PublishRequest.builder("orders/1").value(new byte[valueBytes]).clientId("sink").build();
  }

  private void assertRefusedBeforeAppend(
      ThrowingCallable publish, Class<? extends Throwable> error) {
    assertThatThrownBy(publish).isInstanceOf(error);
    assertThat(store.appends()).as("appends reaching the store").isEmpty();
    if (store.delegate().listQueues().stream().anyMatch(q -> q.name().equals(STREAM))) {
      assertThat(store.messages(STREAM)).isEmpty();
    }
    assertThat(scheduler.calls()).doesNotContain("schedule:" + STREAM);
  }

  // --- success ------------------------------------------------------------------------------

  @Test
  void exactPublishIsOneAppendAndSyncForThatQueueOnlyEvenWithOverlappingPatterns()
      throws Exception {
    manager.createQueue(QueueConfig.durable("overlap").topics("orders/#").build());
    manager.createQueue(QueueConfig.durable("all").topics("#").build());
    createStream();

    assertThat(manager.publishToDurableStream(STREAM, request(10))).isZero();
    assertThat(manager.publishToDurableStream(STREAM, request(10))).isEqualTo(1);

    assertThat(store.appends()).containsExactly("appendAndSync:events", "appendAndSync:events");
    assertThat(store.messages("overlap")).isEmpty();
    assertThat(store.messages("all")).isEmpty();
    Message stored = store.messages(STREAM).get(0);
    assertThat(stored.topic()).isEqualTo("orders/1");
    assertThat(stored.properties()).containsExactly(Map.entry(MessageProperties.CLIENT_ID, "sink"));
    assertThat(stored.createdAt()).isEqualTo(clock.instant());
    assertThat(stored.expiresAt()).isNull();
    assertThat(scheduler.calls()).endsWith("schedule:events", "schedule:events");
  }

  // --- one test per failing precondition, in the order of BEHAVIOUR Q-EXACT -----------------

  @Test
  void exactPublishToAnUnprotectedQueueIsRefusedBeforeAppend() {
    manager.createQueue(QueueConfig.reservedStream("plain").build());
    store.clearCalls();
    assertRefusedBeforeAppend(
        () -> manager.publishToDurableStream("plain", request(1)),
        QueueNotProtectedException.class);
    assertThat(store.calls()).as("not even a config read").isEmpty();
  }

  @Test
  void exactPublishToAMissingProtectedQueueIsQueueNotFoundBeforeAppend() {
    assertThatThrownBy(() -> manager.publishToDurableStream(STREAM, request(1)))
        .isInstanceOf(QueueNotFoundException.class)
        .hasMessageContaining(STREAM);
    assertThat(store.appends()).isEmpty();
  }

  @Test
  void durablePublishRefusesDriftBeforeAppend() {
    createStream();
    store
        .delegate()
        .updateQueue(
            CONTRACT.toBuilder()
                .retention(new RetentionPolicy(Duration.ofHours(1), 0, 0))
                .maxMessageSize(200)
                .build());
    assertRefusedBeforeAppend(
        () -> manager.publishToDurableStream(STREAM, request(1)),
        ProtectedQueueContractDriftException.class);
    assertThatThrownBy(() -> manager.publishToDurableStream(STREAM, request(1)))
        .isInstanceOfSatisfying(
            ProtectedQueueContractDriftException.class,
            e ->
                assertThat(e.mismatches())
                    .containsExactly(
                        new FieldMismatch("retention.max_age", "PT1H", "PT0S"),
                        new FieldMismatch("limits.max_message_size", "200", "100")))
        .hasMessageContaining("retention.max_age: stored PT1H, configured PT0S");
  }

  @Test
  void exactPublishToANonReservedStoredQueueIsRefusedAsDriftBeforeAppend() {
    createStream();
    store.delegate().updateQueue(CONTRACT.toBuilder().reserved(false).build());
    assertRefusedBeforeAppend(
        () -> manager.publishToDurableStream(STREAM, request(1)),
        ProtectedQueueContractDriftException.class);
  }

  @Test
  void storedConfigThatIsNotReservedIsQueueNotReserved() {
    // Step 4 is defence in depth: reachable only if the contract comparison let it through.
    assertThatThrownBy(
            () -> QueueManager.checkExactShape(CONTRACT.toBuilder().reserved(false).build()))
        .isInstanceOf(QueueNotReservedException.class)
        .hasMessageContaining(STREAM);
  }

  @Test
  void storedConfigThatIsNotAStreamIsQueueNotStream() {
    assertThatThrownBy(
            () ->
                QueueManager.checkExactShape(CONTRACT.toBuilder().type(QueueType.CLASSIC).build()))
        .isInstanceOf(QueueNotStreamException.class)
        .hasMessageContaining(STREAM);
  }

  @Test
  void storedConfigThatIsNotDurableIsQueueNotDurable() {
    assertThatThrownBy(
            () ->
                QueueManager.checkExactShape(
                    CONTRACT.toBuilder()
                        .durable(false)
                        .expiresAfter(Duration.ofMinutes(1))
                        .build()))
        .isInstanceOf(QueueNotDurableException.class)
        .hasMessageContaining(STREAM);
  }

  @Test
  void exactPublishOnAStoreWithoutDurableSyncIsRefusedBeforeAppend() {
    createStream();
    store.durableSync(false);
    assertRefusedBeforeAppend(
        () -> manager.publishToDurableStream(STREAM, request(1)),
        DurableSyncUnsupportedException.class);
  }

  @Test
  void oversizedExactPublishIsRefusedBeforeAppend() {
    createStream();
    assertRefusedBeforeAppend(
        () -> manager.publishToDurableStream(STREAM, request(101)),
        QueueMessageTooLargeException.class);
    assertThatThrownBy(() -> manager.publishToDurableStream(STREAM, request(101)))
        .hasMessageContaining("101")
        .hasMessageContaining("100");
  }

  @Test
  void interruptedExactPublishWritesNothing() {
    createStream();
    Thread.currentThread().interrupt();
    assertRefusedBeforeAppend(
        () -> manager.publishToDurableStream(STREAM, request(1)), InterruptedException.class);
    assertThat(Thread.currentThread().isInterrupted()).isFalse();
  }

  @Test
  void preconditionsAreCheckedInTheSpecifiedOrder() {
    // Not protected wins over missing.
    assertThatThrownBy(() -> manager.publishToDurableStream("ghost", request(1)))
        .isInstanceOf(QueueNotProtectedException.class);
    createStream();
    // Drift wins over a store without durable sync and an oversized message.
    store.delegate().updateQueue(CONTRACT.toBuilder().topics("x").build());
    store.durableSync(false);
    assertThatThrownBy(() -> manager.publishToDurableStream(STREAM, request(500)))
        .isInstanceOf(ProtectedQueueContractDriftException.class);
    // Missing durable sync wins over an oversized message.
    store.delegate().updateQueue(CONTRACT);
    assertThatThrownBy(() -> manager.publishToDurableStream(STREAM, request(500)))
        .isInstanceOf(DurableSyncUnsupportedException.class);
    assertThat(store.appends()).isEmpty();
  }

  // --- failures after the checks ------------------------------------------------------------

  @Test
  void failedDurableAppendIsThrownAndNotScheduled() {
    createStream();
    QueueStoreException failed = new QueueStoreException(STREAM, "fsync failed", null);
    store.failAppends(STREAM, () -> failed);
    assertThatThrownBy(() -> manager.publishToDurableStream(STREAM, request(1))).isSameAs(failed);
    assertThat(scheduler.calls()).doesNotContain("schedule:" + STREAM);
  }

  @Test
  void unreadableStoredConfigIsWrappedAsGetExactStream() {
    createStream();
    IllegalStateException bug = new IllegalStateException("bug");
    store.failGetQueue(STREAM, () -> bug);
    assertThatThrownBy(() -> manager.publishToDurableStream(STREAM, request(1)))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("get exact stream events")
        .hasCause(bug);
    assertThat(store.appends()).isEmpty();
  }

  // --- batch --------------------------------------------------------------------------------

  @Test
  void batchIsOneBarrierWithItsCheckpointsAndReturnsTheFirstOffset() throws Exception {
    createStream();
    manager.publishToDurableStream(STREAM, request(1));
    long first =
        manager.publishBatchToDurableStream(
            STREAM, List.of(request(1), request(2), request(3)), Map.of("orders-0", "17"));
    assertThat(first).isEqualTo(1);
    manager.publishBatchToDurableStream(STREAM, List.of(request(4)), Map.of("orders-1", "5"));
    assertThat(store.appends())
        .containsExactly(
            "appendAndSync:events", "appendBatchAndSync:events", "appendBatchAndSync:events");
    assertThat(store.messages(STREAM))
        .extracting(m -> m.valueUnsafe().length)
        .containsExactly(1, 1, 2, 3, 4);
    assertThat(store.messages(STREAM)).extracting(Message::id).doesNotHaveDuplicates();
    assertThat(manager.durableStreamCheckpoints(STREAM))
        .containsOnly(Map.entry("orders-0", "17"), Map.entry("orders-1", "5"));
  }

  @Test
  void aPreparedBatchWritesNothingUntilPublishedIsStampedWhenPreparedAndIsWrittenOnce()
      throws Exception {
    createStream();
    Instant prepared = clock.instant();
    DurableBatch batch =
        manager.prepareBatchDurably(
            STREAM, List.of(request(1), request(2)), Map.of("orders-0", "2"));
    assertThat(batch.queue()).isEqualTo(STREAM);
    assertThat(batch.size()).isEqualTo(2);
    assertThat(store.appends()).as("preparing writes nothing").isEmpty();
    assertThat(store.messages(STREAM)).isEmpty();
    assertThat(manager.durableStreamCheckpoints(STREAM)).isEmpty();

    clock.advance(Duration.ofMinutes(1));
    assertThat(manager.publishPrepared(batch)).isZero();
    assertThat(store.appends()).containsExactly("appendBatchAndSync:events");
    assertThat(store.messages(STREAM))
        .extracting(Message::createdAt)
        .containsExactly(prepared, prepared);
    assertThat(manager.durableStreamCheckpoints(STREAM)).containsOnly(Map.entry("orders-0", "2"));
    assertThat(scheduler.calls()).endsWith("schedule:events");

    assertThatThrownBy(() -> manager.publishPrepared(batch))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("batch of 2 messages for queue events was published before");
    assertThat(store.messages(STREAM)).as("not appended twice").hasSize(2);
  }

  @Test
  void aPreparedBatchIsWrittenOnlyByTheManagerThatPreparedIt() {
    createStream();
    DurableBatch batch = manager.prepareBatchDurably(STREAM, List.of(request(1)), Map.of());
    QueueManager other = newManager();
    try {
      assertRefusedBeforeAppend(() -> other.publishPrepared(batch), IllegalArgumentException.class);
      assertThatThrownBy(() -> other.publishPrepared(batch))
          .hasMessageContaining("prepared by another queue manager");
    } finally {
      other.stop();
    }
  }

  @Test
  void aClassicQueuesDepthIsCheckedWhenThePreparedBatchIsWritten() throws Exception {
    manager.createQueue(QueueConfig.durable("jobs").maxDepth(3).build());
    DurableBatch batch =
        manager.prepareBatchDurably("jobs", List.of(request(1), request(1)), Map.of("p", "1"));
    manager.publishTo("jobs", request(1));
    manager.publishTo("jobs", request(1));
    store.clearCalls();
    assertThatThrownBy(() -> manager.publishPrepared(batch))
        .isInstanceOf(QueueFullException.class)
        .hasMessageContaining("jobs");
    assertThat(store.appends()).isEmpty();
    assertThat(store.messages("jobs")).hasSize(2);
    assertThat(manager.durableStreamCheckpoints("jobs")).isEmpty();
  }

  @Test
  void batchChecksEveryMessageSizeBeforeWritingAnything() {
    createStream();
    assertRefusedBeforeAppend(
        () ->
            manager.publishBatchToDurableStream(
                STREAM, List.of(request(1), request(2), request(101)), Map.of("p", "1")),
        QueueMessageTooLargeException.class);
    assertThat(manager.durableStreamCheckpoints(STREAM)).isEmpty();
  }

  @Test
  void batchRefusesDriftBeforeAppend() {
    createStream();
    store.delegate().updateQueue(CONTRACT.toBuilder().messageTtl(Duration.ofDays(1)).build());
    assertRefusedBeforeAppend(
        () -> manager.publishBatchToDurableStream(STREAM, List.of(request(1)), Map.of()),
        ProtectedQueueContractDriftException.class);
  }

  @Test
  void batchToAnUnprotectedQueueIsRefusedBeforeAppend() {
    assertRefusedBeforeAppend(
        () -> manager.publishBatchToDurableStream("plain", List.of(request(1)), Map.of()),
        QueueNotProtectedException.class);
  }

  @Test
  void batchOnAStoreWithoutDurableSyncIsRefusedBeforeAppend() {
    createStream();
    store.durableSync(false);
    assertRefusedBeforeAppend(
        () -> manager.publishBatchToDurableStream(STREAM, List.of(request(1)), Map.of()),
        DurableSyncUnsupportedException.class);
  }

  @Test
  void interruptedBatchWritesNothing() {
    createStream();
    Thread.currentThread().interrupt();
    assertRefusedBeforeAppend(
        () -> manager.publishBatchToDurableStream(STREAM, List.of(request(1)), Map.of("p", "1")),
        InterruptedException.class);
    assertThat(manager.durableStreamCheckpoints(STREAM)).isEmpty();
  }

  @Test
  void emptyBatchIsRejected() {
    createStream();
    assertRefusedBeforeAppend(
        () -> manager.publishBatchToDurableStream(STREAM, List.of(), Map.of("p", "1")),
        IllegalArgumentException.class);
  }

  @Test
  void checkpointsOfAnUnknownQueueAreQueueNotFound() {
    assertThatThrownBy(() -> manager.durableStreamCheckpoints("ghost"))
        .isInstanceOf(QueueNotFoundException.class);
  }

  @Test
  void requestValueIsDecoupledFromTheCallersArray() throws Exception {
    createStream();
    byte[] value = "abc".getBytes(StandardCharsets.UTF_8);
    PublishRequest req = PublishRequest.builder("orders/1").value(value).build();
    value[0] = 'X';
    manager.publishToDurableStream(STREAM, req);
    assertThat(store.messages(STREAM).get(0).value())
        .isEqualTo("abc".getBytes(StandardCharsets.UTF_8));
  }
}
