package io.queuebridge.core.internal.group;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.DlqConfig;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.config.RetentionPolicy;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.errors.CommitOffsetOnlyForStreamModeException;
import io.queuebridge.core.errors.ConsumerNotFoundException;
import io.queuebridge.core.errors.DeliveryAlreadySettledException;
import io.queuebridge.core.errors.GroupModeMismatchException;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.InvalidOffsetException;
import io.queuebridge.core.errors.MessageNotPendingException;
import io.queuebridge.core.errors.PelFullException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.group.GroupMetrics;
import io.queuebridge.core.group.GroupSettings;
import io.queuebridge.core.group.RemovedConsumers;
import io.queuebridge.core.group.StreamBatch;
import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.MessageState;
import io.queuebridge.core.message.TimestampType;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The consumer-group rules (BEHAVIOUR Q-GROUP, Q-CURSOR, Q-SUB to Q-DLQ, Q-RET, Q-EPHEMERAL,
 * Q-HEARTBEAT, Q-METRICS), on the memory store.
 */
class GroupCoordinatorTest {
  private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");
  private static final Duration VISIBILITY = Duration.ofSeconds(30);

  private final MutableClock clock = new MutableClock(T0);
  private final Storage storage = QueueStores.memory();
  private final DurableQueueStore store = storage.queues();
  private GroupCoordinator groups = coordinator(GroupSettings.DEFAULTS);

  @AfterEach
  void close() {
    storage.close();
  }

  private GroupCoordinator coordinator(GroupSettings settings) {
    return GroupCoordinator.builder(storage).clock(clock).settings(settings).build();
  }

  private void createQueue(QueueConfig config) {
    store.createQueue(config);
  }

  private void createQueue(String name) {
    createQueue(QueueConfig.durable(name).build());
  }

  private long append(String queue, String topic, String value) {
    return store.append(
        queue,
        Message.builder()
            .topic(topic)
            .value(value.getBytes(UTF_8))
            .createdAt(clock.instant())
            .build());
  }

  private long append(String queue, String value) {
    return append(queue, "$queue/" + queue, value);
  }

  private void appendAll(String queue, int n) {
    for (int i = 0; i < n; i++) {
      append(queue, "m" + i);
    }
  }

  private ConsumerGroupState joinQueue(String queue, String group, String consumer) {
    return groups.join(queue, "", group, consumer, CursorOption.resume(GroupMode.QUEUE));
  }

  private ConsumerGroupState joinStream(String queue, String group, String consumer) {
    return groups.join(queue, "", group, consumer, CursorOption.resume(GroupMode.STREAM));
  }

  private List<GroupDelivery> claim(String queue, String group, String consumer, int limit) {
    return groups.claimBatch(queue, group, consumer, limit);
  }

  private static List<Long> offsets(List<GroupDelivery> ds) {
    return ds.stream().map(GroupDelivery::offset).toList();
  }

  private static String text(GroupDelivery d) {
    return new String(d.message().value(), UTF_8);
  }

  private ConsumerGroupState state(String queue, String group) {
    return groups.group(queue, group).orElseThrow();
  }

  private List<Message> deadLetters(String dlq) {
    return store.readBatch(dlq, 0, 1000);
  }

  @Nested
  class Membership {
    @Test
    void effectiveGroupIdQualifiesTheGroupWithItsPattern() {
      assertThat(GroupCoordinator.effectiveGroupId("g", "")).isEqualTo("g");
      assertThat(GroupCoordinator.effectiveGroupId("g", null)).isEqualTo("g");
      assertThat(GroupCoordinator.effectiveGroupId("g", "eu/#")).isEqualTo("g@eu/#");
    }

    @Test
    void defaultGroupIsTheClientPrefixInQueueModeAndTheFullIdInStreamMode() {
      assertThat(GroupCoordinator.defaultGroupId("worker-7", GroupMode.QUEUE)).isEqualTo("worker");
      assertThat(GroupCoordinator.defaultGroupId("worker", GroupMode.QUEUE)).isEqualTo("worker");
      assertThat(GroupCoordinator.defaultGroupId("-x", GroupMode.QUEUE)).isEmpty();
      assertThat(GroupCoordinator.defaultGroupId("worker-7", GroupMode.STREAM))
          .isEqualTo("worker-7");
    }

