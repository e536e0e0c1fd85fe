package io.queuebridge.core;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.errors.GroupModeMismatchException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueNotStreamException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Manager-level subscribe and unsubscribe (BEHAVIOUR Q-SUB). */
class SubscribeTest {
  private final MutableClock clock = MutableClock.at("2026-05-01T08:00:00Z");
  private final Storage storage = QueueStores.memory();
  private final RecordingScheduler scheduler = new RecordingScheduler();
  private final QueueManager manager =
      new QueueManager(storage, QueueManagerConfig.builder().clock(clock).build());

  SubscribeTest() {
    manager.deliveryScheduler(scheduler);
  }

  @AfterEach
  void tearDown() {
    manager.stop();
    storage.close();
  }

  @Test
  void subscribeCreatesAnEphemeralQueueWithTheQueueRootFilter() {
    ConsumerGroupState g = manager.subscribe("jobs", "", "worker-7", "");
    QueueConfig q = manager.getQueue("jobs");
    assertThat(q.durable()).isFalse();
    assertThat(q.topics()).containsExactly("$queue/jobs/#");
    assertThat(g.id()).as("queue-mode default group: the client id up to '-'").isEqualTo("worker");
    assertThat(g.mode()).isEqualTo(GroupMode.QUEUE);
    assertThat(g.autoCommit()).isTrue();
    assertThat(g.consumers()).containsOnlyKeys("worker-7");
    assertThat(scheduler.calls()).contains("schedule:jobs");
  }

  @Test
  void aClientHeartbeatKeepsEveryMembershipOfTheClientFromGoingStale() {
    manager.subscribe("a", "", "worker-7", "");
    manager.subscribe("b", "", "worker-7", "w");
    manager.subscribe("b", "", "idle-1", "w");
    clock.advance(Duration.ofMinutes(1));
    assertThat(manager.heartbeat("worker-7")).isEqualTo(2);
    clock.advance(Duration.ofMinutes(1).plusSeconds(30)); // idle-1 is now past consumerTimeout
    // the manager's heartbeat sweep, run now instead of waiting for its loop
    ((GroupCoordinator) manager.consumerGroups()).removeStaleConsumers(clock.instant());
    assertThat(manager.consumerGroups().group("a", "worker").orElseThrow().consumers())
        .containsOnlyKeys("worker-7");
    assertThat(manager.consumerGroups().group("b", "w").orElseThrow().consumers())
        .containsOnlyKeys("worker-7");
  }

  @Test
  void subscribeKeepsAnExistingQueueAndQualifiesTheGroupByItsPattern() {
    manager.createQueue(QueueConfig.durable("jobs").topics("jobs/#").build());
    ConsumerGroupState g = manager.subscribe("jobs", "eu/+", "c1", "billing");
    assertThat(g.id()).isEqualTo("billing@eu/+");
    assertThat(g.pattern()).isEqualTo("eu/+");
    assertThat(manager.getQueue("jobs").durable()).isTrue();
  }

  @Test
  void subscribeExistingRefusesAMissingQueueAndCreatesNothing() {
    assertThatThrownBy(() -> manager.subscribeExisting("nope", "", "c1", "g"))
        .isInstanceOf(QueueNotFoundException.class)
        .hasMessageContaining("nope");
    assertThat(manager.listQueues()).isEmpty();
  }

  @Test
  void aStreamCursorConvertsAClassicQueueWhenSubscribingButNotWhenSubscribingExisting() {
    manager.createQueue(QueueConfig.durable("a").build());
    manager.createQueue(QueueConfig.durable("b").build());
    CursorOption stream = CursorOption.earliest(GroupMode.STREAM);

    assertThatThrownBy(() -> manager.subscribeExisting("a", "", "reader-1", "", stream))
        .isInstanceOf(QueueNotStreamException.class);
    assertThat(manager.getQueue("a").isStream()).isFalse();

    ConsumerGroupState g = manager.subscribe("b", "", "reader-1", "", stream);
    assertThat(manager.getQueue("b").isStream()).isTrue();
    assertThat(g.id()).as("stream-mode default group: the whole client id").isEqualTo("reader-1");
    assertThat(g.mode()).isEqualTo(GroupMode.STREAM);
  }

  @Test
  void aRefusedStreamConversionIsLoggedAndTheJoinGoesOn() {
    QueueConfig events =
        QueueConfig.reservedStream("events").topics("e/#").maxMessageSize(100).build();
    QueueConfig classic = QueueConfig.durable("events").reserved(true).topics("e/#").build();
    storage.queues().createQueue(classic);
    QueueManager protectedManager =
        new QueueManager(
            storage,
            QueueManagerConfig.builder()
                .clock(clock)
                .protectedQueueContracts(List.of(events))
                .build());
    try {
      ConsumerGroupState g =
          protectedManager.subscribe(
              "events", "", "reader", "", CursorOption.earliest(GroupMode.STREAM));
      assertThat(g.mode()).isEqualTo(GroupMode.STREAM);
      assertThat(protectedManager.getQueue("events").isStream()).isFalse();
    } finally {
      protectedManager.stop();
    }
  }

