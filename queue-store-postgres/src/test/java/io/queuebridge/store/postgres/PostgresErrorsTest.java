package io.queuebridge.store.postgres;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.StoreRefusedException;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Real server errors through the store and the manager: one that retrying cannot mend (the store's
 * role lost its privileges) is a fatal {@link StoreRefusedException} at once, naming the store; one
 * that passes (a lock held past {@code lock_timeout}) is a retriable {@link QueueStoreException}.
 * Skipped, visibly, without the PostgreSQL test server.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PostgresErrorsTest {
  private static final String SCHEMA = "errs";

  private PostgresTestDatabase database;
  private Storage storage;

  @BeforeEach
  void setUp() {
    database = PostgresTestDatabase.create();
  }

  @AfterEach
  void tearDown() {
    if (storage != null) {
      storage.close();
    }
    database.close();
  }

  private Storage open() {
    storage = QueueStores.open("postgres", database.config(SCHEMA));
    return storage;
  }

  private void sql(String statement) throws SQLException {
    try (Connection c = database.connect();
        Statement st = c.createStatement()) {
      st.execute(statement);
    }
  }

  @Test
  void aRoleWithoutPrivilegesOnTheStoresTablesFailsAtOnceAndNotRetriably() throws Exception {
    Storage s = open();
    s.queues().createQueue(QueueConfig.durable("q").topics("t").build());
    QueueManager manager = new QueueManager(s, QueueManagerConfig.defaults());
    sql("REVOKE ALL ON ALL TABLES IN SCHEMA " + SCHEMA + " FROM CURRENT_USER");
    try {
      Throwable read = catchThrowable(() -> s.queues().getQueue("q"));
      assertThat(read)
          .isInstanceOf(StoreRefusedException.class)
          .hasMessageContaining("postgres store postgres:jdbc:postgresql:")
          .hasMessageContaining(database.name() + "#" + SCHEMA)
          .hasMessageContaining("permission denied")
          .hasMessageContaining("[SQLSTATE 42501]");
      assertThat(((QueueException) read).isRetriable()).isFalse();

      Throwable publish =
          catchThrowable(() -> manager.publishTo("q", PublishRequest.of("t", "m".getBytes(UTF_8))));
      assertThat(publish)
          .as("as the connectors see it: through the manager, unchanged")
          .isInstanceOf(StoreRefusedException.class)
          .hasMessageContaining(database.name())
          .hasMessageContaining("42501");
    } finally {
      sql("GRANT ALL ON ALL TABLES IN SCHEMA " + SCHEMA + " TO CURRENT_USER");
    }
    assertThat(s.queues().getQueue("q").name()).as("granted again: the store works").isEqualTo("q");
  }

  @Test
  void aDroppedTableIsFatalToo() throws Exception {
    Storage s = open();
    s.queues().createQueue(QueueConfig.durable("q").build());
    sql("DROP TABLE " + SCHEMA + ".checkpoints");
    Throwable t = catchThrowable(() -> s.queues().checkpoints("q"));
    assertThat(t)
        .isInstanceOf(StoreRefusedException.class)
        .hasMessageContaining(database.name() + "#" + SCHEMA)
        .hasMessageContaining("queue q")
        .hasMessageContaining("[SQLSTATE 42P01]");
  }

  @Test
  void aLockHeldPastTheLockTimeoutIsRetriableAndTheSameCallPassesOnceItIsReleased()
      throws Exception {
    sql("ALTER DATABASE " + database.name() + " SET lock_timeout = '200ms'");
    Storage s = open();
    s.queues().createQueue(QueueConfig.durable("q").build());
    try (Connection holder = database.connect();
        Statement st = holder.createStatement()) {
      holder.setAutoCommit(false);
      st.execute("LOCK TABLE " + SCHEMA + ".queues IN ACCESS EXCLUSIVE MODE");
      Throwable t = catchThrowable(() -> s.queues().getQueue("q"));
      assertThat(t)
          .isInstanceOf(QueueStoreException.class)
          .hasMessageContaining(database.name() + "#" + SCHEMA)
          .hasMessageContaining("[SQLSTATE 55P03]");
      assertThat(((QueueException) t).isRetriable()).isTrue();
      holder.rollback();
    }
    assertThat(s.queues().getQueue("q").name()).isEqualTo("q");
  }
}
