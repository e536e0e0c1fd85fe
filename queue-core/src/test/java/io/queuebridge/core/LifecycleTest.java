package io.queuebridge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.CaptureStillRunningException;
import io.queuebridge.core.errors.DurableSyncUnsupportedException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.ConsumerGroupState;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Start and stop (BEHAVIOUR M-START, Q-STOP, F-CAPTURE, Q-EPHEMERAL). */
class LifecycleTest {
  private static final QueueConfig EVENTS =
      QueueConfig.reservedStream("events").topics("orders/#").maxMessageSize(100).build();

  private final MutableClock clock = MutableClock.at("2026-05-01T08:00:00Z");
  private final RecordingStore store = new RecordingStore().durableSync(true);
  private QueueManager manager;

  private QueueManager manager(UnaryOperator<QueueManagerConfig.Builder> config) {
    manager =
        new QueueManager(store, config.apply(QueueManagerConfig.builder().clock(clock)).build());
    return manager;
  }

  @AfterEach
  void tearDown() {
    store.unblockAll();
    if (manager != null) {
      await().atMost(Duration.ofSeconds(10)).until(() -> stopQuietly(manager));
    }
    store.close();
  }

  private static boolean stopQuietly(QueueManager m) {
    try {
      m.stop();
      return m.shutdownComplete();
    } catch (CaptureStillRunningException e) {
      return false;
    }
  }

  // --- start --------------------------------------------------------------------------------

  @Test
  void startCreatesConfiguredQueuesAndTheStoredConfigWins() {
    QueueConfig stored = QueueConfig.durable("orders").topics("stored/#").build();
    store.delegate().createQueue(stored);
    QueueManager m =
        manager(
            b ->
                b.queueConfigs(
                    List.of(
                        QueueConfig.durable("orders").topics("configured/#").build(),
                        QueueConfig.durable("fresh").topics("fresh/#").build())));
    m.start();
    assertThat(m.getQueue("orders")).isEqualTo(stored);
    assertThat(m.getQueue("fresh").topics()).containsExactly("fresh/#");
  }

  @Test
  void startFailsOnContractDriftAndCanBeRetriedOnceFixed() {
    store.delegate().createQueue(EVENTS.toBuilder().maxMessageSize(5).build());
    QueueManager m = manager(b -> b.protectedQueueContracts(List.of(EVENTS)));
    assertThatThrownBy(m::start)
        .isInstanceOf(ProtectedQueueContractDriftException.class)
        .hasMessageContaining("limits.max_message_size");
    assertThat(captureThreads()).isEmpty();

    store.delegate().updateQueue(EVENTS);
    m.start();
    assertThat(captureThreads()).isNotEmpty();
  }

  @Test
  void startFailsWhenContractsExistButTheStoreCannotSync() {
    store.durableSync(false);
    store.delegate().createQueue(EVENTS);
    QueueManager m = manager(b -> b.protectedQueueContracts(List.of(EVENTS)));
    assertThatThrownBy(m::start).isInstanceOf(DurableSyncUnsupportedException.class);
  }

  @Test
  void configuredProtectedQueueIsCreatedAtStartAndValidated() {
    QueueManager m =
        manager(b -> b.queueConfigs(List.of(EVENTS)).protectedQueueContracts(List.of(EVENTS)));
    m.start();
    assertThat(m.getQueue("events")).isEqualTo(EVENTS);
  }

  @Test
  void startDeletesEphemeralQueuesThatExpiredWhileDown() {
    Instant now = clock.instant();
    QueueConfig expired =
        QueueConfig.ephemeral("expired")
            .lastConsumerDisconnect(now.minus(Duration.ofMinutes(6)))
            .build();
    QueueConfig justExpired =
        QueueConfig.ephemeral("just-expired")
            .lastConsumerDisconnect(now.minus(QueueConfig.DEFAULT_EPHEMERAL_EXPIRY))
            .build();
    QueueConfig recent =
        QueueConfig.ephemeral("recent").lastConsumerDisconnect(now.minusSeconds(60)).build();
    QueueConfig neverConsumed = QueueConfig.ephemeral("never-consumed").build();
    QueueConfig durable =
        QueueConfig.durable("durable")
            .lastConsumerDisconnect(now.minus(Duration.ofDays(1)))
            .build();
    for (QueueConfig q : List.of(expired, justExpired, recent, neverConsumed, durable)) {
      store.delegate().createQueue(q);
    }
    store
        .groups()
        .createGroup(ConsumerGroupState.create("expired", "g", "", GroupMode.QUEUE, true, now));

    QueueManager m = manager(b -> b);
    m.start();

    assertThat(m.listQueues())
        .extracting(QueueConfig::name)
        .containsExactlyInAnyOrder("recent", "never-consumed", "durable");
    assertThat(store.calls("deleteQueue"))
        .containsExactlyInAnyOrder("deleteQueue:expired", "deleteQueue:just-expired");
  }

