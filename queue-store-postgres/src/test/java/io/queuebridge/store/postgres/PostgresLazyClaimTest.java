package io.queuebridge.store.postgres;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Which transactions commit without waiting for the WAL flush: a lazy section ({@code
 * atomicallyLazy}, the engine's claims) and {@code claimDue}; an append inside a lazy section turns
 * the flush wait back on, and every other section and statement keeps the server's setting. Read on
 * the server, inside each transaction, as {@code current_setting('synchronous_commit')}.
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
}
