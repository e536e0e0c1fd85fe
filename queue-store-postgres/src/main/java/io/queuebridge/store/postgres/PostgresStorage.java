package io.queuebridge.store.postgres;

import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.Storage;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One open PostgreSQL store: a connection pool, the schema brought up to date, an append listener,
 * and the two store halves ({@link PgQueueStore}, {@link PgGroupStore}).
 *
 * <p><b>Durability.</b> Checked once at open with {@code SHOW synchronous_commit} and {@code SHOW
 * fsync} on a pooled connection (which reflects server, database and role settings and URL {@code
 * options}): a committed transaction survives a machine crash only when {@code fsync} is on and
 * {@code synchronous_commit} is {@code on}, {@code remote_apply}, {@code remote_write} or {@code
 * local}. Otherwise {@code supportsDurableSync()} is false, the description says so, and a warning
 * is logged once.
 *
 * <p><b>Read-only</b> ({@link #openReadOnly}): a pool of read-only sessions, a read-only listener,
 * and the read-only views {@link PgReadOnlyQueueStore} and {@link PgReadOnlyGroupStore} over the
 * same two halves. Its only thread is the listener's (it receives notifications, nothing else), and
 * the pool's housekeeping only opens, checks and closes connections: nothing it runs writes.
 *
 * <p>Thread-safe. {@link #close()} is idempotent.
 */
final class PostgresStorage implements Storage {
  private static final Logger log = LoggerFactory.getLogger(PostgresStorage.class);

  private static final Set<String> DURABLE_COMMIT =
      Set.of("on", "remote_apply", "remote_write", "local");

  private final Db db;
  private final AppendListener listener;
  private final DurableQueueStore queues;
  private final ConsumerGroupStore groups;
  private final String description;
  private final Object closeLock = new Object();
  private boolean closed;

  private PostgresStorage(Db db, AppendListener listener, boolean durable, String syncSetting) {
    this.db = db;
    this.listener = listener;
    this.description =
        db.config().description()
            + (durable ? "" : " (not durable: synchronous_commit/fsync = " + syncSetting + ")");
    PgQueueStore messages = new PgQueueStore(db, listener, durable, description, this::close, true);
    this.queues = messages;
    this.groups = new PgGroupStore(db, description, Schema.VERSION, messages);
  }

  /**
   * A read-only storage over {@code db} (a read-only pool), of a schema at {@code schemaVersion},
   * read as it is ({@link Schema#check}).
   */
  private PostgresStorage(Db db, AppendListener listener, int schemaVersion) {
    this.db = db;
    this.listener = listener;
    this.description = db.config().description() + " (read-only)";
    PgQueueStore reads =
        new PgQueueStore(
            db, listener, false, description, this::close, Schema.hasRuns(schemaVersion));
    this.queues = new PgReadOnlyQueueStore(reads, db, description);
    this.groups =
        new PgReadOnlyGroupStore(new PgGroupStore(db, description, schemaVersion), db, description);
  }

  /**
   * Connects, migrates the schema and starts the listener.
   *
   * @throws QueueStoreException if the database is unreachable or its schema is newer than ours
   */
  static PostgresStorage open(PostgresConfig config) {
    Db db = new Db(config, false);
    AppendListener listener = null;
    try {
      String[] sync =
          db.writeOwn(
              null,
              c -> {
                Schema.migrate(c, config);
                return new String[] {show(c, "synchronous_commit"), show(c, "fsync")};
              });
      boolean durable = DURABLE_COMMIT.contains(sync[0]) && "on".equals(sync[1]);
      String setting = sync[0] + "/" + sync[1];
      if (!durable) {
        log.warn(
            "postgres store {}: synchronous_commit = {}, fsync = {}: commits may be lost in a"
                + " server crash, so durable appends are not offered (supportsDurableSync() ="
                + " false)",
            config.description(),
            sync[0],
            sync[1]);
      }
      listener = new AppendListener(config, false);
      try {
        listener.start();
      } catch (SQLException e) {
        throw db.translate(null, e);
      }
      PostgresStorage s = new PostgresStorage(db, listener, durable, setting);
      log.info("opened postgres store {}", s.description);
      return s;
    } catch (RuntimeException e) {
      if (listener != null) {
        listener.close();
      }
      db.close();
      throw e;
    }
  }

  /**
   * Connects read-only, checks the schema without changing anything ({@link Schema#check}, in one
   * read-only snapshot) and starts a read-only listener. A schema of an older version is read as it
   * is, for as long as the storage is open: one a writable open migrates meanwhile reads as the
   * version found here until it is reopened (its ordering keys read as empty, each message row as
   * one message).
   *
   * @throws io.queuebridge.core.errors.StoreNotFoundException if the database, the schema or one of
   *     its tables does not exist
   * @throws QueueStoreException if the database is unreachable or its schema version is not this
   *     code's
   */
  static PostgresStorage openReadOnly(PostgresConfig config) {
    Db db = new Db(config, true);
    AppendListener listener = null;
    try {
      int version = db.readSnapshot(null, c -> Schema.check(c, config));
      listener = new AppendListener(config, true);
      try {
        listener.start();
      } catch (SQLException e) {
        throw db.translate(null, e);
      }
      PostgresStorage s = new PostgresStorage(db, listener, version);
      log.info("opened postgres store {}", s.description);
      return s;
    } catch (RuntimeException e) {
      if (listener != null) {
        listener.close();
      }
      db.close();
      throw e;
    }
  }

  /** The pool, for tests of this package. */
  Db db() {
    return db;
  }

  private static String show(Connection c, String setting) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SHOW " + setting)) {
      rs.next();
      return rs.getString(1);
    }
  }

  @Override
  public DurableQueueStore queues() {
    return queues;
  }

  @Override
  public ConsumerGroupStore groups() {
    return groups;
  }

  @Override
  public String description() {
    return description;
  }

  /** Stops the listener (waking every waiter) and closes the pool. Idempotent. */
  @Override
  public void close() {
    synchronized (closeLock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    db.close();
    listener.close();
  }

  @Override
  public String toString() {
    return description;
  }
}