  @Test
  void cursorPositionsMoveTheGroupsSharedCursor() throws Exception {
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    for (int i = 0; i < 5; i++) {
      manager.publish(PublishRequest.of("t", new byte[] {(byte) i}));
    }
    assertThat(manager.subscribe("q", "", "c1", "g", CursorOption.latest(GroupMode.QUEUE)).cursor())
        .isEqualTo(5);
    assertThat(
            manager
                .subscribe("q", "", "c2", "g", CursorOption.atOffset(GroupMode.QUEUE, 99))
                .cursor())
        .as("clamped to the tail")
        .isEqualTo(5);
    assertThat(
            manager.subscribe("q", "", "c3", "g", CursorOption.earliest(GroupMode.QUEUE)).cursor())
        .isZero();
    assertThat(manager.subscribe("q", "", "c4", "g").cursor()).as("resume").isZero();
  }

  @Test
  void autoCommitIsAppliedOnlyWhenTheGroupIsCreated() {
    manager.createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
    CursorOption manual = CursorOption.earliest(GroupMode.STREAM).withAutoCommit(false);
    assertThat(manager.subscribe("s", "", "r1", "g", manual).autoCommit()).isFalse();
    CursorOption auto = CursorOption.earliest(GroupMode.STREAM).withAutoCommit(true);
    assertThat(manager.subscribe("s", "", "r2", "g", auto).autoCommit()).isFalse();
  }

  @Test
  void joiningAGroupInTheOtherModeIsAModeMismatch() {
    manager.createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
    manager.subscribe("s", "", "c1", "g");
    assertThatThrownBy(
            () -> manager.subscribe("s", "", "c2", "g", CursorOption.resume(GroupMode.STREAM)))
        .isInstanceOf(GroupModeMismatchException.class);
  }

  @Test
  void unsubscribeLeavesTheDefaultGroupOfEitherModeAndMarksTheEphemeralQueueIdle() {
    manager.subscribe("eph", "", "reader-1", "", CursorOption.earliest(GroupMode.STREAM));
    assertThat(manager.getQueue("eph").lastConsumerDisconnect()).isEmpty();
    scheduler.clear();

    assertThat(manager.unsubscribe("eph", "", "reader-1", null))
        .as("the stream-mode default group is found without naming it")
        .isTrue();
    assertThat(manager.consumerGroups().group("eph", "reader-1").orElseThrow().consumers())
        .isEmpty();
    assertThat(manager.getQueue("eph").lastConsumerDisconnect()).contains(clock.instant());
    assertThat(scheduler.calls()).containsExactly("schedule:eph");

    assertThat(manager.unsubscribe("eph", "", "reader-1", null)).as("no longer a member").isFalse();
    assertThat(manager.unsubscribe("unknown", "", "x", "g")).as("unknown queue").isFalse();
  }

  @Test
  void resubscribingClearsTheEphemeralDisconnectTime() {
    manager.subscribe("eph", "", "c-1", "");
    manager.unsubscribe("eph", "", "c-1", "");
    assertThat(manager.getQueue("eph").lastConsumerDisconnect()).isPresent();
    manager.subscribe("eph", "", "c-1", "");
    assertThat(manager.getQueue("eph").lastConsumerDisconnect()).isEmpty();
  }

  @Test
  void unsubscribeKeepsPendingEntriesForRedeliveryAfterTheVisibilityTimeout() throws Exception {
    manager.createQueue(
        QueueConfig.durable("q").topics("t").deliveryTimeout(Duration.ofSeconds(10)).build());
    manager.subscribe("q", "", "c1", "g");
    manager.subscribe("q", "", "c2", "g");
    manager.publish(PublishRequest.of("t", "m".getBytes(UTF_8)));
    List<GroupDelivery> first = manager.consumerGroups().claimBatch("q", "g", "c1", 10);
    assertThat(first).hasSize(1);
    manager.unsubscribe("q", "", "c1", "g");

    assertThat(manager.consumerGroups().claimBatch("q", "g", "c2", 10)).isEmpty();
    clock.advance(Duration.ofSeconds(10));
    List<GroupDelivery> again = manager.consumerGroups().claimBatch("q", "g", "c2", 10);
    assertThat(again).extracting(GroupDelivery::offset).containsExactly(first.get(0).offset());
    assertThat(again.get(0).deliveryCount()).isEqualTo(2);
  }

  @Test
  void subscribingAfterStopIsAClearError() {
    manager.stop();
    assertThatThrownBy(() -> manager.subscribe("q", "", "c", "g"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("queue manager is stopped");
    assertThatThrownBy(() -> manager.unsubscribe("q", "", "c", "g"))
        .isInstanceOf(IllegalStateException.class);
  }
}
