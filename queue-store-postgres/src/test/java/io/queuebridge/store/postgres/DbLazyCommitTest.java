package io.queuebridge.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The commit of {@link Db#atomicallyLazy}: {@code synchronous_commit} off from the statement that
 * takes the group's lock on, for that transaction only; a durable section nested in a lazy one
 * makes their transaction durable, whether the outer lock is taken yet or not; a lazy one nested in
 * a durable one stays durable. One pooled connection, so every section and read uses the same
 * session. Skipped, visibly, without the PostgreSQL test server.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class DbLazyCommitTest {
  private PostgresTestDatabase database;
  private Db db;

  @BeforeEach
  void setUp() {
    database = PostgresTestDatabase.create();
    Map<String, String> config = database.config("lazy");
    config.put("pool.size", "1");
    db = new Db(PostgresConfig.parse(config), false);
  }

  @AfterEach
  void tearDown() {
    if (db != null) {
      db.close();
    }
    database.close();
  }

  /** {@code synchronous_commit} as the calling thread's transaction (or a pooled one) sees it. */
  private String synchronousCommit() {
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
  void aLazySectionCommitsWithoutTheFlushFromItsFirstStatementAndOnlyItself() {
    String session = synchronousCommit();
    assertThat(session).isNotEqualTo("off");
    List<String> seen = new ArrayList<>();
    db.atomicallyLazy(
        "q",
        "g",
        () -> {
          seen.add(synchronousCommit()); // carries the lock statement
          seen.add(synchronousCommit());
          return null;
        });
    assertThat(seen).containsExactly("off", "off");
    assertThat(synchronousCommit()).as("after the lazy transaction").isEqualTo(session);
    assertThat(db.atomically("q", "g", this::synchronousCommit)).isEqualTo(session);
  }

  @Test
  void aLockTakenByARoundTripOfItsOwnTurnsItOffToo() {
    String seen =
        db.atomicallyLazy(
            "q",
            "g",
            () -> {
              db.write("q", c -> null); // multi-statement work: the lock first, on its own
              return synchronousCommit();
            });
    assertThat(seen).isEqualTo("off");
  }

  @Test
  void aDurableSectionInALazyOneMakesTheirTransactionDurable() {
    String session = synchronousCommit();
    List<String> seen = new ArrayList<>();
    db.atomicallyLazy(
        "q",
        "g",
        () -> {
          seen.add(synchronousCommit());
          seen.add(db.atomically("q", "h", this::synchronousCommit));
          seen.add(synchronousCommit());
          return null;
        });
    assertThat(seen).as("outer lock taken first").containsExactly("off", session, session);

    String pending =
        db.atomicallyLazy(
            "q",
            "g",
            () -> {
              String inner = db.atomically("q", "h", this::synchronousCommit);
              assertThat(synchronousCommit()).isEqualTo(inner);
              return inner;
            });
    assertThat(pending).as("outer lock still pending").isEqualTo(session);
  }

  @Test
  void aLazySectionInADurableOneStaysDurable() {
    String session = synchronousCommit();
    String seen =
        db.atomically("q", "g", () -> db.atomicallyLazy("q", "h", this::synchronousCommit));
    assertThat(seen).isEqualTo(session);
  }
}
