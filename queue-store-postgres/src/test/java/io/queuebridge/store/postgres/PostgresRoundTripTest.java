package io.queuebridge.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.GroupOverview;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Round trips to the server of the hot paths, counted on the wire: every {@code Sync} message the
 * driver sends from the test thread is one round trip (the driver then waits for the server's
 * {@code ReadyForQuery}); the driver logs each at {@code FINEST}. Other threads (the listener, the
 * pool's housekeeping) are not counted.
 */
class PostgresRoundTripTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final Logger WIRE = Logger.getLogger("org.postgresql.core.v3.QueryExecutorImpl");

  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();
  private Storage storage;
  private Level wireLevel;
  private boolean wireParents;
  private final SyncCounter syncs = new SyncCounter();

  /** Counts the driver's {@code FE=> Sync} records of one thread. */
  private static final class SyncCounter extends Handler {
    volatile long thread = -1;
    final AtomicInteger count = new AtomicInteger();

    @Override
    public void publish(LogRecord r) {
      if (r.getLongThreadID() == thread
          && r.getMessage() != null
          && r.getMessage().contains("FE=> Sync")) {
        count.incrementAndGet();
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }

  @BeforeEach
  void open() {
    storage = QueueStores.open("postgres", database.config("rt" + System.nanoTime()));
    wireLevel = WIRE.getLevel();
    wireParents = WIRE.getUseParentHandlers();
    WIRE.setUseParentHandlers(false);
    WIRE.addHandler(syncs);
    WIRE.setLevel(Level.FINEST);
  }

  @AfterEach
  void close() {
    WIRE.setLevel(wireLevel);
    WIRE.removeHandler(syncs);
    WIRE.setUseParentHandlers(wireParents);
    storage.close();
  }

  /** The round trips {@code call} makes from this thread. */
  private <T> int roundTrips(Supplier<T> call) {
    syncs.count.set(0);
    syncs.thread = Thread.currentThread().getId();
    try {
      call.get();
    } finally {
      syncs.thread = -1;
    }
    return syncs.count.get();
  }

  private static List<Message> messages(int n) {
    List<Message> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(
          Message.builder()
              .topic("work")
              .value(("m" + i).getBytes(StandardCharsets.UTF_8))
              .build());
    }
    return out;
  }

  @Test
  void anAppendIsOneRoundTripSyncOrNotAndWithCheckpoints() {
    storage.queues().createQueue(QueueConfig.durable("work").build());
    storage.queues().appendBatch("work", messages(3)); // warm the pool
    int batch = roundTrips(() -> storage.queues().appendBatch("work", messages(100)));
    int sync =
        roundTrips(
            () -> {
              try {
                return storage
                    .queues()
                    .appendBatchAndSync("work", messages(100), Map.of("p0", "1", "p1", "2"));
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    System.out.printf(
        "round trips: appendBatch(100) %d, appendBatchAndSync(100) %d%n", batch, sync);
    assertThat(batch).as("appendBatch of 100").isEqualTo(1);
    assertThat(sync).as("appendBatchAndSync of 100 with two checkpoints").isEqualTo(1);
    assertThat(storage.queues().tail("work")).isEqualTo(203);
    assertThat(storage.queues().checkpoints("work")).isEqualTo(Map.of("p0", "1", "p1", "2"));
    assertThat(storage.queues().readBatch("work", 100, 200))
        .extracting(Message::offset)
        .first()
        .isEqualTo(100L);
  }

  @Test
  void theStoreCallsOfAClaimAndABatchAckCarryTheLockAndCommitOnce() {
    storage.queues().createQueue(QueueConfig.durable("work").build());
    storage.queues().appendBatch("work", messages(20));
    ConsumerGroupStore groups = storage.groups();
    GroupCoordinator coordinator =
        GroupCoordinator.builder(storage).clock(Clock.fixed(T0, ZoneOffset.UTC)).build();
    coordinator.join("work", "", "g", "c", CursorOption.resume(GroupMode.QUEUE));
    roundTrips(() -> groups.overview("work", "g")); // warm the pool

    int overview = roundTrips(() -> groups.overview("work", "g"));
    int overviewWithMessages = roundTrips(() -> groups.overview("work", "g", 10));
    int claimSection =
        roundTrips(
            () ->
                groups.atomically(
                    "work",
                    "g",
                    () -> {
                      groups.overview("work", "g");
                      groups.claimPending(
                          "work", "g", List.of(entry(0), entry(1), entry(2)), 3, T0);
                      return null;
                    }));
    boolean[] removed = new boolean[3];
    int ackSection =
        roundTrips(
            () ->
                groups.atomically(
                    "work",
                    "g",
                    () ->
                        groups.acknowledgeAllPending(
                            "work",
                            "g",
                            "c",
                            new long[] {0, 1, 2},
                            new int[] {1, 1, 1},
                            removed,
                            T0)));
    groups.claimPending("work", "g", List.of(entry(0), entry(1), entry(2)), 3, T0);
    boolean[] removedAlone = new boolean[3];
    int ackAlone =
        roundTrips(
            () ->
                groups.atomicallyLazyAck(
                    "work",
                    "g",
                    () ->
                        groups.acknowledgeAllPending(
                            "work",
                            "g",
                            "c",
                            new long[] {0, 1, 2},
                            new int[] {1, 1, 1},
                            removedAlone,
                            T0)));
    int flush = roundTrips(groups::awaitDurable);
    int empty = roundTrips(() -> groups.atomically("work", "g", () -> null));

    // the engine's calls: at most these (the engine decides which store calls it makes)
    List<GroupDelivery> claimed = new ArrayList<>();
    int claim = roundTrips(() -> claimed.addAll(coordinator.claimBatch("work", "g", "c", 10)));
    int ack = roundTrips(() -> coordinator.ackAll(claimed));
    List<GroupDelivery> one = coordinator.claimBatch("work", "g", "c", 1);
    int single =
        roundTrips(
            () -> {
              one.get(0).ack();
              return null;
            });
    System.out.printf(
        "round trips: overview %d, atomically{overview, claimPending(3)} %d,"
            + " atomically{acknowledgeAllPending(3)} %d, atomicallyLazyAck{acknowledgeAllPending(3)}"
            + " %d, awaitDurable %d, atomically{} %d; claimBatch(10) %d, ackAll(10) %d, ack() %d%n",
        overview, claimSection, ackSection, ackAlone, flush, empty, claim, ack, single);

    assertThat(overview).as("overview").isEqualTo(1);
    assertThat(overviewWithMessages).as("overview with 10 messages from the cursor").isEqualTo(1);
    assertThat(claimSection)
        .as(
            "atomically { overview, claimPending }: the lock rides on the first statement,"
                + " claimPending on the COMMIT")
        .isEqualTo(2);
    assertThat(ackSection).as("atomically { acknowledgeAllPending of 3 }").isEqualTo(2);
    assertThat(removed).containsExactly(true, true, true);
    assertThat(ackAlone)
        .as("atomicallyLazyAck { acknowledgeAllPending of 3 }: lock, statement and commit at once")
        .isEqualTo(1);
    assertThat(removedAlone).containsExactly(true, true, true);
    assertThat(flush).as("awaitDurable").isEqualTo(1);
    assertThat(empty).as("a body without statements takes no lock and commits nothing").isZero();
    assertThat(claimed).hasSize(10);
    assertThat(claim)
        .as(
            "claimBatch of 10: lock + overview (with the queue's configuration and the"
                + " messages from the cursor), claimPending + COMMIT")
        .isLessThanOrEqualTo(2);
    assertThat(ack)
        .as("ackAll of 10: lock + acknowledgeAllPending + commit, then awaitDurable")
        .isLessThanOrEqualTo(2);
    assertThat(single)
        .as("one ack: lock + acknowledgePending + commit, then awaitDurable")
        .isLessThanOrEqualTo(2);
    assertThat(groups.getAllPending("work", "g")).isEmpty();
  }

  @Test
  void theOtherGroupCallsAreOneRoundTripEach() {
    storage.queues().createQueue(QueueConfig.durable("work").build());
    ConsumerGroupStore groups = storage.groups();
    groups.createGroup(ConsumerGroupState.create("work", "g", "", GroupMode.QUEUE, true, T0));
    groups.claimPending(
        "work",
        "g",
        List.of(entry(0), entry(1).withOrderKey("k"), entry(2), PendingEntry.blocked(3, T0, "b")),
        4,
        T0);
    roundTrips(() -> groups.findPending("work", "g", 0)); // warm the pool
    Map<String, Integer> trips = new java.util.LinkedHashMap<>();
    trips.put("findPending", roundTrips(() -> groups.findPending("work", "g", 1)));
    trips.put("duePending", roundTrips(() -> groups.duePending("work", "g", T0, null, 10)));
    trips.put("nextVisible", roundTrips(() -> groups.nextVisible("work", T0)));
    trips.put(
        "firstPendingByKey", roundTrips(() -> groups.firstPendingByKey("work", "g", List.of("k"))));
    trips.put(
        "releaseBlocked",
        roundTrips(() -> groups.releaseBlocked("work", "g", List.of("k", "b"), T0.plusSeconds(5))));
    trips.put("getPending", roundTrips(() -> groups.getPending("work", "g", "c")));
    trips.put("getAllPending", roundTrips(() -> groups.getAllPending("work", "g")));
    trips.put(
        "updatePending",
        roundTrips(
            () -> {
              groups.updatePending("work", "g", entry(2).withVisibleAt(T0.plusSeconds(60)));
              return null;
            }));
    trips.put(
        "transferPending",
        roundTrips(
            () ->
                groups.transferPending(
                    "work",
                    "g",
                    0,
                    "c",
                    "d",
                    T0.plusSeconds(31),
                    java.time.Duration.ofSeconds(30))));
    trips.put(
        "registerConsumer",
        roundTrips(
            () -> {
              groups.registerConsumer(
                  "work", "g", new io.queuebridge.core.store.ConsumerInfo("c", "c", T0, T0));
              return null;
            }));
    System.out.println("round trips: " + trips);
    assertThat(trips).allSatisfy((call, n) -> assertThat(n).as(call).isEqualTo(1));
    ConsumerGroupState g = groups.getGroup("work", "g");
    assertThat(g.pendingAt(0).orElseThrow().consumerId()).isEqualTo("d");
    assertThat(g.pendingAt(2).orElseThrow().visibleAt()).isEqualTo(T0.plusSeconds(60));
    assertThat(g.pendingAt(3).orElseThrow())
        .as("the blocked entry of key b, released by releaseBlocked")
        .isEqualTo(PendingEntry.blocked(3, T0, "b").withVisibleAt(T0.plusSeconds(5)));
    assertThat(g.pendingAt(1).orElseThrow().visibleAt())
        .as("key k's entry is held, not blocked: left as it was")
        .isEqualTo(T0.plusSeconds(30));
    assertThat(g.consumers()).containsOnlyKeys("c");
  }

  @Test
  void theLockIsTakenByTheFirstStatementThatRunsEvenAfterACallRefusedBeforeTheServer()
      throws Exception {
    storage.queues().createQueue(QueueConfig.durable("work").build());
    ConsumerGroupStore groups = storage.groups();
    groups.createGroup(ConsumerGroupState.create("work", "g", "", GroupMode.QUEUE, true, T0));
    try (java.sql.Connection other = database.connect()) {
      groups.atomically(
          "work",
          "g",
          () -> {
            assertThat(advisoryLocks(other)).as("before any statement").isZero();
            // refused before reaching the server: the lock stays pending
            org.assertj.core.api.Assertions.assertThatThrownBy(
                    () -> groups.overview("work", "no\0group"))
                .isInstanceOf(io.queuebridge.core.errors.GroupNotFoundException.class);
            assertThat(advisoryLocks(other)).isZero();
            groups.overview("work", "g");
            assertThat(advisoryLocks(other)).as("after the first statement").isOne();
            return null;
          });
      assertThat(advisoryLocks(other)).as("released at commit").isZero();
    }
  }

  private static int advisoryLocks(java.sql.Connection c) {
    try (java.sql.Statement st = c.createStatement();
        java.sql.ResultSet rs =
            st.executeQuery(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                    + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")) {
      rs.next();
      return rs.getInt(1);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void anOverviewReadsTheMessagesFromTheCursorAsReadBatchWould() {
    storage.queues().createQueue(QueueConfig.durable("work").build());
    storage.queues().appendBatch("work", messages(20));
    ConsumerGroupStore groups = storage.groups();
    groups.createGroup(ConsumerGroupState.create("work", "g", "", GroupMode.QUEUE, true, T0));
    groups.claimPending("work", "g", List.of(entry(0), entry(1)), 2, T0);
    for (int limit : new int[] {1, 5, 18, 30}) {
      GroupOverview o = groups.overview("work", "g", limit);
      assertThat(o.fromCursorLimit()).isEqualTo(limit);
      assertThat(o.fromCursor())
          .as("limit %d", limit)
          .usingRecursiveFieldByFieldElementComparator()
          .containsExactlyElementsOf(storage.queues().readBatch("work", 2, limit));
      assertThat(o.withFromCursor(List.of(), 1).group())
          .isEqualTo(groups.overview("work", "g").group());
    }
    assertThat(groups.overview("work", "g", 0).fromCursor()).isNull();
    storage.queues().truncate("work", 5);
    assertThat(groups.overview("work", "g", 3).fromCursor())
        .extracting(Message::offset)
        .as("from the head when the cursor is below it")
        .containsExactly(5L, 6L, 7L);
    assertThatThrownBy(() -> groups.overview("work", "nope", 3))
        .isInstanceOf(io.queuebridge.core.errors.GroupNotFoundException.class);
    assertThatThrownBy(() -> groups.overview("gone", "g", 3))
        .isInstanceOf(io.queuebridge.core.errors.QueueNotFoundException.class);
  }

  private static PendingEntry entry(long offset) {
    return new PendingEntry(offset, "c", T0, 1, T0, T0.plusSeconds(30), "");
  }
}
