package io.queuebridge.core;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.DeliveryStillRunningException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The manager's periodic loops on an injected, clock-driven scheduler (BEHAVIOUR M-LOOPS, Q-STOP,
 * Q-RET, Q-HEARTBEAT, Q-EPHEMERAL) and where visibility comes from (BEHAVIOUR L-LIMITS).
 */
class ManagerLoopsTest {
  private final MutableClock clock = MutableClock.at("2026-05-01T08:00:00Z");
  private final ManualScheduler loops = new ManualScheduler(clock);
  private final Storage storage = QueueStores.memory();
  private QueueManager manager;

  private QueueManager manager(UnaryOperator<QueueManagerConfig.Builder> config) {
    manager =
        new QueueManager(
            storage,
            config.apply(QueueManagerConfig.builder().clock(clock).scheduler(loops)).build());
    return manager;
  }

  @AfterEach
  void tearDown() {
    if (manager != null) {
      manager.stop();
    }
    storage.close();
  }

  private static PublishRequest message(String topic) {
    return PublishRequest.of(topic, "m".getBytes(UTF_8));
  }

  @Test
  void startSchedulesTheSweepRetentionAndCleanupAndStopCancelsThem() {
    QueueManager m = manager(b -> b);
    assertThat(loops.scheduled()).isEmpty();
    m.start();
    assertThat(loops.scheduled())
        .containsExactly("delivery-sweep", "retention", "consumer-cleanup");
    m.stop();
    assertThat(loops.scheduled()).isEmpty();
    assertThat(m.shutdownComplete()).isTrue();
  }

  @Test
  void retentionRunsEveryRetentionCheckIntervalAndTruncatesBelowTheCommittedOffset()
      throws Exception {
    QueueManager m = manager(b -> b.retentionCheckInterval(Duration.ofMinutes(1)));
    m.createQueue(QueueConfig.durable("q").topics("t").build());
    m.subscribe("q", "", "c1", "g");
    for (int i = 0; i < 3; i++) {
      m.publish(message("t"));
    }
    m.start();
    for (GroupDelivery d : m.consumerGroups().claimBatch("q", "g", "c1", 2)) {
      d.ack();
    }

    loops.advance(Duration.ofSeconds(59));
    assertThat(storage.queues().head("q")).isZero();
    loops.advance(Duration.ofSeconds(1));
    assertThat(storage.queues().head("q")).as("committed offset 2").isEqualTo(2);
  }

  @Test
  void cleanupRemovesStaleConsumersThenExpiresTheIdleEphemeralQueue() {
    List<String> removed = new CopyOnWriteArrayList<>();
    QueueManager m =
        manager(
            b ->
                b.consumerTimeout(Duration.ofMinutes(2))
                    .onConsumerRemoved((q, g, ids) -> removed.add(q + "/" + g + ":" + ids)));
    m.subscribe("eph", "", "worker-1", "");
    m.start();

    loops.advance(Duration.ofMinutes(2));
    assertThat(removed).as("a heartbeat exactly at the cutoff is not stale").isEmpty();
    loops.advance(Duration.ofMinutes(2));
    assertThat(removed).containsExactly("eph/worker:[worker-1]");
    assertThat(m.getQueue("eph").lastConsumerDisconnect()).contains(clock.instant());

    loops.advance(Duration.ofMinutes(4));
    assertThat(m.listQueues()).extracting(QueueConfig::name).containsExactly("eph");
    loops.advance(Duration.ofMinutes(2));
    assertThat(m.listQueues()).as("expired 5 min after the last consumer left").isEmpty();
  }

  @Test
  void aQueuesShortHeartbeatTimeoutRemovesItsSilentMembersLongBeforeTheManagersTimeout() {
    List<String> removed = new CopyOnWriteArrayList<>();
    QueueManager m =
        manager(
            b ->
                b.consumerTimeout(Duration.ofMinutes(2))
                    .onConsumerRemoved((q, g, ids) -> removed.add(q + "/" + g + ":" + ids)));
    m.createQueue(QueueConfig.durable("fast").heartbeatTimeout(Duration.ofSeconds(2)).build());
    m.createQueue(QueueConfig.durable("plain").build());
    m.subscribe("fast", "", "c1", "g");
    m.subscribe("plain", "", "c1", "g");
    m.start();

    loops.advance(Duration.ofSeconds(2));
    assertThat(removed).as("a heartbeat exactly at the cutoff is not stale").isEmpty();
    loops.advance(Duration.ofSeconds(2));
    assertThat(removed)
        .as("the cleanup runs every 2 s now, and 4 s of silence is past the queue's 2 s")
        .containsExactly("fast/g:[c1]");

    loops.advance(Duration.ofMinutes(2).minusSeconds(4));
    assertThat(removed).as("the other queue keeps the manager's 2 min").hasSize(1);
    loops.advance(Duration.ofSeconds(2));
    assertThat(removed).containsExactly("fast/g:[c1]", "plain/g:[c1]");
  }

