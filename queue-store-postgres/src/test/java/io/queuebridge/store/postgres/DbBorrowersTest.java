package io.queuebridge.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.errors.QueueStoreException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How callers wait for a pooled connection: in arrival order (a thread that has just given a
 * connection back does not take it again before one already waiting), at most {@code
 * connect.timeout.ms}, with a retriable error naming the setting, and without losing a permit to a
 * timeout or an interrupt. Skipped, visibly, without the PostgreSQL test server.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class DbBorrowersTest {
  private PostgresTestDatabase database;
  private Db db;

  @BeforeEach
  void setUp() {
    database = PostgresTestDatabase.create();
  }

  @AfterEach
  void tearDown() {
    if (db != null) {
      db.close();
    }
    database.close();
  }

  private Db open(int poolSize, int timeoutMs) {
    Map<String, String> config = database.config("borrowers");
    config.put("pool.size", Integer.toString(poolSize));
    config.put("connect.timeout.ms", Integer.toString(timeoutMs));
    db = new Db(PostgresConfig.parse(config), false);
    return db;
  }

  private static Void select(Connection c) throws SQLException {
    try (var s = c.createStatement()) {
      s.execute("SELECT 1");
    }
    return null;
  }

  @Test
  void aWaitingCallerIsServedBeforeTheThreadThatJustGaveTheConnectionBack() {
    Db db = open(1, 60_000);
    List<String> order = new CopyOnWriteArrayList<>();
    for (int round = 0; round < 20; round++) {
      order.clear();
      CompletableFuture<Void> waiter =
          db.read(
              "q",
              c -> {
                CompletableFuture<Void> b =
                    CompletableFuture.runAsync(
                        () ->
                            db.read(
                                "q",
                                c2 -> {
                                  order.add("waiter");
                                  return select(c2);
                                }));
                await().atMost(30, TimeUnit.SECONDS).until(() -> db.borrowersWaiting() == 1);
                return b;
              });
      db.read(
          "q",
          c -> {
            order.add("returner");
            return select(c);
          });
      waiter.join();
      assertThat(order).as("round %d", round).containsExactly("waiter", "returner");
    }
  }

  @Test
  void aCallerThatWaitsLongerThanTheTimeoutGetsARetriableErrorNamingItAndLosesNoPermit() {
    Db db = open(1, 250);
    AtomicBoolean holding = new AtomicBoolean(true);
    db.read(
        "q",
        c -> {
          assertThatThrownBy(
                  () ->
                      CompletableFuture.runAsync(() -> db.read("q", DbBorrowersTest::select))
                          .join())
              .hasCauseInstanceOf(QueueStoreException.class)
              .cause()
              .hasMessageContaining("connect.timeout.ms=250")
              .hasMessageContaining("1 in use");
          holding.set(false);
          return null;
        });
    assertThat(holding).isFalse();
    assertThat(db.borrowersWaiting()).isZero();
    assertThat(db.read("q", DbBorrowersTest::select)).isNull(); // the permit came back
  }

  @Test
  void anInterruptedWaiterKeepsItsInterruptAndLosesNoPermit() {
    Db db = open(1, 60_000);
    db.read(
        "q",
        c -> {
          AtomicBoolean interruptedAfter = new AtomicBoolean();
          Thread t =
              new Thread(
                  () -> {
                    try {
                      db.read("q", DbBorrowersTest::select);
                    } catch (QueueStoreException e) {
                      interruptedAfter.set(Thread.currentThread().isInterrupted());
                    }
                  });
          t.start();
          await().atMost(30, TimeUnit.SECONDS).until(() -> db.borrowersWaiting() == 1);
          t.interrupt();
          await().atMost(30, TimeUnit.SECONDS).until(() -> !t.isAlive());
          assertThat(interruptedAfter).isTrue();
          return null;
        });
    assertThat(db.read("q", DbBorrowersTest::select)).isNull();
    assertThat(db.read("q", DbBorrowersTest::select)).isNull();
  }
}