    @Test
    void joinWithoutGroupIdUsesTheDefaultGroupAndRefusesAnEmptyOne() {
      createQueue("q");
      assertThat(groups.join("q", "eu/#", null, "worker-7", null).id()).isEqualTo("worker@eu/#");
      assertThatThrownBy(() -> groups.join("q", "", "", "-x", null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("'-x'");
    }

    @Test
    void joinCreatesTheGroupAtOffsetZeroNotAtTheHead() {
      createQueue("q");
      appendAll("q", 5);
      store.truncate("q", 3);
      ConsumerGroupState g = joinQueue("q", "g", "c1");
      assertThat(g.cursor()).isZero();
      assertThat(g.committed()).isZero();
      assertThat(g.mode()).isEqualTo(GroupMode.QUEUE);
      assertThat(g.consumers()).containsKey("c1");
      // the first claim starts at the head
      assertThat(offsets(claim("q", "g", "c1", 10))).containsExactly(3L, 4L);
    }

    @Test
    void joinOnAMissingQueueThrowsQueueNotFound() {
      assertThatThrownBy(() -> joinQueue("nope", "g", "c1"))
          .isInstanceOf(QueueNotFoundException.class);
    }

    @Test
    void joinRefusesAGroupThatExistsInTheOtherMode() {
      createQueue("q");
      joinQueue("q", "g", "c1");
      assertThatThrownBy(() -> joinStream("q", "g", "c2"))
          .isInstanceOf(GroupModeMismatchException.class)
          .hasMessageContaining("QUEUE")
          .hasMessageContaining("STREAM");
    }

    @Test
    void joinRefusesAnInvalidPattern() {
      createQueue("q");
      assertThatThrownBy(() -> groups.join("q", "a/#/b", "g", "c1", null))
          .isInstanceOf(InvalidConfigException.class);
    }

    @Test
    void autoCommitIsSetOnlyWhenTheGroupIsCreated() {
      createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
      groups.join("s", "", "g", "c1", CursorOption.resume(GroupMode.STREAM).withAutoCommit(false));
      ConsumerGroupState g =
          groups.join(
              "s", "", "g", "c2", CursorOption.resume(GroupMode.STREAM).withAutoCommit(true));
      assertThat(g.autoCommit()).isFalse();
    }

    @Test
    void cursorPositionsMoveTheGroupsSharedCursorAndNotCommitted() {
      createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
      for (int i = 0; i < 10; i++) {
        append("s", "m" + i);
        clock.advance(Duration.ofSeconds(1));
      }
      store.truncate("s", 2);
      assertThat(groups.join("s", "", "g", "c1", CursorOption.latest(GroupMode.STREAM)).cursor())
          .isEqualTo(10);
      assertThat(groups.join("s", "", "g", "c2", CursorOption.earliest(GroupMode.STREAM)).cursor())
          .isEqualTo(2);
      assertThat(
              groups.join("s", "", "g", "c1", CursorOption.atOffset(GroupMode.STREAM, 99)).cursor())
          .as("clamped to the tail")
          .isEqualTo(10);
      assertThat(
              groups.join("s", "", "g", "c1", CursorOption.atOffset(GroupMode.STREAM, 0)).cursor())
          .as("clamped to the head")
          .isEqualTo(2);
      assertThat(
              groups
                  .join(
                      "s",
                      "",
                      "g",
                      "c1",
                      CursorOption.atTimestamp(GroupMode.STREAM, T0.plusSeconds(5)))
                  .cursor())
          .isEqualTo(5);
      assertThat(
              groups
                  .join(
                      "s",
                      "",
                      "g",
                      "c1",
                      new CursorOption(
                          CursorOption.Position.TIMESTAMP, 0, null, GroupMode.STREAM, null))
                  .cursor())
          .as("a null timestamp does not move")
          .isEqualTo(5);
      ConsumerGroupState g = joinStream("s", "g", "c3");
      assertThat(g.cursor()).as("default resumes").isEqualTo(5);
      assertThat(g.committed()).isZero();
      assertThat(g.consumers()).containsOnlyKeys("c1", "c2", "c3");
    }

    @Test
    void leaveWithoutGroupIdFindsTheStreamDefaultGroupToo() {
      createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
      groups.join("s", "", null, "reader-1", CursorOption.resume(GroupMode.STREAM));
      assertThat(state("s", "reader-1").consumers()).containsKey("reader-1");
      assertThat(groups.leave("s", "", null, "reader-1")).isTrue();
      assertThat(state("s", "reader-1").consumers()).isEmpty();
      assertThat(groups.leave("s", "", null, "reader-1")).isFalse();
      assertThat(groups.leave("missing", "", "g", "reader-1")).isFalse();
    }

    @Test
    void leaveKeepsTheConsumersPendingEntriesForStealing() {
      createQueue("q");
      appendAll("q", 2);
      joinQueue("q", "g", "c1");
      joinQueue("q", "g", "c2");
      assertThat(claim("q", "g", "c1", 2)).hasSize(2);
      assertThat(groups.leave("q", "", "g", "c1")).isTrue();
      assertThat(state("q", "g").pending()).hasSize(2);
      clock.advance(VISIBILITY);
      assertThat(offsets(claim("q", "g", "c2", 10))).containsExactly(0L, 1L);
    }

    @Test
    void theLastConsumerLeavingAnEphemeralQueueMarksItAndAJoinClearsTheMark() {
      createQueue(QueueConfig.ephemeral("e").build());
      createQueue("d");
      joinQueue("e", "g", "c1");
      joinQueue("e", "h", "c2");
      joinQueue("d", "g", "c1");
      groups.leave("e", "", "g", "c1");
      assertThat(store.getQueue("e").lastConsumerDisconnect()).as("h still has c2").isEmpty();
      clock.advance(Duration.ofSeconds(7));
      groups.leave("e", "", "h", "c2");
      assertThat(store.getQueue("e").lastConsumerDisconnect()).contains(T0.plusSeconds(7));
      groups.leave("d", "", "g", "c1");
      assertThat(store.getQueue("d").lastConsumerDisconnect()).as("durable").isEmpty();
      joinQueue("e", "g", "c1");
      assertThat(store.getQueue("e").lastConsumerDisconnect()).isEmpty();
    }
  }

  @Nested
  class QueueModeClaims {
    @Test
    void claimsComeFromTheCursorInOrderAndPersistTheCursor() {
      createQueue("q");
      appendAll("q", 5);
      joinQueue("q", "g", "c1");
      List<GroupDelivery> first = claim("q", "g", "c1", 3);
      assertThat(offsets(first)).containsExactly(0L, 1L, 2L);
      assertThat(first).allMatch(d -> d.deliveryCount() == 1 && d.consumerId().equals("c1"));
      assertThat(text(first.get(1))).isEqualTo("m1");
      ConsumerGroupState g = state("q", "g");
      assertThat(g.cursor()).isEqualTo(3);
      assertThat(g.pending())
          .extracting(PendingEntry::offset, PendingEntry::consumerId, PendingEntry::visibleAt)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple(0L, "c1", T0.plus(VISIBILITY)),
              org.assertj.core.groups.Tuple.tuple(1L, "c1", T0.plus(VISIBILITY)),
              org.assertj.core.groups.Tuple.tuple(2L, "c1", T0.plus(VISIBILITY)));
      assertThat(offsets(claim("q", "g", "c1", 3))).containsExactly(3L, 4L);
    }

    @Test
    void visibilityIsTheQueuesDeliveryTimeoutUnlessConfigured() {
      createQueue(QueueConfig.durable("q").deliveryTimeout(Duration.ofSeconds(7)).build());
      appendAll("q", 2);
      joinQueue("q", "g", "c1");
      claim("q", "g", "c1", 1);
      assertThat(state("q", "g").pending().get(0).visibleAt()).isEqualTo(T0.plusSeconds(7));
      groups = coordinator(GroupSettings.DEFAULTS.withVisibilityTimeout(Duration.ofSeconds(3)));
      claim("q", "g", "c1", 1);
      assertThat(state("q", "g").pending().get(1).visibleAt()).isEqualTo(T0.plusSeconds(3));
    }

    @Test
    void claimsSkipExpiredMessagesFilteredMessagesAndTruncatedOffsets() {
      createQueue("q");
      append("q", "$queue/q/eu/1", "eu1"); // 0, truncated below
      append("q", "$queue/q/us/1", "us1"); // 1, filtered
      store.append(
          "q",
          Message.builder()
              .topic("$queue/q/eu/2")
              .value("old".getBytes(UTF_8))
              .createdAt(T0)
              .expiresAt(T0.plusSeconds(1))
              .build()); // 2, expired
      append("q", "$queue/q/eu", "eu-root"); // 3: a/# matches a (BEHAVIOUR Q-ROUTE)
      append("q", "$queue/q/eu/3", "eu3"); // 4
      store.truncate("q", 1);
      clock.advance(Duration.ofSeconds(2));
      groups.join("q", "eu/#", "g", "c1", null);
      List<GroupDelivery> got = claim("q", "g@eu/#", "c1", 10);
      assertThat(got).extracting(GroupCoordinatorTest::text).containsExactly("eu-root", "eu3");
      assertThat(state("q", "g@eu/#").cursor()).isEqualTo(5);
    }

    @Test
    void capturedOrdinaryTopicsAreTheirOwnRoutingKey() {
      createQueue(QueueConfig.durable("q").topics("sensors/#").build());
      append("q", "sensors/eu/1", "eu");
      append("q", "sensors/us/1", "us");
      groups.join("q", "sensors/eu/+", "g", "c1", null);
      assertThat(claim("q", "g@sensors/eu/+", "c1", 10))
          .extracting(GroupCoordinatorTest::text)
          .containsExactly("eu");
    }

    @Test
    void aNonPositiveLimitClaimsTheConfiguredBatchSize() {
      createQueue("q");
      appendAll("q", 30);
      groups = coordinator(GroupSettings.DEFAULTS.withClaimBatchSize(4));
      joinQueue("q", "g", "c1");
      assertThat(claim("q", "g", "c1", 0)).hasSize(4);
      assertThat(claim("q", "g", "c1", -1)).hasSize(4);
    }

    @Test
    void nothingToClaimIsAnEmptyListNotAnError() {
      createQueue("q");
      joinQueue("q", "g", "c1");
      assertThat(claim("q", "g", "c1", 10)).isEmpty();
      assertThat(groups.claimNext("q", "g", "c1")).isEmpty();
    }

    @Test
    void theUnqualifiedClaimNeedsAMemberOfAQueueModeGroup() {
      createQueue("q");
      appendAll("q", 1);
      joinQueue("q", "g", "c1");
      joinStream("q", "s", "c1");
      assertThatThrownBy(() -> claim("q", "g", "stranger", 1))
          .isInstanceOf(ConsumerNotFoundException.class);
      assertThatThrownBy(() -> claim("q", "s", "c1", 1))
          .isInstanceOf(GroupModeMismatchException.class);
      assertThatThrownBy(() -> groups.peek("q", "g", "c1", 1))
          .isInstanceOf(GroupModeMismatchException.class);
    }

    @Test
    void aFullPelStopsCursorClaimsButNotStealing() {
      createQueue("q");
      appendAll("q", 5);
      groups = coordinator(GroupSettings.DEFAULTS.withMaxPelSize(2));
      joinQueue("q", "g", "c1");
      joinQueue("q", "g", "c2");
      assertThat(offsets(claim("q", "g", "c1", 10))).containsExactly(0L, 1L);
      assertThat(claim("q", "g", "c2", 10)).as("batch: PEL full is no messages").isEmpty();
      assertThatThrownBy(() -> groups.claimNext("q", "g", "c2"))
          .isInstanceOf(PelFullException.class)
          .hasMessageContaining("2 >= 2");
      assertThat(state("q", "g").cursor()).isEqualTo(2);
      clock.advance(VISIBILITY);
      assertThat(offsets(claim("q", "g", "c2", 10))).as("stolen").containsExactly(0L, 1L);
      assertThatThrownBy(() -> groups.claimNext("q", "g", "c2"))
          .as("full, and nothing visible to steal")
          .isInstanceOf(PelFullException.class);
    }

    @Test
    void anExpiredClaimIsStolenByAnotherMemberWithTheNextDeliveryCount() {
      createQueue("q");
      appendAll("q", 1);
      joinQueue("q", "g", "c1");
      joinQueue("q", "g", "c2");
      GroupDelivery first = claim("q", "g", "c1", 1).get(0);
      clock.advance(VISIBILITY.minusSeconds(1));
      assertThat(claim("q", "g", "c2", 1)).as("still invisible").isEmpty();
      clock.advance(Duration.ofSeconds(1));
      GroupDelivery stolen = claim("q", "g", "c2", 1).get(0);
      assertThat(stolen.offset()).isZero();
      assertThat(stolen.deliveryCount()).isEqualTo(2);
      assertThat(stolen.consumerId()).isEqualTo("c2");
      PendingEntry e = state("q", "g").pending().get(0);
      assertThat(e.consumerId()).isEqualTo("c2");
      assertThat(e.firstClaimedAt()).isEqualTo(T0);
      assertThat(e.visibleAt()).isEqualTo(clock.instant().plus(VISIBILITY));
      assertThatThrownBy(first::ack)
          .as("a stale handle cannot settle the new delivery")
          .isInstanceOf(MessageNotPendingException.class);
      assertThat(first.isSettled()).isFalse();
      stolen.ack();
      assertThat(state("q", "g").pending()).isEmpty();
    }

    @Test
    void aConsumerStealsBackItsOwnExpiredClaim() {
      createQueue("q");
      appendAll("q", 1);
      joinQueue("q", "g", "c1");
      claim("q", "g", "c1", 1);
      clock.advance(VISIBILITY);
      GroupDelivery again = claim("q", "g", "c1", 1).get(0);
      assertThat(again.offset()).isZero();
      assertThat(again.deliveryCount()).isEqualTo(2);
    }

    @Test
    void aRewoundCursorNeverClaimsAHeldOffsetTwice() {
      createQueue("q");
      appendAll("q", 3);
      joinQueue("q", "g", "c1");
      claim("q", "g", "c1", 2);
      groups.join("q", "", "g", "c2", CursorOption.earliest(GroupMode.QUEUE));
      assertThat(offsets(claim("q", "g", "c2", 10))).containsExactly(2L);
    }

    @Test
    void everyNewVisibilityTimeIsReportedForRedeliveryTimers() {
      List<String> due = new ArrayList<>();
      groups =
          GroupCoordinator.builder(storage)
              .clock(clock)
              .onRedeliveryDue((q, g, at) -> due.add(q + "/" + g + "@" + Duration.between(T0, at)))
              .build();
      createQueue("q");
      appendAll("q", 3);
      joinQueue("q", "g", "c1");
      joinQueue("q", "g", "c2");
      List<GroupDelivery> claimed = claim("q", "g", "c1", 2);
      assertThat(due).containsExactly("q/g@PT30S"); // one report for the claimed batch
      claimed.get(0).nack(Duration.ofSeconds(5));
      assertThat(due).containsExactly("q/g@PT30S", "q/g@PT5S");
      clock.advance(Duration.ofSeconds(10));
      groups.renew("q", "g", "c1", claimed.get(1).offset());
      assertThat(due).last().isEqualTo("q/g@PT40S");
      assertThat(groups.nextRedelivery("q", clock.instant())).contains(T0.plusSeconds(40));
      assertThat(offsets(claim("q", "g", "c2", 5))).containsExactly(2L, 0L); // the steal reports
      assertThat(due).last().isEqualTo("q/g@PT40S");
      assertThat(groups.nextRedelivery("q", T0.plusSeconds(40))).isEmpty();
    }

    @Test
    void aDeliveryRenewsItsOwnClaimOnlyWhileUnsettledAndStillHeld() {
      createQueue("q");
      appendAll("q", 3);
      joinQueue("q", "g", "c1");
      joinQueue("q", "g", "c2");
      List<GroupDelivery> ds = claim("q", "g", "c1", 3);
      clock.advance(Duration.ofSeconds(20));
      assertThat(ds.get(0).renew()).isTrue();
      assertThat(state("q", "g").pendingAt(0).orElseThrow().visibleAt())
          .isEqualTo(clock.instant().plus(VISIBILITY));
      ds.get(1).nack(Duration.ofSeconds(5));
      assertThat(ds.get(1).renew()).as("settled: the nack's delay stands").isFalse();
      assertThat(state("q", "g").pendingAt(1).orElseThrow().visibleAt())
          .isEqualTo(clock.instant().plusSeconds(5));
      clock.advance(Duration.ofSeconds(15)); // offset 2 is visible again (claimed 35 s ago)
      assertThat(offsets(claim("q", "g", "c2", 1))).containsExactly(1L);
      assertThat(offsets(claim("q", "g", "c2", 1))).containsExactly(2L);
      assertThat(ds.get(2).renew()).as("stolen: fenced").isFalse();
      assertThat(state("q", "g").pendingAt(2).orElseThrow().consumerId()).isEqualTo("c2");
    }

    @Test
    void renewExtendsTheVisibilityOfEntriesTheConsumerHolds() {
      createQueue("q");
      appendAll("q", 3);
      joinQueue("q", "g", "c1");
      joinQueue("q", "g", "c2");
      claim("q", "g", "c1", 2);
      claim("q", "g", "c2", 1);
      clock.advance(Duration.ofSeconds(20));
      assertThat(groups.renew("q", "g", "c1", 0, 2, 7)).isEqualTo(1);
      clock.advance(Duration.ofSeconds(10));
      assertThat(offsets(claim("q", "g", "c2", 10)))
          .as("1 expired, 0 renewed, 2 is c2's own and expired")
          .containsExactly(1L, 2L);
      clock.advance(Duration.ofSeconds(20));
      assertThat(offsets(claim("q", "g", "c2", 10))).containsExactly(0L);
    }

    @Test
    void aClaimCountsAsAHeartbeat() {
      createQueue("q");
      joinQueue("q", "g", "c1");
      clock.advance(Duration.ofMinutes(1));
      claim("q", "g", "c1", 1);
      clock.advance(Duration.ofMinutes(1).plusSeconds(30));
      assertThat(groups.removeStaleConsumers(clock.instant())).isEmpty();
    }
  }

