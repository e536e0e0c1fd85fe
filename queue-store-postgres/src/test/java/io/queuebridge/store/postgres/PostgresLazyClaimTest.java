package io.queuebridge.store.postgres;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Which transactions commit without waiting for the WAL flush: a lazy section ({@code
 * atomicallyLazy}, the engine's claims) and {@code claimDue}; an append inside a lazy section turns
 * the flush wait back on, and every other section and statement keeps the server's setting. Read on
 * the server, inside each transaction, as {@code current_setting('synchronous_commit')}. And {@code
 * awaitDurable}, which a settlement's lazy section is followed by, flushes the WAL past it; an
 * acknowledgement's one-statement section ({@code atomicallyLazyAck}) takes the group's lock and
 * refuses any other store call.
 */
class PostgresLazyClaimTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();

  private Storage storage;
  private Db db;

  @BeforeEach
  void open() {
    storage = QueueStores.open("postgres", database.config("lazy"));
    db = ((PostgresStorage) storage).db();
    storage.queues().createQueue(QueueConfig.durable("q").build());
    storage
        .groups()
        .createGroup(ConsumerGroupState.create("q", "g", "", GroupMode.QUEUE, true, T0));
  }

  @AfterEach
  void close() {
    storage.groups().deleteGroup("q", "g");
    storage.queues().deleteQueue("q");
    storage.close();
  }

  private static Message message(String value) {
    return Message.builder().value(value.getBytes(UTF_8)).build();
  }

  private String setting() {
    return db.query(
        "q",
        Db.Mode.READ,
        "SELECT current_setting('synchronous_commit')",
        p -> {},
        rs -> {
          rs.next();
          return rs.getString(1);
        });
  }

  @Test
  void aLazySectionCommitsWithoutTheFlushWaitAndADurableOneWithIt() {
    assertThat(storage.groups().atomicallyLazy("q", "g", this::setting)).isEqualTo("off");
    assertThat(storage.groups().atomically("q", "g", this::setting)).isEqualTo("on");
    assertThat(setting()).as("outside any section: the server's setting").isEqualTo("on");
  }

  @Test
  void anAppendInALazySectionMakesItsCommitWaitForTheFlush() {
    String[] seen = new String[2];
    storage
        .groups()
        .atomicallyLazy(
            "q",
            "g",
            () -> {
              seen[0] = setting();
              storage.queues().append("q", message("dead letter"));
              seen[1] = setting();
              return null;
            });
    assertThat(seen).containsExactly("off", "on");
    assertThat(storage.queues().tail("q")).isEqualTo(1);
  }

  @Test
  void anAppendAsTheFirstStatementOfALazySectionKeepsTheFlushWaitToo() {
    String after =
        storage
            .groups()
            .atomicallyLazy(
                "q",
                "g",
                () -> {
                  storage.queues().append("q", message("first"));
                  return setting();
                });
    assertThat(after).isEqualTo("on");
  }

  @Test
  void aSectionNestedInALazyOneJoinsItAsItIs() {
    String nested =
        storage
            .groups()
            .atomicallyLazy(
                "q", "g", () -> storage.groups().atomically("q", "other", this::setting));
    assertThat(nested).isEqualTo("off");
  }

  @Test
  void aLazyStatementOutsideASectionCommitsWithoutTheFlushWaitAndTheNextOneWithIt() {
    String lazy =
        db.queryLazy(
            "q",
            "SELECT current_setting('synchronous_commit')",
            p -> {},
            rs -> {
              rs.next();
              return rs.getString(1);
            });
    assertThat(lazy).isEqualTo("off");
    assertThat(setting()).as("set for that statement's transaction only").isEqualTo("on");
  }

  private String lsn(String function) {
    return db.query(
        "q",
        Db.Mode.READ,
        "SELECT " + function + "()::text",
        p -> {},
        rs -> {
          rs.next();
          return rs.getString(1);
        });
  }

  private boolean flushedTo(String lsn) {
    return db.query(
        "q",
        Db.Mode.READ,
        "SELECT pg_current_wal_flush_lsn() >= ?::pg_lsn",
        p -> p.setString(1, lsn),
        rs -> {
          rs.next();
          return rs.getBoolean(1);
        });
  }

  @Test
  void awaitDurableReturnsOnceTheWalIsFlushedPastALazySectionsCommit() {
    storage
        .groups()
        .atomicallyLazy(
            "q",
            "g",
            () -> {
              storage.groups().setPaused("q", "g", true, T0);
              return null;
            });
    String committed = lsn("pg_current_wal_insert_lsn"); // past the lazy commit's record
    assertThat(storage.groups().awaitDurable()).isTrue();
    assertThat(flushedTo(committed))
        .as(
            "flushed to %s when awaitDurable returned (now %s)",
            committed, lsn("pg_current_wal_flush_lsn"))
        .isTrue();
    assertThat(storage.groups().findGroup("q", "g").orElseThrow().paused()).isTrue();
  }

  @Test
  void awaitDurableInsideASectionLeavesItToThatSectionsCommit() {
    assertThat(storage.groups().atomically("q", "g", () -> storage.groups().awaitDurable()))
        .isFalse();
  }

  private void holdEntry(long offset) {
    storage
        .groups()
        .claimPending(
            "q", "g", List.of(new PendingEntry(offset, "c1", T0, 1, T0, T0)), offset + 1, T0);
  }

  private boolean[] ackInOneStatement(long offset) {
    boolean[] removed = new boolean[1];
    storage
        .groups()
        .atomicallyLazyAck(
            "q",
            "g",
            () ->
                storage
                    .groups()
                    .acknowledgeAllPending(
                        "q", "g", "c1", new long[] {offset}, new int[] {1}, removed, T0));
    return removed;
  }

  @Test
  void anAckInItsOneStatementSectionRemovesTheEntryAndRaisesTheCommittedOffset() {
    storage.queues().append("q", message("m0"));
    holdEntry(0);
    assertThat(ackInOneStatement(0)).containsExactly(true);
    ConsumerGroupState g = storage.groups().findGroup("q", "g").orElseThrow();
    assertThat(g.pending()).isEmpty();
    assertThat(g.committed()).isEqualTo(1);
    assertThat(ackInOneStatement(0)).as("fenced: gone already").containsExactly(false);
  }

  @Test
  void anAckInItsOneStatementSectionWaitsForTheGroupsSection() throws Exception {
    storage.queues().append("q", message("m0"));
    holdEntry(0);
    CountDownLatch inSection = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    CompletableFuture<Object> holder =
        CompletableFuture.supplyAsync(
            () ->
                storage
                    .groups()
                    .atomically(
                        "q",
                        "g",
                        () -> {
                          storage.groups().getPending("q", "g", "c1"); // takes the lock
                          inSection.countDown();
                          try {
                            release.await();
                          } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                          }
                          return null;
                        }));
    inSection.await();
    CompletableFuture<boolean[]> ack = CompletableFuture.supplyAsync(() -> ackInOneStatement(0));
    await()
        .until(
            () ->
                db.query(
                    "q",
                    Db.Mode.READ,
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                        + " AND wait_event = 'advisory' AND datname = current_database()",
                    p -> {},
                    rs -> {
                      rs.next();
                      return rs.getLong(1);
                    }),
            n -> n == 1);
    assertThat(ack).isNotDone();
    release.countDown();
    holder.get();
    assertThat(ack.get()).containsExactly(true);
  }

  @Test
  void aOneStatementSectionRefusesAnyOtherStoreCallAndASecondOne() {
    assertThatThrownBy(
            () ->
                storage
                    .groups()
                    .atomicallyLazyAck("q", "g", () -> storage.groups().findGroup("q", "g")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("group g of queue q")
        .hasMessageContaining("other than an acknowledgement");
    storage.queues().append("q", message("m0"));
    holdEntry(0);
    boolean[] removed = new boolean[1];
    assertThatThrownBy(
            () ->
                storage
                    .groups()
                    .atomicallyLazyAck(
                        "q",
                        "g",
                        () -> {
                          storage
                              .groups()
                              .acknowledgeAllPending(
                                  "q", "g", "c1", new long[] {0}, new int[] {1}, removed, T0);
                          return storage
                              .groups()
                              .acknowledgeAllPending(
                                  "q", "g", "c1", new long[] {0}, new int[] {1}, removed, T0);
                        }))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("a second store call");
    assertThat(removed).as("the first call ran").containsExactly(true);
    assertThat(storage.groups().findGroup("q", "g").orElseThrow().pending()).isEmpty();
  }
}