  @Test
  void startTwiceOrAfterStopIsAnError() {
    QueueManager m = manager(b -> b);
    m.start();
    assertThatThrownBy(m::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already started");
    m.stop();
    assertThatThrownBy(m::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("stopped");
  }

  @Test
  void captureWorkersAreNamedDaemonThreads() {
    manager(b -> b.captureWorkers(3)).start();
    assertThat(captureThreads()).hasSize(3).allMatch(Thread::isDaemon);
  }

  // --- stop ---------------------------------------------------------------------------------

  @Test
  void stopIsIdempotent() {
    QueueManager m = manager(b -> b);
    m.start();
    m.stop();
    assertThat(m.shutdownComplete()).isTrue();
    assertThatCode(m::stop).doesNotThrowAnyException();
    assertThat(m.shutdownComplete()).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> captureThreads().isEmpty());
  }

  @Test
  void stopBeforeStartCompletes() {
    QueueManager m = manager(b -> b);
    m.stop();
    assertThat(m.shutdownComplete()).isTrue();
  }

  @Test
  void stopDrainsCapturesAcceptedBeforeIt() {
    QueueManager m = manager(b -> b);
    m.start();
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    for (int i = 0; i < 200; i++) {
      m.publishToMatchingQueues(PublishRequest.of("t", new byte[] {(byte) i}));
    }
    m.stop();
    assertThat(store.messages("a")).hasSize(200);
    assertThat(m.metrics())
        .extracting(QueueManagerMetrics::captureFailures, QueueManagerMetrics::captureDropped)
        .containsExactly(0L, 0L);
  }

  @Test
  void stopWithAStoreStuckInAppendReportsCaptureStillRunning() {
    QueueManager m = manager(b -> b.captureDrainTimeout(Duration.ofMillis(200)));
    m.start();
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    RecordingStore.Gate stuck = store.blockAppends("a");
    m.publishToMatchingQueues(PublishRequest.of("t", new byte[] {1}));
    m.publishToMatchingQueues(PublishRequest.of("t", new byte[] {2}));
    await().atMost(Duration.ofSeconds(10)).until(() -> stuck.arrived.get() == 1);

    assertThatThrownBy(m::stop)
        .isInstanceOf(CaptureStillRunningException.class)
        .hasMessageContaining("1 capture worker(s)");
    assertThat(m.shutdownComplete()).isFalse();
    assertThat(m.metrics().captureDropped()).isEqualTo(1); // the waiting one; not the stuck one

    stuck.open();
    await().atMost(Duration.ofSeconds(10)).until(() -> stopQuietly(m));
    assertThat(m.shutdownComplete()).isTrue();
    assertThat(store.messages("a")).hasSize(1);
  }

  @Test
  void useAfterStopIsAClearError() {
    QueueManager m = manager(b -> b);
    m.createQueue(QueueConfig.durable("a").build());
    m.stop();
    QueueConfig q = QueueConfig.durable("b").build();
    PublishRequest req = PublishRequest.of("t", new byte[] {1});
    List<ThrowingCallable> uses =
        List.of(
            () -> m.createQueue(q),
            () -> m.updateQueue(q),
            () -> m.deleteQueue("a"),
            () -> m.getQueue("a"),
            m::listQueues,
            () -> m.getOrCreateQueue("c"),
            () -> m.publish(req),
            () -> m.publishToMatchingQueues(req),
            () -> m.publishToDurableStream("a", req),
            () -> m.publishBatchToDurableStream("a", List.of(req), Map.of()),
            () -> m.durableStreamCheckpoints("a"),
            m::validateProtectedQueueContracts,
            () -> m.replaceProtectedQueueContracts(List.of()),
            () -> m.declareProtectedStream(EVENTS),
            () -> m.checkProtectedStream(EVENTS));
    for (ThrowingCallable use : uses) {
      assertThatThrownBy(use)
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("queue manager is stopped");
    }
    store.clearCalls();
    assertThat(m.metrics())
        .extracting(QueueManagerMetrics::captureFailures, QueueManagerMetrics::captureDropped)
        .containsExactly(0L, 0L);
    assertThat(m.protectedQueueContracts()).isEmpty();
    assertThat(store.calls()).isEmpty();
  }

  private static List<Thread> captureThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("queuebridge-capture-") && t.isAlive())
        .toList();
  }
}