  @Nested
  class QueueModeSettlement {
    @Test
    void ackRemovesTheEntryAndAdvancesCommittedToTheLowestPendingOffset() {
      createQueue("q");
      appendAll("q", 3);
      joinQueue("q", "g", "c1");
      List<GroupDelivery> ds = claim("q", "g", "c1", 3);
      ds.get(1).ack();
      assertThat(state("q", "g").committed()).as("0 still pending").isZero();
      ds.get(0).ack();
      assertThat(state("q", "g").committed()).isEqualTo(2);
      ds.get(2).ack();
      ConsumerGroupState g = state("q", "g");
      assertThat(g.committed()).as("nothing pending: the cursor").isEqualTo(3);
      assertThat(g.pending()).isEmpty();
      assertThat(groups.lag("q", "g")).isZero();
    }

    @Test
    void aSecondSettlementThrowsAlreadySettled() {
      createQueue("q");
      appendAll("q", 1);
      joinQueue("q", "g", "c1");
      GroupDelivery d = claim("q", "g", "c1", 1).get(0);
      d.ack();
      assertThat(d.isSettled()).isTrue();
      assertThatThrownBy(d::ack).isInstanceOf(DeliveryAlreadySettledException.class);
      assertThatThrownBy(d::nack).isInstanceOf(DeliveryAlreadySettledException.class);
      assertThatThrownBy(() -> d.reject("x")).isInstanceOf(DeliveryAlreadySettledException.class);
    }

    @Test
    void aNackedMessageIsClaimableAgainBySameConsumerAfterTheBackoff() {
      createQueue(
          QueueConfig.durable("q")
              .retryPolicy(
                  new RetryPolicy(
                      10, Duration.ofSeconds(2), Duration.ofMinutes(1), 3.0, Duration.ZERO))
              .build());
      appendAll("q", 1);
      joinQueue("q", "g", "c1");
      claim("q", "g", "c1", 1).get(0).nack();
      assertThat(claim("q", "g", "c1", 1)).as("backoff(1) = 2s not passed").isEmpty();
      clock.advance(Duration.ofSeconds(2));
      GroupDelivery second = claim("q", "g", "c1", 1).get(0);
      assertThat(second.offset()).isZero();
      assertThat(second.deliveryCount()).isEqualTo(2);
      second.nack();
      clock.advance(Duration.ofSeconds(5));
      assertThat(claim("q", "g", "c1", 1)).as("backoff(2) = 6s not passed").isEmpty();
      clock.advance(Duration.ofSeconds(1));
      assertThat(claim("q", "g", "c1", 1).get(0).deliveryCount()).isEqualTo(3);
    }

    @Test
    void aNackWithAnExplicitDelayWaitsThatLong() {
      createQueue("q");
      appendAll("q", 1);
      joinQueue("q", "g", "c1");
      claim("q", "g", "c1", 1).get(0).nack(Duration.ZERO);
      assertThat(claim("q", "g", "c1", 1)).hasSize(1);
      clock.advance(VISIBILITY);
      GroupDelivery d = claim("q", "g", "c1", 1).get(0);
      d.nack(Duration.ofMinutes(10));
      clock.advance(Duration.ofMinutes(9));
      assertThat(claim("q", "g", "c1", 1)).isEmpty();
      clock.advance(Duration.ofMinutes(1));
      assertThat(claim("q", "g", "c1", 1)).hasSize(1);
      assertThatThrownBy(() -> d.nack(Duration.ofSeconds(-1)))
          .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aNackAfterTheLastAllowedRetryDeadLetters() {
      createQueue(
          QueueConfig.durable("q")
              .retryPolicy(new RetryPolicy(1, Duration.ZERO, Duration.ZERO, 1.0, Duration.ZERO))
              .build());
      appendAll("q", 1);
      joinQueue("q", "g", "c1");
      claim("q", "g", "c1", 1).get(0).nack();
      GroupDelivery retry = claim("q", "g", "c1", 1).get(0);
      assertThat(retry.deliveryCount()).isEqualTo(2);
      retry.nack();
      assertThat(state("q", "g").pending()).isEmpty();
      assertThat(claim("q", "g", "c1", 1)).isEmpty();
      List<Message> dead = deadLetters("$dlq/q");
      assertThat(dead).hasSize(1);
      assertThat(dead.get(0).properties())
          .containsEntry(MessageProperties.DLQ_DELIVERY_COUNT, "2")
          .hasEntrySatisfying(
              MessageProperties.DLQ_REASON, r -> assertThat(r).contains("retries exhausted"));
    }

    @Test
    void aPoisonMessageAtMaxDeliveryCountIsDeadLetteredWhenStolen() {
      createQueue("q");
      appendAll("q", 1);
      groups = coordinator(GroupSettings.DEFAULTS.withMaxDeliveryCount(3));
      joinQueue("q", "g", "c1");
      for (int i = 1; i <= 3; i++) {
        List<GroupDelivery> got = claim("q", "g", "c1", 1);
        assertThat(got).hasSize(1);
        assertThat(got.get(0).deliveryCount()).isEqualTo(i);
        clock.advance(VISIBILITY); // the consumer crashed: nothing settled
      }
      append("q", "m1");
      List<GroupDelivery> next = claim("q", "g", "c1", 10);
      assertThat(offsets(next)).as("offset 0 dead-lettered, 1 claimed").containsExactly(1L);
      assertThat(deadLetters("$dlq/q"))
          .singleElement()
          .satisfies(
              m -> {
                assertThat(m.properties())
                    .containsEntry(MessageProperties.DLQ_ORIGINAL_OFFSET, "0")
                    .containsEntry(MessageProperties.DLQ_DELIVERY_COUNT, "3");
                assertThat(m.properties().get(MessageProperties.DLQ_REASON))
                    .contains("max delivery count 3");
              });
      next.get(0).ack();
      assertThat(state("q", "g").committed()).isEqualTo(2);
    }

    @Test
    void aMessageOlderThanTheRetryTotalTimeoutIsDeadLettered() {
      createQueue(
          QueueConfig.durable("q")
              .retryPolicy(
                  new RetryPolicy(
                      10, Duration.ofSeconds(1), Duration.ofSeconds(1), 1.0, Duration.ofMinutes(1)))
              .build());
      appendAll("q", 1);
      joinQueue("q", "g", "c1");
      claim("q", "g", "c1", 1).get(0).nack();
      clock.advance(Duration.ofMinutes(1));
      assertThat(claim("q", "g", "c1", 1)).isEmpty();
      assertThat(deadLetters("$dlq/q")).hasSize(1);
    }

    @Test
    void rejectDeadLettersKeepingKeyValueHeadersAndProperties() {
      createQueue("orders");
      store.append(
          "orders",
          Message.builder()
              .id("42")
              .topic("$queue/orders/eu")
              .key("k".getBytes(UTF_8))
              .value(null)
              .header(Header.of("h", "1"))
              .header(Header.of("h", "2"))
              .timestamp(1234, TimestampType.CREATE_TIME)
              .property("user", "u1")
              .property(MessageProperties.DLQ_REASON, "forged")
              .createdAt(T0)
              .expiresAt(T0.plus(Duration.ofDays(7)))
              .build());
      joinQueue("orders", "g", "c1");
      clock.advance(Duration.ofSeconds(90));
      claim("orders", "g", "c1", 1).get(0).reject("bad payload");
      assertThat(state("orders", "g").pending()).isEmpty();
      assertThat(state("orders", "g").committed()).isEqualTo(1);

      QueueConfig dlq = store.getQueue("$dlq/orders");
      assertThat(dlq.durable()).isTrue();
      assertThat(dlq.type()).isEqualTo(QueueType.CLASSIC);
      assertThat(dlq.topics()).containsExactly("$dlq/orders/#");
      assertThat(dlq.dlq().enabled()).isFalse();
      assertThat(dlq.messageTtl()).isZero();

      Message dead = deadLetters("$dlq/orders").get(0);
      assertThat(dead.key()).isEqualTo("k".getBytes(UTF_8));
      assertThat(dead.value()).as("tombstone kept").isNull();
      assertThat(dead.headers()).containsExactly(Header.of("h", "1"), Header.of("h", "2"));
      assertThat(dead.timestamp()).isEqualTo(1234);
      assertThat(dead.timestampType()).isEqualTo(TimestampType.CREATE_TIME);
      assertThat(dead.state()).isEqualTo(MessageState.DLQ);
      assertThat(dead.topic()).isEqualTo("$dlq/orders");
      assertThat(dead.id()).isNotEmpty().isNotEqualTo("42");
      assertThat(dead.expiresAt()).isNull();
      assertThat(dead.properties())
          .containsEntry("user", "u1")
          .containsEntry(MessageProperties.DLQ_ORIGINAL_QUEUE, "orders")
          .containsEntry(MessageProperties.DLQ_ORIGINAL_TOPIC, "$queue/orders/eu")
          .containsEntry(MessageProperties.DLQ_GROUP, "g")
          .containsEntry(MessageProperties.DLQ_DELIVERY_COUNT, "1")
          .containsEntry(MessageProperties.DLQ_REASON, "rejected: bad payload")
          .containsEntry(MessageProperties.DLQ_MOVED_AT, "2024-01-01T00:01:30Z")
          .containsEntry(MessageProperties.DLQ_ORIGINAL_ID, "42")
          .containsEntry(MessageProperties.DLQ_ORIGINAL_OFFSET, "0");
    }

    @Test
    void theConfiguredDlqTopicWinsOverThePrefix() {
      createQueue(QueueConfig.durable("q").dlq(new DlqConfig(true, "dead/q")).build());
      createQueue("r");
      appendAll("q", 1);
      appendAll("r", 1);
      groups = coordinator(GroupSettings.DEFAULTS.withDlqTopicPrefix("graveyard/"));
      joinQueue("q", "g", "c1");
      joinQueue("r", "g", "c1");
      claim("q", "g", "c1", 1).get(0).reject("x");
      claim("r", "g", "c1", 1).get(0).reject("y");
      assertThat(deadLetters("dead/q")).hasSize(1);
      assertThat(deadLetters("graveyard/r")).hasSize(1);
    }

    @Test
    void rejectWithTheDlqDisabledDropsAndCountsTheMessage() {
      createQueue(QueueConfig.durable("q").dlq(DlqConfig.DISABLED).build());
      appendAll("q", 1);
      joinQueue("q", "g", "c1");
      claim("q", "g", "c1", 1).get(0).reject("x");
      assertThat(state("q", "g").pending()).isEmpty();
      assertThat(store.listQueues()).extracting(QueueConfig::name).containsExactly("q");
      assertThat(groups.metrics().discarded()).isEqualTo(1);
      assertThat(groups.metrics().rejects()).isEqualTo(1);
    }

    @Test
    void aDeadLetterThatCannotBeWrittenLeavesTheMessagePendingAndTheDeliveryUnsettled() {
      createQueue(QueueConfig.durable("q").dlq(new DlqConfig(true, "bad+dlq")).build());
      appendAll("q", 1);
      joinQueue("q", "g", "c1");
      GroupDelivery d = claim("q", "g", "c1", 1).get(0);
      assertThatThrownBy(() -> d.reject("x")).isInstanceOf(InvalidConfigException.class);
      assertThat(d.isSettled()).isFalse();
      assertThat(state("q", "g").pending()).hasSize(1);
      d.ack();
      assertThat(state("q", "g").pending()).isEmpty();
    }
  }

