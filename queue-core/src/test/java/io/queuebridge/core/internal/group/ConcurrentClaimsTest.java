package io.queuebridge.core.internal.group;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.ClaimsSwitch;
import io.queuebridge.core.store.contract.CompetingKeyConsumers;
import io.queuebridge.core.store.contract.CompetingMembers;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The engine's concurrent path in one process: on a store whose {@code claimDue} and acks are
 * atomic by themselves, claims from the PEL and acks of unkeyed deliveries take neither the
 * coordinator's lock nor the group's section, so members of one engine claim and settle in
 * parallel. The memory store's {@code claimDue} is one step under the group's monitor; it answers
 * {@code concurrentClaims()} false (see ARCHITECTURE), so these tests switch its group half to
 * answer true ({@link ClaimsSwitch}), and check that members sharing one engine never hold one
 * message at once, lose none, keep each key's order, and that a claim and an ack go through while
 * another call holds the section.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ConcurrentClaimsTest {
  private static final int MEMBERS = 8;

  private static GroupCoordinator engine(Storage storage) {
    return GroupCoordinator.builder(
            storage.queues(), ClaimsSwitch.answering(storage.groups(), true))
        .build();
  }

  @Test
  void membersOfOneEngineGetEachMessageOnceAtATimeAndLoseNone() throws Exception {
    try (Storage storage = QueueStores.memory()) {
      storage.queues().createQueue(QueueConfig.durable("q").build());
      int messages = 3000; // many read aheads
      List<Message> batch = new ArrayList<>();
      for (int i = 0; i < messages; i++) {
        batch.add(Message.builder().topic("q").value(("v" + i).getBytes(UTF_8)).build());
      }
      storage.queues().appendBatch("q", batch);
      GroupCoordinator engine = engine(storage);
      List<CompetingMembers.Member> members = new ArrayList<>();
      for (int i = 0; i < MEMBERS; i++) {
        String me = "m" + i;
        engine.join("q", "", "g", me, null);
        members.add(
            new CompetingMembers.Member(n -> engine.claimBatch("q", "g", me, n), engine::ackAll));
      }
      CompetingMembers.drainAndCheck(members, messages, 7, 31, Duration.ofSeconds(90));
      ConsumerGroupState g = storage.groups().getGroup("q", "g");
      assertThat(g.pending()).as("nothing left pending").isEmpty();
      assertThat(g.committed()).as("committed up to the tail").isEqualTo(messages);
      long acks = engine.metrics().acks();
      assertThat(acks).as("every ack counted, none lost to a racing update").isEqualTo(messages);
      assertThat(engine.metrics().pelSize()).as("the PEL gauge back at zero").isZero();
    }
  }

  @Test
  void membersOfOneEngineOnAnOrderedQueueKeepEachKeysOrder() throws Exception {
    try (Storage storage = QueueStores.memory()) {
      storage
          .queues()
          .createQueue(QueueConfig.durable("q").ordering(OrderingKey.MESSAGE_KEY).build());
      Map<String, List<Integer>> published = new LinkedHashMap<>();
      List<Message> batch = new ArrayList<>();
      for (int i = 0; i < 2000; i++) {
        String key = "k" + (i * 7 % 29);
        published.computeIfAbsent(key, k -> new ArrayList<>()).add(i);
        batch.add(
            Message.builder()
                .topic("q")
                .key(key.getBytes(UTF_8))
                .value(Integer.toString(i).getBytes(UTF_8))
                .build());
      }
      storage.queues().appendBatch("q", batch);
      GroupCoordinator engine = engine(storage);
      List<Function<Integer, List<GroupDelivery>>> claimers = new ArrayList<>();
      for (int i = 0; i < MEMBERS; i++) {
        String me = "m" + i;
        engine.join("q", "", "g", me, null);
        claimers.add(n -> engine.claimBatch("q", "g", me, n));
      }
      CompetingKeyConsumers.drainAndCheck(claimers, published, Duration.ofSeconds(90));
      assertThat(storage.groups().getGroup("q", "g").pending()).isEmpty();
    }
  }

  @Test
  void aClaimAndAnAckGoThroughWhileAnotherCallHoldsTheSection() throws Exception {
    try (Storage storage = QueueStores.memory()) {
      storage.queues().createQueue(QueueConfig.durable("q").build());
      List<Message> batch = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        batch.add(Message.builder().topic("q").value(("v" + i).getBytes(UTF_8)).build());
      }
      storage.queues().appendBatch("q", batch);
      CountDownLatch holding = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      ThreadLocal<Boolean> holder = ThreadLocal.withInitial(() -> false);
      GroupCoordinator engine =
          GroupCoordinator.builder(
                  storage.queues(),
                  ClaimsSwitch.answering(
                      storage.groups(),
                      true,
                      () -> {
                        if (holder.get()) {
                          holding.countDown();
                          try {
                            release.await();
                          } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                          }
                        }
                      }))
              .build();
      engine.join("q", "", "g", "a", null);
      engine.join("q", "", "g", "b", null);
      // the first claim reads ahead: the entries the later claim takes are in the PEL already
      List<GroupDelivery> first = engine.claimBatch("q", "g", "b", 10);
      assertThat(first).hasSize(10);
      assertThat(engine.ackAll(first)).isEmpty();

      CompletableFuture<Integer> sectioned =
          CompletableFuture.supplyAsync(
              () -> {
                holder.set(true);
                return engine.renew("q", "g", "a", 0L); // takes the lock and the section
              });
      assertThat(holding.await(30, TimeUnit.SECONDS)).as("the renewal holds the section").isTrue();
      try {
        CompletableFuture<List<GroupDelivery>> claimAndAck =
            CompletableFuture.supplyAsync(
                () -> {
                  List<GroupDelivery> got = engine.claimBatch("q", "g", "b", 10);
                  assertThat(engine.ackAll(got)).isEmpty();
                  return got;
                });
        assertThat(claimAndAck.get(30, TimeUnit.SECONDS))
            .extracting(GroupDelivery::offset)
            .containsExactly(10L, 11L, 12L, 13L, 14L, 15L, 16L, 17L, 18L, 19L);
        assertThat(sectioned).as("the section still held").isNotDone();
      } finally {
        release.countDown();
      }
      assertThat(sectioned.get(30, TimeUnit.SECONDS)).isZero();
      assertThat(storage.groups().getGroup("q", "g").committed()).isEqualTo(20);
    }
  }

  @Test
  void anExpiredKeyedEntryDroppedByAClaimReleasesItsKeyInTheSameClaim() {
    MutableClock clock = new MutableClock(Instant.parse("2024-01-01T00:00:00Z"));
    try (Storage storage = QueueStores.memory()) {
      storage
          .queues()
          .createQueue(
              QueueConfig.durable("q")
                  .ordering(OrderingKey.MESSAGE_KEY)
                  .messageTtl(Duration.ofSeconds(100))
                  .deliveryTimeout(Duration.ofSeconds(110))
                  .build());
      GroupCoordinator engine =
          GroupCoordinator.builder(storage.queues(), ClaimsSwitch.answering(storage.groups(), true))
              .clock(clock)
              .build();
      engine.join("q", "", "g", "c1", null);
      engine.join("q", "", "g", "c2", null);
      storage.queues().append("q", keyed("k1", "a1", clock));
      assertThat(engine.claimBatch("q", "g", "c1", 10)).hasSize(1); // never settled
      clock.advance(Duration.ofSeconds(30));
      storage.queues().append("q", keyed("k1", "a2", clock));
      assertThat(engine.claimBatch("q", "g", "c2", 10)).as("a2 waits behind a1").isEmpty();
      // at 110 s a1's visibility passed and it expired at 100 s: dropped, and a2 released and
      // claimed in the same claim
      clock.advance(Duration.ofSeconds(80));
      assertThat(engine.claimBatch("q", "g", "c2", 10))
          .extracting(d -> new String(d.message().value(), UTF_8))
          .containsExactly("a2");
      assertThat(engine.metrics().discarded()).isEqualTo(1);
    }
  }

  /** A keyed message published now, expiring after the queue's 100 s TTL (as a publish stamps). */
  private static Message keyed(String key, String value, MutableClock clock) {
    return Message.builder()
        .topic("q")
        .expiresAt(clock.instant().plusSeconds(100))
        .key(key.getBytes(UTF_8))
        .value(value.getBytes(UTF_8))
        .build();
  }
}
