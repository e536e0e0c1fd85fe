package io.queuebridge.store.postgres;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wakes {@code awaitAppend} waiters of one {@link PostgresStorage} when any process appends.
 *
 * <p>Every append transaction runs {@code pg_notify(<channel>, <queue>)}, delivered at commit to
 * every listener of the database. One daemon thread per storage holds a dedicated connection (not
 * from the pool) that {@code LISTEN}s on the store's channel and, per notification, wakes the local
 * waiters of that queue. Waiters re-check the tail themselves, so a spurious wake-up costs one
 * query; a lost notification (listener reconnecting) costs at most one {@code poll.interval.ms},
 * the bound on every wait step. When the listener connection fails, every waiter is woken and the
 * thread reconnects with a back-off.
 *
 * <p>The listener of a read-only store ({@link PostgresStoreProvider#openReadOnly}) makes its
 * session read-only before {@code LISTEN} (which a read-only session may run): it only ever
 * receives notifications, and the server would refuse anything else.
 *
 * <p>Thread-safe.
 */
final class AppendListener implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AppendListener.class);

  /** The waiters of one queue and a counter of wake-ups, for lost-wake-up-free waiting. */
  static final class Waiters {
    final ReentrantLock lock = new ReentrantLock();
    final Condition appended = lock.newCondition();
    long generation; // guarded by lock

    void wake() {
      lock.lock();
      try {
        generation++;
        appended.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  private final PostgresConfig config;
  private final boolean readOnly;
  private final ConcurrentMap<String, Waiters> waiters = new ConcurrentHashMap<>();
  private final Thread thread;
  private volatile boolean closed;
  private volatile Connection connection;

  AppendListener(PostgresConfig config, boolean readOnly) {
    this.config = config;
    this.readOnly = readOnly;
    this.thread = new Thread(this::loop, "queuebridge-pg-listener-" + config.schema());
    this.thread.setDaemon(true);
  }

  /** Connects and starts listening; throws if the first connection fails. */
  void start() throws SQLException {
    connection = connect();
    thread.start();
  }

  Waiters waiters(String queue) {
    return waiters.computeIfAbsent(queue, q -> new Waiters());
  }

  /** Wakes the local waiters of {@code queue} (after a local append committed). */
  void wake(String queue) {
    Waiters w = waiters.get(queue);
    if (w != null) {
      w.wake();
    }
  }

  void wakeAll() {
    waiters.values().forEach(Waiters::wake);
  }

  private Connection connect() throws SQLException {
    Properties p = Db.driverProperties(config, readOnly);
    if (config.user() != null) {
      p.setProperty("user", config.user());
    }
    if (config.password() != null) {
      p.setProperty("password", config.password());
    }
    Connection c = DriverManager.getConnection(config.url(), p);
    try (Statement st = c.createStatement()) {
      if (readOnly) {
        st.execute(Db.READ_ONLY_SESSION);
        c.setReadOnly(true);
      }
      st.execute("LISTEN " + config.channel()); // channel: validated identifier
    } catch (SQLException e) {
      c.close();
      throw e;
    }
    return c;
  }

  private void loop() {
    long backoffMs = 100;
    while (!closed) {
      try {
        Connection c = connection;
        if (c == null) {
          c = connect();
          connection = c;
          backoffMs = 100;
          wakeAll(); // anything may have been appended while we were away
        }
        PGNotification[] got =
            c.unwrap(PGConnection.class).getNotifications((int) config.pollIntervalMs());
        if (got != null) {
          for (PGNotification n : got) {
            wake(n.getParameter());
          }
        }
      } catch (SQLException | RuntimeException e) {
        if (closed) {
          return;
        }
        log.warn(
            "postgres store {}: append listener failed ({}); waiters fall back to polling every"
                + " {} ms until it reconnects",
            config.description(),
            e.getMessage(),
            config.pollIntervalMs());
        closeQuietly();
        wakeAll();
        try {
          TimeUnit.MILLISECONDS.sleep(backoffMs);
        } catch (InterruptedException ie) {
          return;
        }
        backoffMs = Math.min(backoffMs * 2, 5_000);
      }
    }
  }

  private void closeQuietly() {
    Connection c = connection;
    connection = null;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // closing a broken connection
      }
    }
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
    closeQuietly();
    try {
      thread.join(TimeUnit.SECONDS.toMillis(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    wakeAll();
  }
}