  @Nested
  class StreamMode {
    @Test
    void peekReadsFromTheCursorWithoutMovingItAndReportsWhereItStopped() {
      createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
      append("s", "$queue/s/a", "a0");
      append("s", "$queue/s/b", "b1");
      append("s", "$queue/s/a", "a2");
      append("s", "$queue/s/a", "a3");
      groups.join("s", "a", "r", "c1", CursorOption.resume(GroupMode.STREAM));
      StreamBatch batch = groups.peek("s", "r@a", "c1", 2);
      assertThat(batch.deliveries())
          .extracting(GroupCoordinatorTest::text)
          .containsExactly("a0", "a2");
      assertThat(batch.next()).isEqualTo(3);
      assertThat(state("s", "r@a").cursor()).isZero();
      groups.commitCursor("s", "r@a", batch.next());
      assertThat(groups.peek("s", "r@a", "c1", 10).deliveries())
          .extracting(GroupCoordinatorTest::text)
          .containsExactly("a3");
      StreamBatch empty = groups.peek("s", "r@a", "c1", 10);
      assertThat(empty.deliveries()).hasSize(1);
    }

    @Test
    void theCursorCommitAutoCommitsAtMostOncePerInterval() {
      createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
      appendAll("s", 10);
      joinStream("s", "r", "c1");
      groups.commitCursor("s", "r", 2);
      assertThat(state("s", "r").committed()).isEqualTo(2);
      clock.advance(Duration.ofSeconds(4));
      groups.commitCursor("s", "r", 4);
      assertThat(state("s", "r").cursor()).isEqualTo(4);
      assertThat(state("s", "r").committed()).as("throttled").isEqualTo(2);
      groups.commitCursor("s", "r", 3);
      assertThat(state("s", "r").cursor()).as("never backwards").isEqualTo(4);
      clock.advance(Duration.ofSeconds(1));
      groups.commitCursor("s", "r", 6);
      assertThat(state("s", "r").committed()).isEqualTo(6);
      assertThatThrownBy(() -> groups.commitCursor("s", "r", 11))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("tail 10");
    }

    @Test
    void aZeroAutoCommitIntervalCommitsEveryCursorMoveAndManualGroupsNever() {
      createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
      appendAll("s", 10);
      groups = coordinator(GroupSettings.DEFAULTS.withAutoCommitInterval(Duration.ZERO));
      joinStream("s", "r", "c1");
      groups.join("s", "", "m", "c1", CursorOption.resume(GroupMode.STREAM).withAutoCommit(false));
      for (long next = 1; next <= 3; next++) {
        groups.commitCursor("s", "r", next);
        groups.commitCursor("s", "m", next);
        assertThat(state("s", "r").committed()).isEqualTo(next);
      }
      assertThat(state("s", "m").committed()).isZero();
      assertThatThrownBy(
              () ->
                  coordinator(
                      GroupSettings.DEFAULTS.withAutoCommitInterval(Duration.ofSeconds(-1))))
          .isInstanceOf(InvalidConfigException.class)
          .hasMessageContaining("autoCommitInterval");
    }

    @Test
    void aStreamAckCheckpointsOnlyWhenTheGroupAutoCommits() {
      createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
      appendAll("s", 5);
      joinStream("s", "auto", "c1");
      groups.join(
          "s", "", "manual", "c1", CursorOption.resume(GroupMode.STREAM).withAutoCommit(false));
      List<GroupDelivery> auto = groups.peek("s", "auto", "c1", 5).deliveries();
      auto.get(3).ack();
      auto.get(1).ack();
      assertThat(state("s", "auto").committed()).isEqualTo(4);
      groups.peek("s", "manual", "c1", 5).deliveries().get(3).ack();
      assertThat(state("s", "manual").committed()).isZero();
      assertThat(state("s", "manual").cursor()).isZero();
    }

    @Test
    void aStreamNackChangesNothingAndARejectMovesCursorAndCommittedPastTheMessage() {
      createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
      appendAll("s", 5);
      groups.join("s", "", "r", "c1", CursorOption.resume(GroupMode.STREAM).withAutoCommit(false));
      List<GroupDelivery> ds = groups.peek("s", "r", "c1", 5).deliveries();
      ds.get(0).nack();
      ds.get(1).nack(Duration.ofSeconds(5));
      assertThat(state("s", "r").cursor()).isZero();
      ds.get(2).reject("unparseable");
      assertThat(state("s", "r").cursor()).isEqualTo(3);
      assertThat(state("s", "r").committed()).isEqualTo(3);
      assertThatThrownBy(() -> ds.get(2).reject("again"))
          .isInstanceOf(DeliveryAlreadySettledException.class);
    }

    @Test
    void commitOffsetIsForStreamGroupsOnlyNotBeyondTheCursorAndMayGoBack() {
      createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
      appendAll("s", 10);
      joinStream("s", "r", "c1");
      joinQueue("s", "q", "c1");
      groups.commitCursor("s", "r", 8);
      groups.commitOffset("s", "r", 8);
      groups.commitOffset("s", "r", 3);
      assertThat(state("s", "r").committed()).isEqualTo(3);
      assertThatThrownBy(() -> groups.commitOffset("s", "r", 9))
          .isInstanceOf(InvalidOffsetException.class)
          .hasMessageContaining("cursor 8");
      assertThatThrownBy(() -> groups.commitOffset("s", "q", 0))
          .isInstanceOf(CommitOffsetOnlyForStreamModeException.class);
      assertThatThrownBy(() -> groups.commitOffset("s", "r", -1))
          .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void lagIsTailMinusCommittedAndNeverNegative() {
      createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
      appendAll("s", 10);
      joinStream("s", "r", "c1");
      assertThat(groups.lag("s", "r")).isEqualTo(10);
      groups.commitCursor("s", "r", 7);
      assertThat(groups.lag("s", "r")).isEqualTo(3);
      groups.commitCursor("s", "r", 10); // throttled: committed stays 7
      assertThat(groups.lag("s", "r")).isEqualTo(3);
      groups.commitOffset("s", "r", 10);
      store.truncate("s", 10);
      assertThat(groups.lag("s", "r")).isZero();
    }
  }