  @Test
  void aQueueWithAShortHeartbeatTimeoutCreatedAfterStartIsSweptAtItsPaceFromItsFirstMember() {
    List<String> removed = new CopyOnWriteArrayList<>();
    QueueManager m =
        manager(
            b ->
                b.consumerTimeout(Duration.ofMinutes(2))
                    .onConsumerRemoved((q, g, ids) -> removed.add(q + "/" + g + ":" + ids)));
    m.start();
    loops.advance(Duration.ofSeconds(30));
    m.createQueue(QueueConfig.durable("fast").heartbeatTimeout(Duration.ofSeconds(2)).build());
    m.subscribe("fast", "", "c1", "g");

    loops.advance(Duration.ofSeconds(5));
    assertThat(removed).containsExactly("fast/g:[c1]");
  }

  @Test
  void theQueuesDeliveryTimeoutIsTheVisibilityTimeoutByDefault() throws Exception {
    QueueManager m = manager(b -> b);
    m.createQueue(
        QueueConfig.durable("q").topics("t").deliveryTimeout(Duration.ofSeconds(10)).build());
    m.subscribe("q", "", "c1", "g");
    m.subscribe("q", "", "c2", "g");
    m.publish(message("t"));
    assertThat(m.consumerGroups().claimBatch("q", "g", "c1", 1)).hasSize(1);

    clock.advance(Duration.ofSeconds(9));
    assertThat(m.consumerGroups().claimBatch("q", "g", "c2", 1)).isEmpty();
    clock.advance(Duration.ofSeconds(1));
    assertThat(m.consumerGroups().claimBatch("q", "g", "c2", 1)).hasSize(1);
  }

  @Test
  void aPositiveManagerVisibilityTimeoutOverridesEveryQueue() throws Exception {
    QueueManager m = manager(b -> b.visibilityTimeout(Duration.ofSeconds(60)));
    m.createQueue(
        QueueConfig.durable("q").topics("t").deliveryTimeout(Duration.ofSeconds(10)).build());
    m.subscribe("q", "", "c1", "g");
    m.subscribe("q", "", "c2", "g");
    m.publish(message("t"));
    assertThat(m.consumerGroups().claimBatch("q", "g", "c1", 1)).hasSize(1);

    clock.advance(Duration.ofSeconds(59));
    assertThat(m.consumerGroups().claimBatch("q", "g", "c2", 1)).isEmpty();
    clock.advance(Duration.ofSeconds(1));
    assertThat(m.consumerGroups().claimBatch("q", "g", "c2", 1)).hasSize(1);
  }

  @Test
  void metricsReportCaptureGroupsAndDeliveryTogether() throws Exception {
    QueueManager m = manager(b -> b);
    m.createQueue(QueueConfig.durable("q").topics("t").build());
    m.subscribe("q", "", "c1", "g");
    m.publish(message("t"));
    m.publish(message("t"));
    List<GroupDelivery> ds = m.consumerGroups().claimBatch("q", "g", "c1", 2);
    ds.get(0).ack();
    ds.get(1).reject("bad");

    QueueManagerMetrics metrics = m.metrics();
    assertThat(metrics.groups().claimSuccesses()).isEqualTo(2);
    assertThat(metrics.groups().acks()).isEqualTo(1);
    assertThat(metrics.groups().rejects()).isEqualTo(1);
    assertThat(metrics.groups().dlqMoves()).isEqualTo(1);
    assertThat(metrics.groups().pelHighWater()).isEqualTo(2);
    assertThat(metrics.groups().pelSize()).isZero();
    assertThat(metrics.delivery().subscriptions()).isZero();
    assertThat(metrics.captureFailures()).isZero();
  }

  @Test
  void stopWaitsForALoopInProgressAndReportsItUntilItLeavesTheStore() throws Exception {
    RecordingStore store = new RecordingStore();
    try {
      QueueManager m =
          new QueueManager(
              store,
              QueueManagerConfig.builder()
                  .clock(clock)
                  .scheduler(loops)
                  .consumerTimeout(Duration.ofMinutes(1))
                  .deliveryDrainTimeout(Duration.ofMillis(200))
                  .build());
      m.createQueue(QueueConfig.durable("q").build());
      m.subscribe("q", "", "c1", "g");
      m.start();
      RecordingStore.Gate stuck = store.blockGetQueue("q");
      // the stale member's removal reads the queue's config: the cleanup loop blocks there
      Thread loopThread = new Thread(() -> loops.advance(Duration.ofMinutes(2)), "loop-driver");
      loopThread.start();
      await().atMost(Duration.ofSeconds(10)).until(() -> stuck.arrived.get() == 1);

      assertThatThrownBy(m::stop)
          .isInstanceOf(DeliveryStillRunningException.class)
          .hasMessageContaining("did not finish within the drain timeout");
      assertThat(m.shutdownComplete()).isFalse();

      stuck.open();
      loopThread.join(10_000);
      m.stop();
      assertThat(m.shutdownComplete()).isTrue();
    } finally {
      store.unblockAll();
      store.close();
    }
  }
}