  @Nested
  class DeliveryStamps {
    @Test
    void aQueueModeDeliveryNamesItsQueueGroupOffsetTopicAndAttemptTimes() {
      createQueue("orders");
      store.append(
          "orders",
          Message.builder()
              .topic("$queue/orders/eu")
              .value("m0".getBytes(UTF_8))
              .property("user", "u1")
              .createdAt(T0)
              .build());
      joinQueue("orders", "g", "c1");
      GroupDelivery first = claim("orders", "g", "c1", 1).get(0);
      assertThat(first.deliveredAt()).isEqualTo(T0);
      assertThat(first.firstDeliveredAt()).isEqualTo(T0);
      assertThat(first.message().properties()).as("the stored message").containsOnlyKeys("user");
      assertThat(first.deliveryProperties())
          .containsExactly(
              Map.entry(MessageProperties.MESSAGE_ID, "orders:0"),
              Map.entry(MessageProperties.GROUP_ID, "g"),
              Map.entry(MessageProperties.QUEUE, "orders"),
              Map.entry(MessageProperties.OFFSET, "0"),
              Map.entry(MessageProperties.SOURCE_TOPIC, "$queue/orders/eu"));
      Message stamped = first.stampedMessage();
      assertThat(stamped.properties())
          .containsEntry("user", "u1")
          .containsAllEntriesOf(first.deliveryProperties())
          .hasSize(6);
      assertThat(stamped.value()).isEqualTo("m0".getBytes(UTF_8));
      assertThat(stamped.offset()).isZero();

      clock.advance(Duration.ofSeconds(10));
      assertThat(first.renew()).isTrue();
      first.nack(Duration.ofSeconds(5));
      clock.advance(Duration.ofSeconds(5));
      GroupDelivery second = claim("orders", "g", "c1", 1).get(0);
      assertThat(second.deliveryCount()).isEqualTo(2);
      assertThat(second.firstDeliveredAt()).isEqualTo(T0);
      assertThat(second.deliveredAt()).isEqualTo(T0.plusSeconds(15));
      assertThat(first.deliveredAt()).as("a renewal changes neither").isEqualTo(T0);
    }

    @Test
    void aDeadLetterKeepsTheFirstAndTheLastDeliveryTimes() {
      createQueue("q");
      appendAll("q", 1);
      joinQueue("q", "g", "c1");
      claim("q", "g", "c1", 1).get(0).nack(Duration.ofSeconds(1));
      clock.advance(Duration.ofSeconds(61));
      claim("q", "g", "c1", 1).get(0).reject("bad");
      assertThat(deadLetters("$dlq/q").get(0).properties())
          .containsEntry(MessageProperties.DLQ_FIRST_DELIVERED_AT, "2024-01-01T00:00:00Z")
          .containsEntry(MessageProperties.DLQ_LAST_DELIVERED_AT, "2024-01-01T00:01:01Z");
    }

    @Test
    void aStreamDeliveryAdvertisesThePrimaryGroupsCommittedOffset() {
      createQueue(QueueConfig.durable("q").primaryGroup("workers").build());
      appendAll("q", 3);
      joinStream("q", "audit", "r1");
      StreamBatch before = groups.peek("q", "audit", "r1", 10);
      assertThat(before.deliveries().get(0).deliveryProperties())
          .as("the primary group does not exist yet")
          .containsEntry(MessageProperties.WORK_GROUP, "workers")
          .containsEntry(MessageProperties.WORK_COMMITTED_OFFSET, "0")
          .containsEntry(MessageProperties.WORK_ACKED, "false");

      joinQueue("q", "workers", "w1");
      for (GroupDelivery d : claim("q", "workers", "w1", 2)) {
        d.ack();
      }
      clock.advance(Duration.ofSeconds(3));
      List<GroupDelivery> read = groups.peek("q", "audit", "r1", 10).deliveries();
      assertThat(read).extracting(GroupDelivery::offset).containsExactly(0L, 1L, 2L);
      assertThat(read)
          .extracting(d -> d.deliveryProperties().get(MessageProperties.WORK_ACKED))
          .containsExactly("true", "true", "false");
      Map<String, String> last = read.get(2).deliveryProperties();
      assertThat(last)
          .containsEntry(MessageProperties.MESSAGE_ID, "q:2")
          .containsEntry(MessageProperties.GROUP_ID, "audit")
          .containsEntry(MessageProperties.STREAM_OFFSET, "2")
          .containsEntry(MessageProperties.STREAM_TIMESTAMP, Long.toString(T0.toEpochMilli()))
          .containsEntry(MessageProperties.WORK_GROUP, "workers")
          .containsEntry(MessageProperties.WORK_COMMITTED_OFFSET, "2");
      assertThat(read.get(2).deliveredAt()).isEqualTo(T0.plusSeconds(3));
      assertThat(read.get(2).firstDeliveredAt()).isEqualTo(T0.plusSeconds(3));
      assertThat(read.get(2).deliveryCount()).isEqualTo(1);
    }

    @Test
    void aPatternReaderIsComparedWithThePrimaryGroupOfTheSamePattern() {
      createQueue(QueueConfig.durable("q").primaryGroup("workers").build());
      append("q", "$queue/q/a", "a0");
      groups.join("q", "a", "workers", "w1", CursorOption.resume(GroupMode.QUEUE));
      claim("q", "workers@a", "w1", 1).get(0).ack();
      groups.join("q", "a", "audit", "r1", CursorOption.resume(GroupMode.STREAM));
      assertThat(groups.peek("q", "audit@a", "r1", 1).deliveries().get(0).deliveryProperties())
          .containsEntry(MessageProperties.WORK_GROUP, "workers@a")
          .containsEntry(MessageProperties.WORK_COMMITTED_OFFSET, "1")
          .containsEntry(MessageProperties.WORK_ACKED, "true");
    }

    @Test
    void withoutAPrimaryGroupOrACreationTimeAStreamDeliveryCarriesNeitherStamp() {
      createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
      store.append("s", Message.builder().topic("$queue/s").value(new byte[] {1}).build());
      joinStream("s", "r", "c1");
      Map<String, String> stamps =
          groups.peek("s", "r", "c1", 1).deliveries().get(0).deliveryProperties();
      assertThat(stamps)
          .containsOnlyKeys(
              MessageProperties.MESSAGE_ID,
              MessageProperties.GROUP_ID,
              MessageProperties.QUEUE,
              MessageProperties.OFFSET,
              MessageProperties.SOURCE_TOPIC,
              MessageProperties.STREAM_OFFSET); // no x-stream-timestamp: no creation time
    }
  }

  @Nested
  class Heartbeats {
    @Test
    void aHeartbeatRefreshesAMemberAndUnknownMembersAreReported() {
      createQueue("q");
      joinQueue("q", "g", "c1");
      clock.advance(Duration.ofMinutes(1));
      groups.heartbeat("q", "g", "c1");
      assertThat(state("q", "g").consumers().get("c1").lastHeartbeat()).isEqualTo(clock.instant());
      assertThat(state("q", "g").consumers().get("c1").registeredAt()).isEqualTo(T0);
      assertThatThrownBy(() -> groups.heartbeat("q", "g", "c9"))
          .isInstanceOf(ConsumerNotFoundException.class);
    }

    @Test
    void aClientHeartbeatRefreshesEveryMembershipOfThatClientAndNoOther() {
      createQueue("q1");
      createQueue("q2");
      joinQueue("q1", "g", "c1");
      joinQueue("q2", "g", "c1");
      joinStream("q2", "r", "c1");
      joinQueue("q1", "g", "c2");
      clock.advance(Duration.ofMinutes(1));
      assertThat(groups.heartbeat("c1")).isEqualTo(3);
      assertThat(state("q1", "g").consumers().get("c1").lastHeartbeat()).isEqualTo(clock.instant());
      assertThat(state("q2", "g").consumers().get("c1").lastHeartbeat()).isEqualTo(clock.instant());
      assertThat(state("q2", "r").consumers().get("c1").lastHeartbeat()).isEqualTo(clock.instant());
      assertThat(state("q1", "g").consumers().get("c2").lastHeartbeat()).isEqualTo(T0);
      assertThat(groups.heartbeat("nobody")).isZero();
      assertThat(groups.heartbeat("")).isZero();
      assertThat(groups.heartbeat(null)).isZero();
    }

    @Test
    void aClientHeartbeatFindsMembershipsThroughTheIndexWithoutScanningGroups() {
      createQueue("q1");
      createQueue("q2");
      for (int i = 0; i < 20; i++) {
        joinQueue(i % 2 == 0 ? "q1" : "q2", "g" + i, "other-" + i);
      }
      joinQueue("q2", "g7", "c1");
      CountingStores counting = new CountingStores(storage);
      groups = GroupCoordinator.builder(counting.queues, counting.groups).clock(clock).build();
      counting.calls.clear(); // building the coordinator fills the index from the store
      clock.advance(Duration.ofMinutes(1));
      assertThat(groups.heartbeat("c1")).isEqualTo(1);
      assertThat(List.copyOf(counting.calls))
          .as(
              "no listing of queues or groups: the index names the one membership, refreshed in its group's atomic section")
          .containsExactly("atomically", "getGroup", "registerConsumer");
      assertThat(state("q2", "g7").consumers().get("c1").lastHeartbeat())
          .isEqualTo(clock.instant());
    }

    @Test
    void theHeartbeatIndexFollowsLeavesRemovalsAndGroupDeletions() {
      createQueue("q");
      createQueue(QueueConfig.ephemeral("e").expiresAfter(Duration.ofMinutes(1)).build());
      joinQueue("q", "a", "c1");
      joinQueue("q", "b", "c1");
      joinQueue("q", "c", "c1");
      joinQueue("e", "d", "c1");
      groups.leave("q", "", "a", "c1");
      groups.deleteGroup("q", "b");
      assertThat(groups.heartbeat("c1")).isEqualTo(2);
      groups.leave("e", "", "d", "c1");
      clock.advance(Duration.ofMinutes(2));
      assertThat(groups.expireEphemeralQueues(clock.instant())).containsExactly("e");
      assertThat(groups.heartbeat("c1")).isEqualTo(1);
      clock.advance(Duration.ofMinutes(3));
      assertThat(groups.removeStaleConsumers(clock.instant()))
          .containsExactly(new RemovedConsumers("q", "c", List.of("c1")));
      assertThat(groups.heartbeat("c1")).isZero();
      assertThat(groups.membershipIndex().consumers()).isZero();
    }

    @Test
    void aMembershipRemovedBehindTheCoordinatorsBackIsDroppedFromTheIndex() {
      createQueue("q");
      joinQueue("q", "g", "c1");
      joinQueue("q", "h", "c1");
      storage.groups().unregisterConsumer("q", "g", "c1"); // another coordinator on the store
      storage.groups().deleteGroup("q", "h");
      assertThat(groups.heartbeat("c1")).isZero();
      assertThat(groups.membershipIndex().consumers()).isZero();
    }

    @Test
    void theHeartbeatIndexIsRebuiltFromTheStore() {
      createQueue("q");
      joinQueue("q", "g", "c1");
      joinStream("q", "r", "c1");
      GroupCoordinator restarted = coordinator(GroupSettings.DEFAULTS);
      clock.advance(Duration.ofMinutes(1));
      assertThat(restarted.heartbeat("c1")).isEqualTo(2);
      assertThat(state("q", "r").consumers().get("c1").lastHeartbeat()).isEqualTo(clock.instant());
    }

    @Test
    void staleMembersAreRemovedTheirEntriesStayAndTheListenerGetsACopy() {
      List<List<String>> told = new ArrayList<>();
      groups =
          GroupCoordinator.builder(storage)
              .clock(clock)
              .onConsumerRemoved(
                  (q, g, ids) -> {
                    told.add(ids);
                    throw new IllegalStateException("listener failures are ignored");
                  })
              .build();
      createQueue(QueueConfig.ephemeral("q").build());
      appendAll("q", 1);
      joinQueue("q", "g", "c1");
      joinQueue("q", "g", "c2");
      claim("q", "g", "c1", 1);
      clock.advance(Duration.ofMinutes(1));
      groups.heartbeat("q", "g", "c2");
      clock.advance(Duration.ofMinutes(1).plusSeconds(1));
      List<RemovedConsumers> removed = groups.removeStaleConsumers(clock.instant());
      assertThat(removed).containsExactly(new RemovedConsumers("q", "g", List.of("c1")));
      assertThat(told).containsExactly(List.of("c1"));
      assertThatThrownBy(() -> told.get(0).add("x"))
          .isInstanceOf(UnsupportedOperationException.class);
      assertThat(state("q", "g").consumers()).containsOnlyKeys("c2");
      assertThat(state("q", "g").pending())
          .extracting(PendingEntry::consumerId)
          .containsExactly("c1");
      assertThat(store.getQueue("q").lastConsumerDisconnect()).as("c2 remains").isEmpty();
      clock.advance(Duration.ofMinutes(3));
      groups.removeStaleConsumers(clock.instant());
      assertThat(store.getQueue("q").lastConsumerDisconnect()).contains(clock.instant());
    }
  }

  /** A queue's own {@code batchSize} and {@code heartbeatTimeout} (BEHAVIOUR Q-CONFIG). */
  @Nested
  class QueueSettings {
    private static final Duration TWO_SECONDS = Duration.ofSeconds(2);

    @Test
    void aQueuesBatchSizeIsTheClaimLimitWhenTheCallerAsksForTheDefault() {
      createQueue(QueueConfig.durable("own").batchSize(3).build());
      createQueue("plain");
      appendAll("own", 20);
      appendAll("plain", 20);
      joinQueue("own", "g", "c1");
      joinQueue("plain", "g", "c1");

      assertThat(claim("own", "g", "c1", 0)).as("limit 0: the queue's batchSize").hasSize(3);
      assertThat(claim("own", "g", "c1", -1)).as("a negative limit too").hasSize(3);
      assertThat(claim("own", "g", "c1", 5)).as("an explicit limit wins").hasSize(5);
      assertThat(claim("plain", "g", "c1", 0))
          .as("a queue without one: claimBatchSize")
          .hasSize(GroupSettings.DEFAULTS.claimBatchSize());
    }

    @Test
    void aQueuesBatchSizeIsTheDefaultLimitOfAStreamRead() {
      createQueue(QueueConfig.durable("s").type(QueueType.STREAM).batchSize(3).build());
      appendAll("s", 20);
      joinStream("s", "r", "c1");
      assertThat(groups.peek("s", "r", "c1", 0).deliveries()).hasSize(3);
      assertThat(groups.peek("s", "r", "c1", 7).deliveries()).hasSize(7);
    }

    @Test
    void aQueuesHeartbeatTimeoutReplacesTheConsumerTimeoutForItsGroupsShorterOrLonger() {
      createQueue(QueueConfig.durable("fast").heartbeatTimeout(TWO_SECONDS).build());
      createQueue(QueueConfig.durable("slow").heartbeatTimeout(Duration.ofMinutes(10)).build());
      createQueue("plain");
      for (String q : List.of("fast", "slow", "plain")) {
        joinQueue(q, "g", "c1");
      }

      clock.advance(TWO_SECONDS);
      assertThat(groups.removeStaleConsumers(clock.instant()))
          .as("a heartbeat exactly at the cutoff is not stale")
          .isEmpty();
      clock.advance(Duration.ofMillis(1));
      assertThat(groups.removeStaleConsumers(clock.instant()))
          .as("2 s after its last heartbeat, while the manager's consumerTimeout is 2 min")
          .containsExactly(new RemovedConsumers("fast", "g", List.of("c1")));

      clock.set(T0.plus(GroupSettings.DEFAULTS.consumerTimeout()).plusMillis(1));
      assertThat(groups.removeStaleConsumers(clock.instant()))
          .as("the queue without one: consumerTimeout; the 10 min queue keeps its member")
          .containsExactly(new RemovedConsumers("plain", "g", List.of("c1")));

      clock.set(T0.plus(Duration.ofMinutes(10)).plusMillis(1));
      assertThat(groups.removeStaleConsumers(clock.instant()))
          .containsExactly(new RemovedConsumers("slow", "g", List.of("c1")));
    }

    @Test
    void claimsOnAQueueWithAShortHeartbeatTimeoutWriteTheirHeartbeatsOftenEnough() {
      createQueue(QueueConfig.durable("fast").heartbeatTimeout(TWO_SECONDS).build());
      appendAll("fast", 10);
      joinQueue("fast", "g", "c1");
      for (int i = 0; i < 5; i++) {
        clock.advance(Duration.ofSeconds(1));
        claim("fast", "g", "c1", 1); // a heartbeat, written at most every tenth of 2 s
      }
      clock.advance(Duration.ofMillis(1500));
      assertThat(groups.removeStaleConsumers(clock.instant())).isEmpty();
      assertThat(state("fast", "g").consumers().get("c1").lastHeartbeat())
          .isEqualTo(T0.plusSeconds(5));
    }

    @Test
    void theEngineLearnsAQueuesConsumerTimeoutAtAJoinAndForgetsItWithTheQueue() {
      Duration manager = GroupSettings.DEFAULTS.consumerTimeout();
      createQueue(QueueConfig.durable("fast").heartbeatTimeout(TWO_SECONDS).build());
      assertThat(groups.consumerTimeout("fast")).as("not seen yet").isEqualTo(manager);
      assertThat(groups.shortestConsumerTimeout()).isEqualTo(manager);

      joinQueue("fast", "g", "c1");
      assertThat(groups.consumerTimeout("fast")).isEqualTo(TWO_SECONDS);
      assertThat(groups.shortestConsumerTimeout()).isEqualTo(TWO_SECONDS);
      assertThat(coordinator(GroupSettings.DEFAULTS).consumerTimeout("fast"))
          .as("a new engine reads it from the store")
          .isEqualTo(TWO_SECONDS);

      store.updateQueue(store.getQueue("fast").toBuilder().heartbeatTimeout(Duration.ZERO).build());
      groups.removeStaleConsumers(clock.instant());
      assertThat(groups.consumerTimeout("fast")).as("seen by the sweep").isEqualTo(manager);

      store.updateQueue(store.getQueue("fast").toBuilder().heartbeatTimeout(TWO_SECONDS).build());
      groups.removeStaleConsumers(clock.instant());
      assertThat(groups.shortestConsumerTimeout()).isEqualTo(TWO_SECONDS);
      groups.deleteGroup("fast", "g");
      store.deleteQueue("fast");
      groups.removeStaleConsumers(clock.instant());
      assertThat(groups.shortestConsumerTimeout()).as("the queue is gone").isEqualTo(manager);
    }

    @Test
    void settingsResolveAQueuesOwnValuesAndZeroDefersToTheEngine() {
      GroupSettings settings = GroupSettings.DEFAULTS;
      QueueConfig plain = QueueConfig.durable("q").build();
      QueueConfig own =
          plain.toBuilder().batchSize(3).heartbeatTimeout(Duration.ofSeconds(5)).build();
      assertThat(settings.claimBatchSize(plain)).isEqualTo(settings.claimBatchSize());
      assertThat(settings.consumerTimeout(plain)).isEqualTo(settings.consumerTimeout());
      assertThat(settings.claimBatchSize(own)).isEqualTo(3);
      assertThat(settings.consumerTimeout(own)).isEqualTo(Duration.ofSeconds(5));
    }
  }

  @Nested
  class Retention {
    @Test
    void aClassicQueueWithoutQueueModeGroupsIsNotTruncated() {
      createQueue("q");
      appendAll("q", 5);
      createQueue(
          QueueConfig.durable("p").retention(new RetentionPolicy(Duration.ZERO, 0, 2)).build());
      appendAll("p", 5);
      joinStream("q", "r", "c1");
      groups.commitCursor("q", "r", 5);
      assertThat(groups.retentionPass()).isEmpty();
      assertThat(store.head("q")).isZero();
      assertThat(store.head("p")).isZero();
    }

    @Test
    void aClassicQueueIsTruncatedBelowTheLowestCommittedOfItsQueueModeGroups() {
      createQueue("q");
      appendAll("q", 10);
      joinQueue("q", "a", "c1");
      joinQueue("q", "b", "c1");
      joinStream("q", "s", "c1");
      claim("q", "a", "c1", 6).forEach(GroupDelivery::ack);
      List<GroupDelivery> b = claim("q", "b", "c1", 4);
      b.get(0).ack();
      b.get(1).ack();
      b.get(3).ack();
      assertThat(groups.retentionPass()).containsExactly(Map.entry("q", 2L));
      assertThat(store.head("q")).isEqualTo(2);
    }

    @Test
    void aClassicQueuesRetentionPolicyOnlyKeepsMore() {
      createQueue(
          QueueConfig.durable("q").retention(new RetentionPolicy(Duration.ZERO, 0, 8)).build());
      appendAll("q", 10);
      joinQueue("q", "g", "c1");
      claim("q", "g", "c1", 10).forEach(GroupDelivery::ack);
      groups.retentionPass();
      assertThat(store.head("q")).as("committed 10, policy keeps the last 8").isEqualTo(2);
    }

    @Test
    void aStreamIsTruncatedByItsPolicyOnlyAndStreamGroupsDoNotHoldItBack() {
      createQueue(
          QueueConfig.durable("s")
              .type(QueueType.STREAM)
              .retention(new RetentionPolicy(Duration.ofMinutes(10), 0, 0))
              .build());
      createQueue(QueueConfig.durable("t").type(QueueType.STREAM).build());
      for (int i = 0; i < 10; i++) {
        append("s", "m" + i);
        append("t", "m" + i);
        clock.advance(Duration.ofMinutes(2));
      }
      joinStream("s", "r", "c1");
      joinStream("t", "r", "c1");
      // now = T0 + 20 min: keep messages created at or after T0 + 10 min (offsets 5..9)
      assertThat(groups.retentionPass()).containsExactly(Map.entry("s", 5L));
      assertThat(store.head("t")).as("no policy").isZero();
    }

    @Test
    void streamPoliciesByMessagesAndBytesTakeTheMostAggressive() {
      createQueue(
          QueueConfig.durable("s")
              .type(QueueType.STREAM)
              .retention(new RetentionPolicy(Duration.ZERO, 1, 7))
              .build());
      appendAll("s", 10);
      groups.retentionPass();
      assertThat(store.head("s")).as("1 byte fits nothing: the bytes policy wins").isEqualTo(10);
    }

    @Test
    void queueModeGroupsOnAStreamStillHoldItsRetentionBack() {
      createQueue(
          QueueConfig.durable("s")
              .type(QueueType.STREAM)
              .retention(new RetentionPolicy(Duration.ZERO, 0, 2))
              .build());
      appendAll("s", 10);
      joinQueue("s", "w", "c1");
      claim("s", "w", "c1", 4).forEach(GroupDelivery::ack);
      groups.retentionPass();
      assertThat(store.head("s")).isEqualTo(4);
    }

    @Test
    void expiredEphemeralQueuesAreDeletedWithTheirGroups() {
      createQueue(QueueConfig.ephemeral("e").expiresAfter(Duration.ofMinutes(5)).build());
      createQueue(QueueConfig.ephemeral("never").build());
      createQueue("d");
      appendAll("e", 3);
      joinQueue("e", "g", "c1");
      claim("e", "g", "c1", 3);
      joinQueue("d", "g", "c1");
      groups.leave("e", "", "g", "c1");
      groups.leave("d", "", "g", "c1");
      assertThat(groups.metrics().pelSize()).isEqualTo(3);
      clock.advance(Duration.ofMinutes(5).minusSeconds(1));
      assertThat(groups.expireEphemeralQueues(clock.instant())).isEmpty();
      clock.advance(Duration.ofSeconds(1));
      assertThat(groups.expireEphemeralQueues(clock.instant())).containsExactly("e");
      assertThat(store.listQueues())
          .extracting(QueueConfig::name)
          .containsExactlyInAnyOrder("never", "d");
      assertThat(groups.metrics().pelSize()).isZero();
    }
  }

  @Nested
  class Metrics {
    @Test
    void everyCounterCounts() {
      createQueue("q");
      appendAll("q", 4);
      groups = coordinator(GroupSettings.DEFAULTS.withMaxDeliveryCount(2));
      joinQueue("q", "g", "c1");
      List<GroupDelivery> ds = claim("q", "g", "c1", 10); // 4 successes + 1 failure
      GroupMetrics m = groups.metrics();
      assertThat(m.claimAttempts()).isEqualTo(5);
      assertThat(m.claimSuccesses()).isEqualTo(4);
      assertThat(m.claimFailures()).isEqualTo(1);
      assertThat(m.claimSuccessRate()).isEqualTo(0.8);
      assertThat(m.pelSize()).isEqualTo(4);
      assertThat(m.pelHighWater()).isEqualTo(4);
      assertThat(m.claimLatencyNanos()).isPositive();

      ds.get(0).ack();
      ds.get(1).nack(Duration.ZERO);
      ds.get(2).reject("r");
      clock.advance(VISIBILITY); // offset 3 becomes stealable
      List<GroupDelivery> stolen = claim("q", "g", "c1", 10); // steals 1 and 3
      assertThat(offsets(stolen)).containsExactly(1L, 3L);
      clock.advance(VISIBILITY); // both reach maxDeliveryCount 2: poison
      assertThat(claim("q", "g", "c1", 10)).isEmpty();

      m = groups.metrics();
      assertThat(m.acks()).isEqualTo(1);
      assertThat(m.nacks()).isEqualTo(1);
      assertThat(m.rejects()).isEqualTo(1);
      assertThat(m.dlqMoves()).as("1 reject + 2 poison").isEqualTo(3);
      assertThat(m.stealAttempts()).isEqualTo(4);
      assertThat(m.stealSuccesses()).isEqualTo(2);
      assertThat(m.stealFailures()).isEqualTo(2);
      assertThat(m.stealSuccessRate()).isEqualTo(0.5);
      assertThat(m.averageStealLatencyNanos()).isPositive();
      assertThat(m.ackLatencyNanos()).isPositive();
      assertThat(m.pelSize()).isZero();
      assertThat(m.pelHighWater()).isEqualTo(4);

      groups.resetMetrics();
      m = groups.metrics();
      assertThat(m.claimAttempts()).isZero();
      assertThat(m.acks()).isZero();
      assertThat(m.dlqMoves()).isZero();
      assertThat(m.averageClaimLatencyNanos()).isZero();
      assertThat(m.pelHighWater()).as("not reset").isEqualTo(4);
    }

    @Test
    void thePelGaugeStartsFromWhatTheStoreHolds() {
      createQueue("q");
      appendAll("q", 3);
      joinQueue("q", "g", "c1");
      claim("q", "g", "c1", 3);
      assertThat(coordinator(GroupSettings.DEFAULTS).metrics().pelSize()).isEqualTo(3);
    }
  }

  /** Proxies over the store's two halves that record the name of every call. */
  @Nested
  class BatchSettlement {
    private CountingStores counting;

    private GroupCoordinator counted(Clock c) {
      counting = new CountingStores(storage);
      groups = GroupCoordinator.builder(counting.queues, counting.groups).clock(c).build();
      return groups;
    }

    @Test
    void aQueueClaimRunsInALazySectionAndTheAckOfWhatItHandedOutInOneMadeDurableAfterIt() {
      createQueue("q");
      appendAll("q", 2);
      counted(clock);
      joinQueue("q", "g", "c1");
      counting.calls.clear();
      List<GroupDelivery> ds = claim("q", "g", "c1", 2);
      assertThat(ds).hasSize(2);
      assertThat(counting.calls)
          .as("a lost claim is a redelivery: the store may commit it without a flush")
          .startsWith("atomicallyLazy")
          .doesNotContain("atomically");
      counting.calls.clear();
      assertThat(groups.ackAll(ds.subList(0, 1))).isEmpty();
      assertThat(counting.calls)
          .as("settled lazily in one store call, made durable once the section is released")
          .containsExactly("atomicallyLazyAck", "acknowledgeAllPending", "awaitDurable");
      counting.calls.clear();
      ds.get(1).ack();
      assertThat(counting.calls)
          .containsExactly("atomicallyLazyAck", "acknowledgePending", "awaitDurable");
    }

    @Test
    void ackAllAcksEveryDeliveryInOneAtomicSectionAndAdvancesCommitted() {
      createQueue("q");
      appendAll("q", 3);
      counted(clock);
      joinQueue("q", "g", "c1");
      List<GroupDelivery> ds = claim("q", "g", "c1", 3);
      counting.calls.clear();
      assertThat(groups.ackAll(List.of(ds.get(2), ds.get(0), ds.get(1)))).isEmpty();
      assertThat(List.copyOf(counting.calls))
          .as("one atomic section, one fenced batch removal for the holder inside it")
          .containsExactly("atomicallyLazyAck", "acknowledgeAllPending", "awaitDurable");
      assertThat(ds).allMatch(GroupDelivery::isSettled);
      ConsumerGroupState g = state("q", "g");
      assertThat(g.pending()).isEmpty();
      assertThat(g.committed()).isEqualTo(3);
    }

    @Test
    void ackAllReadsTheClockOnceForTheWholeBatch() {
      createQueue("q");
      appendAll("q", 5);
      int[] reads = {0};
      Clock countingClock =
          new Clock() {
            @Override
            public Instant instant() {
              reads[0]++;
              return clock.instant();
            }

            @Override
            public java.time.ZoneId getZone() {
              return clock.getZone();
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
              throw new UnsupportedOperationException();
            }
          };
      counted(countingClock);
      joinQueue("q", "g", "c1");
      List<GroupDelivery> ds = claim("q", "g", "c1", 5);
      clock.advance(Duration.ofSeconds(3));
      reads[0] = 0;
      assertThat(groups.ackAll(ds)).isEmpty();
      assertThat(reads[0]).isEqualTo(1);
      assertThat(state("q", "g").updatedAt()).isEqualTo(T0.plusSeconds(3));
    }

    @Test
    void ackAllSkipsAndReturnsDeliveriesAlreadySettledAndAcksTheRest() {
      createQueue("q");
      appendAll("q", 3);
      joinQueue("q", "g", "c1");
      List<GroupDelivery> ds = claim("q", "g", "c1", 3);
      ds.get(1).ack();
      assertThat(groups.ackAll(ds)).containsExactly(ds.get(1));
      assertThat(ds).allMatch(GroupDelivery::isSettled);
      assertThat(state("q", "g").pending()).isEmpty();
      assertThat(groups.metrics().acks())
          .as("the single ack and the two of the batch")
          .isEqualTo(3);
      assertThatThrownBy(ds.get(0)::ack).isInstanceOf(DeliveryAlreadySettledException.class);
    }

    @Test
    void aDeliveryListedTwiceIsAckedOnceAndReportedOnce() {
      createQueue("q");
      appendAll("q", 2);
      joinQueue("q", "g", "c1");
      List<GroupDelivery> ds = claim("q", "g", "c1", 2);
      assertThat(groups.ackAll(List.of(ds.get(0), ds.get(1), ds.get(0))))
          .containsExactly(ds.get(0));
      assertThat(groups.metrics().acks()).isEqualTo(2);
      assertThat(groups.metrics().pelSize()).isZero();
    }

    @Test
    void ackAllIsFencedAStolenDeliveryIsReturnedUnsettledAndItsEntryKept() {
      createQueue("q");
      appendAll("q", 2);
      joinQueue("q", "g", "c1");
      joinQueue("q", "g", "c2");
      GroupDelivery stale = claim("q", "g", "c1", 1).get(0);
      clock.advance(VISIBILITY);
      List<GroupDelivery> c2 = claim("q", "g", "c2", 2); // offset 1 from the cursor, 0 stolen
      assertThat(offsets(c2)).containsExactly(1L, 0L);
      GroupDelivery fresh1 = c2.get(0);
      assertThat(groups.ackAll(List.of(stale, fresh1))).containsExactly(stale);
      assertThat(stale.isSettled()).isFalse();
      assertThat(fresh1.isSettled()).isTrue();
      ConsumerGroupState g = state("q", "g");
      assertThat(g.pending())
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.offset()).isZero();
                assertThat(e.consumerId()).isEqualTo("c2");
                assertThat(e.deliveryCount()).isEqualTo(2);
              });
      assertThat(g.committed()).as("offset 0 is still pending").isZero();
      assertThatThrownBy(stale::ack)
          .as("back to unsettled, like a failed single ack")
          .isInstanceOf(MessageNotPendingException.class);
      assertThat(groups.metrics().acks()).isEqualTo(1);
      assertThat(groups.metrics().pelSize()).isEqualTo(1);
    }

    @Test
    void ackAllCountsEveryAckAndAddsTheCallsTimeToTheAckLatencyOnce() {
      createQueue("q");
      appendAll("q", 4);
      joinQueue("q", "g", "c1");
      List<GroupDelivery> ds = claim("q", "g", "c1", 4);
      groups.resetMetrics();
      assertThat(groups.ackAll(ds)).isEmpty();
      GroupMetrics m = groups.metrics();
      assertThat(m.acks()).isEqualTo(4);
      assertThat(m.pelSize()).isZero();
      assertThat(m.pelHighWater()).isEqualTo(4);
      assertThat(m.ackLatencyNanos()).isPositive();
      assertThat(m.averageAckLatencyNanos()).isEqualTo(m.ackLatencyNanos() / 4.0);
    }

    @Test
    void ackAllCheckpointsAStreamGroupPastItsHighestOffset() {
      createQueue("s");
      appendAll("s", 3);
      joinStream("s", "r", "c1");
      List<GroupDelivery> ds = groups.peek("s", "r", "c1", 3).deliveries();
      assertThat(groups.ackAll(List.of(ds.get(2), ds.get(0)))).isEmpty();
      assertThat(state("s", "r").committed()).isEqualTo(3);
      assertThat(groups.metrics().acks()).isEqualTo(2);
    }

    @Test
    void ackAllRefusesDeliveriesOfAnotherGroupOrCoordinatorBeforeSettlingAny() {
      createQueue("q");
      appendAll("q", 2);
      joinQueue("q", "g", "c1");
      joinQueue("q", "h", "c1");
      GroupDelivery g0 = claim("q", "g", "c1", 1).get(0);
      GroupDelivery h0 = claim("q", "h", "c1", 1).get(0);
      assertThatThrownBy(() -> groups.ackAll(List.of(g0, h0)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("delivery 1")
          .hasMessageContaining("group=h")
          .hasMessageContaining("expected group g of queue q");
      GroupCoordinator other = coordinator(GroupSettings.DEFAULTS);
      assertThatThrownBy(() -> other.ackAll(List.of(g0)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("another coordinator");
      assertThatThrownBy(() -> groups.ackAll(java.util.Arrays.asList(g0, null)))
          .isInstanceOf(NullPointerException.class)
          .hasMessageContaining("delivery 1");
      assertThat(g0.isSettled()).isFalse();
      assertThat(h0.isSettled()).isFalse();
      assertThat(state("q", "g").pending()).hasSize(1);
      assertThat(groups.metrics().acks()).isZero();
    }

    @Test
    void anEmptyBatchDoesNothing() {
      createQueue("q");
      counted(clock);
      joinQueue("q", "g", "c1");
      counting.calls.clear();
      assertThat(groups.ackAll(List.of())).isEmpty();
      assertThat(counting.calls).isEmpty();
      assertThat(groups.metrics().ackLatencyNanos()).isZero();
    }

    @Test
    void aStoreFailureReturnsEveryDeliveryToUnsettledAndCountsNoAck() {
      createQueue("q");
      appendAll("q", 3);
      ConsumerGroupStore real = storage.groups();
      boolean[] fail = {true}; // once
      ConsumerGroupStore failing =
          (ConsumerGroupStore)
              java.lang.reflect.Proxy.newProxyInstance(
                  ConsumerGroupStore.class.getClassLoader(),
                  new Class<?>[] {ConsumerGroupStore.class},
                  (p, method, args) -> {
                    if (fail[0] && method.getName().equals("acknowledgeAllPending")) {
                      fail[0] = false;
                      throw new QueueStoreException("q", "disk on fire");
                    }
                    try {
                      return method.invoke(real, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                      throw e.getCause();
                    }
                  });
      groups = GroupCoordinator.builder(storage.queues(), failing).clock(clock).build();
      joinQueue("q", "g", "c1");
      List<GroupDelivery> ds = claim("q", "g", "c1", 3);
      assertThatThrownBy(() -> groups.ackAll(ds))
          .isInstanceOf(QueueStoreException.class)
          .hasMessageContaining("disk on fire");
      assertThat(ds).noneMatch(GroupDelivery::isSettled);
      assertThat(groups.metrics().acks()).isZero();
      assertThat(groups.metrics().pelSize()).isEqualTo(3);
      assertThat(state("q", "g").pending()).hasSize(3);
      assertThat(groups.ackAll(ds)).as("unsettled again: a retry settles them").isEmpty();
      assertThat(ds).allMatch(GroupDelivery::isSettled);
      assertThat(groups.metrics().acks()).isEqualTo(3);
    }

    @Test
    void deliveriesOfSeveralHoldersAreAckedWithOneStoreCallPerHolder() {
      createQueue("q");
      appendAll("q", 4);
      counted(clock);
      joinQueue("q", "g", "c1");
      joinQueue("q", "g", "c2");
      List<GroupDelivery> c1 = claim("q", "g", "c1", 2);
      List<GroupDelivery> c2 = claim("q", "g", "c2", 2);
      counting.calls.clear();
      assertThat(groups.ackAll(List.of(c1.get(0), c2.get(0), c1.get(1), c2.get(1)))).isEmpty();
      assertThat(List.copyOf(counting.calls))
          .containsExactly(
              "atomicallyLazy", "acknowledgeAllPending", "acknowledgeAllPending", "awaitDurable");
      assertThat(state("q", "g").pending()).isEmpty();
      assertThat(state("q", "g").committed()).isEqualTo(4);
    }
  }

  private static final class CountingStores {
    final List<String> calls = java.util.Collections.synchronizedList(new ArrayList<>());
    final io.queuebridge.core.store.QueueStore queues;
    final io.queuebridge.core.store.ConsumerGroupStore groups;

    CountingStores(Storage storage) {
      queues = proxy(io.queuebridge.core.store.QueueStore.class, storage.queues());
      groups = proxy(io.queuebridge.core.store.ConsumerGroupStore.class, storage.groups());
    }

    private <T> T proxy(Class<T> type, T delegate) {
      return type.cast(
          java.lang.reflect.Proxy.newProxyInstance(
              type.getClassLoader(),
              new Class<?>[] {type},
              (p, method, args) -> {
                calls.add(method.getName());
                try {
                  return method.invoke(delegate, args);
                } catch (java.lang.reflect.InvocationTargetException e) {
                  throw e.getCause();
                }
              }));
    }
  }
}
