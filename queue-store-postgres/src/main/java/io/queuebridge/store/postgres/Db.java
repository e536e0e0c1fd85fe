package io.queuebridge.store.postgres;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.queuebridge.core.config.Names;
import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.ReadOnlyStoreException;
import io.queuebridge.core.errors.StoreClosedException;
import io.queuebridge.core.errors.StoreNotFoundException;
import io.queuebridge.core.errors.StoreRefusedException;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.sql.SQLTransientException;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The connection pool of one {@link PostgresStorage}, with the transaction helpers every store
 * method goes through.
 *
 * <p><b>Transactions.</b> {@link #write} runs its work in one transaction on a pooled connection
 * and commits it; {@link #read} runs it in autocommit mode. When the calling thread is inside
 * {@link #atomically}, both run on that thread's bound connection instead, inside the open
 * transaction, and nothing is committed until {@code atomically} ends; {@link #writeOwn} always
 * uses a connection and a transaction of its own (for the durable appends, whose commit is their
 * durability barrier). {@link #query} runs one statement in one round trip: in autocommit mode
 * outside {@code atomically} (a statement is a transaction by itself: no {@code BEGIN} or {@code
 * COMMIT} round trip), in the bound transaction inside.
 *
 * <p><b>The lock of {@link #atomically}</b> is taken lazily: the body's first statement carries it
 * ({@code SELECT pg_advisory_xact_lock(...); statement} in one round trip, the lock granted before
 * the statement starts), or a round trip of its own precedes the first multi-statement work or a
 * {@link #writeOwn}. Every statement of the body still runs under the lock; a body that runs none
 * takes no lock and commits nothing. Prepared statements are reused by the driver (it keeps the
 * server-side statements of each connection, keyed by their text), so every statement's text is
 * fixed: batches bind arrays ({@code unnest}), never a text that grows with the batch.
 *
 * <p><b>Read-only.</b> A pool opened read-only ({@link PostgresStoreProvider#openReadOnly}) marks
 * every connection read-only twice: the session's default ({@code SET SESSION CHARACTERISTICS AS
 * TRANSACTION READ ONLY}, run once per new connection), so the server refuses any write, in
 * autocommit mode too; and the JDBC flag ({@link Connection#setReadOnly}), so the driver begins
 * each transaction {@code READ ONLY}. {@link #write}, {@link #writeOwn} and {@link #atomically}
 * then refuse before borrowing a connection; reads run as above, and {@link #snapshot} stands in
 * for {@code atomically}.
 *
 * <p><b>Errors.</b> {@link SQLException}s become {@link StoreClosedException} once the store is
 * closed; else the retriable {@link QueueStoreException} when a retry may pass ({@link
 * #isRetriable}: connection failures, serialisation failures, deadlocks, lock and statement
 * timeouts, shutdowns, exhausted resources, pool timeouts, I/O errors), and the fatal {@link
 * StoreRefusedException} otherwise (a missing privilege, table or column, a statement or value the
 * server rejects, a violated constraint, a read-only transaction): retrying those only postpones
 * the failure. Messages name the store (never its password), the queue and the SQLSTATE. Unchecked
 * exceptions thrown by the work roll the transaction back and propagate unchanged.
 *
 * <p>Thread-safe.
 */
final class Db implements AutoCloseable {
  /** Work on a connection. */
  @FunctionalInterface
  interface Work<T> {
    T run(Connection c) throws SQLException;
  }

  /** The session default of every connection of a read-only pool. */
  static final String READ_ONLY_SESSION = "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY";

  private final PostgresConfig config;
  private final boolean readOnly;
  private final HikariDataSource pool;
  private final ThreadLocal<Bound> bound = new ThreadLocal<>();

  /**
   * The transaction of {@link #atomically} (or {@link #snapshot}) on the calling thread: its
   * connection and, until the first statement of the body runs, the advisory lock still to take.
   * The lock is taken by that first statement's round trip ({@link #query}) or, before any other
   * work, by a round trip of its own, so every statement of the body runs under it, and a body that
   * runs no statement takes no lock.
   */
  private static final class Bound {
    final Connection c;
    String lockQueue; // null once taken (or when none is to be taken)
    int depth = 1; // atomically calls open on this thread, the outermost included
    String lockGroup;
    boolean lazy; // synchronous_commit off: set by the lock's statement, or to be set on again
    Deferred deferred; // a change not sent yet (writeDeferred): sent with what comes next

    Bound(Connection c) {
      this.c = c;
    }
  }

  /** A change of a bound transaction not sent yet ({@link #writeDeferred}). */
  private record Deferred(String sql, Bind bind, Rows<Void> check) {}

  /**
   * A section of one statement ({@link #atomicallyOneStatement}) open on this thread: the group
   * whose lock that statement is to take, and whether it has run.
   */
  private static final class OneStatement {
    final String queue;
    final String groupId;
    boolean spent;

    OneStatement(String queue, String groupId) {
      this.queue = queue;
      this.groupId = groupId;
    }
  }

  private final ThreadLocal<OneStatement> oneStatement = new ThreadLocal<>();

  private volatile boolean closed;

  /** One permit per pooled connection, fair: see {@link Lease}. */
  private final Semaphore borrowers;

  /**
   * Starts the pool.
   *
   * @param readOnly whether every connection is read-only (see the class javadoc)
   * @throws StoreNotFoundException if {@code readOnly} and the database does not exist
   * @throws QueueStoreException if the server cannot be reached or refuses the login
   */
  Db(PostgresConfig config, boolean readOnly) {
    this.config = config;
    this.readOnly = readOnly;
    this.borrowers = new Semaphore(config.poolSize(), true);
    HikariConfig hc = new HikariConfig();
    hc.setPoolName((readOnly ? "queuebridge-ro-" : "queuebridge-") + config.schema());
    hc.setJdbcUrl(config.url());
    if (config.user() != null) {
      hc.setUsername(config.user());
    }
    if (config.password() != null) {
      hc.setPassword(config.password());
    }
    hc.setMaximumPoolSize(config.poolSize());
    hc.setMinimumIdle(1);
    hc.setAutoCommit(true);
    hc.setConnectionTimeout(config.connectTimeoutMs());
    hc.setInitializationFailTimeout(config.connectTimeoutMs());
    if (readOnly) {
      hc.setReadOnly(true);
      hc.setConnectionInitSql(READ_ONLY_SESSION);
    }
    hc.setDataSourceProperties(driverProperties(config, readOnly));
    failFastOnRefusal(config, readOnly);
    try {
      this.pool = new HikariDataSource(hc);
    } catch (RuntimeException e) {
      throw new QueueStoreException(
          null,
          "cannot connect to the postgres store " + config.description() + ": " + rootMessage(e),
          null);
    }
  }

  /**
   * One direct connection attempt before the pool starts, so that a refusal waiting cannot cure —
   * SQLSTATE class 28 (wrong password, unknown role, no {@code pg_hba.conf} entry) or 3D (no such
   * database) — fails the open at once. The pool alone would retry it until {@code
   * connect.timeout.ms}, holding up a Connect validation that long. Any other failure (the server
   * not up yet, say) is left to the pool's retries.
   *
   * @throws StoreNotFoundException if {@code readOnly} and the database does not exist (SQLSTATE
   *     3D000): a read-only open names no existing store then
   * @throws QueueStoreException if the server refused the connection for good
   */
  private static void failFastOnRefusal(PostgresConfig config, boolean readOnly) {
    Properties p = driverProperties(config, readOnly);
    if (config.user() != null) {
      p.setProperty("user", config.user());
    }
    if (config.password() != null) {
      p.setProperty("password", config.password());
    }
    try {
      java.sql.DriverManager.getConnection(config.url(), p).close(); // accepted: the pool will be
    } catch (SQLException e) {
      String state = e.getSQLState();
      if (readOnly && "3D000".equals(state)) {
        throw new StoreNotFoundException(
            config.description(),
            "the database does not exist (" + rootMessage(e) + ", SQLSTATE " + state + ")");
      }
      if (state != null && (state.startsWith("28") || state.startsWith("3D"))) {
        throw new QueueStoreException(
            null,
            "cannot connect to the postgres store "
                + config.description()
                + ": "
                + rootMessage(e)
                + " (SQLSTATE "
                + state
                + ")",
            null);
      }
    }
  }

  /**
   * Driver settings every connection of the store gets (the listener's too); a read-only store's
   * connections are named {@code queue-bridge read-only} in {@code pg_stat_activity}.
   */
  static Properties driverProperties(PostgresConfig config, boolean readOnly) {
    Properties p = new Properties();
    p.setProperty("reWriteBatchedInserts", "true");
    p.setProperty("ApplicationName", readOnly ? "queue-bridge read-only" : "queue-bridge");
    p.setProperty("connectTimeout", Long.toString(Math.max(1, config.connectTimeoutMs() / 1000)));
    p.setProperty("tcpKeepAlive", "true");
    return p;
  }

  PostgresConfig config() {
    return config;
  }

  /**
   * @throws StoreClosedException if the store was closed
   */
  void checkOpen() {
    OneStatement one = oneStatement.get();
    if (one != null) {
      throw new IllegalStateException(
          "a one-statement section of group "
              + one.groupId
              + " of queue "
              + one.queue
              + (one.spent
                  ? " made a second store call"
                  : " made a store call other than an acknowledgement"));
    }
    if (closed) {
      throw new StoreClosedException(config.description());
    }
  }

  /** Runs {@code work} in autocommit mode, or in the thread's bound transaction. */
  <T> T read(String queue, Work<T> work) {
    checkOpen();
    checkLookup(queue);
    Bound b = bound.get();
    if (b != null) {
      return run(queue, b.c, c -> work.run(locked(b)));
    }
    try (Lease lease = lease()) {
      Connection own = lease.connection;
      return run(queue, own, work);
    } catch (SQLException e) {
      throw translate(queue, e);
    }
  }

  /**
   * Runs several reads that must agree in one REPEATABLE READ snapshot, or in the thread's bound
   * transaction (whose advisory lock keeps the group still).
   */
  <T> T readSnapshot(String queue, Work<T> work) {
    checkOpen();
    checkLookup(queue);
    Bound b = bound.get();
    if (b != null) {
      return run(queue, b.c, c -> work.run(locked(b)));
    }
    return transaction(
        queue,
        c -> {
          readOnlySnapshot(c);
          return work.run(c);
        });
  }

  private static void readOnlySnapshot(Connection c) throws SQLException {
    try (java.sql.Statement st = c.createStatement()) {
      st.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY");
    }
  }

  /**
   * The read-only stand-in for {@link #atomically}: runs {@code body} in one REPEATABLE READ READ
   * ONLY transaction bound to the thread, taking no lock, so the body's reads agree with each other
   * and never hold up a writer. Nested calls join the outer transaction.
   */
  <T> T snapshot(String queue, Supplier<T> body) {
    checkOpen();
    if (bound.get() != null) {
      return body.get();
    }
    try (Lease lease = lease()) {
      Connection c = lease.connection;
      c.setAutoCommit(false);
      bound.set(new Bound(c));
      try {
        readOnlySnapshot(c);
        T result = body.get();
        c.commit();
        return result;
      } catch (SQLException | RuntimeException | Error e) {
        rollbackQuietly(c, e);
        throw e;
      } finally {
        bound.remove();
      }
    } catch (SQLException e) {
      throw translate(queue, e);
    }
  }

  /**
   * @throws ReadOnlyStoreException if the pool is read-only: a guard under the read-only views,
   *     which refuse every change before it gets here
   */
  private void checkWritable() {
    if (readOnly) {
      throw new ReadOnlyStoreException(config.description(), "a write transaction");
    }
  }

  /** Runs {@code work} in a transaction of its own and commits it, or in the bound transaction. */
  <T> T write(String queue, Work<T> work) {
    checkOpen();
    checkLookup(queue);
    checkWritable();
    Bound b = bound.get();
    if (b != null) {
      return run(queue, b.c, c -> work.run(locked(b)));
    }
    return writeOwn(queue, work);
  }

  /** Runs {@code work} in a transaction of its own and commits it, even inside atomically. */
  <T> T writeOwn(String queue, Work<T> work) {
    checkOpen();
    checkLookup(queue);
    checkWritable();
    takePendingLock(queue);
    return transaction(queue, work);
  }

  /**
   * Inside {@link #atomically} whose lock is still pending: takes it now, in a round trip of its
   * own, so that what follows (work on another connection) happens under it as it did before.
   */
  private void takePendingLock(String queue) {
    Bound b = bound.get();
    if (b != null && b.lockQueue != null) {
      run(queue, b.c, c -> locked(b));
    }
  }

  /** The bound connection, once its pending advisory lock (if any) is taken. */
  private Connection locked(Bound b) throws SQLException {
    if (b.deferred != null) {
      execute(b.c, null, null, null, b); // the lock, if pending, with the deferred change
    }
    if (b.lockQueue != null) {
      String q = b.lockQueue;
      String g = b.lockGroup;
      b.lockQueue = null;
      b.lockGroup = null;
      lockGroup(b.c, q, g, b.lazy);
    }
    return b.c;
  }

  // ---- single statements -----------------------------------------------------------------

  /** How {@link #query} runs its statement. */
  enum Mode {
    /** A read: autocommit, or in the bound transaction. */
    READ,
    /** A change: autocommit (one statement is a transaction), or in the bound transaction. */
    WRITE,
    /** A change committed by itself, even inside {@link #atomically} (the durable appends). */
    WRITE_OWN
  }

  /** Binds a statement's parameters through {@link Params}. */
  @FunctionalInterface
  interface Bind {
    void bind(Params p) throws SQLException;
  }

  /** Reads the result rows of a statement. */
  @FunctionalInterface
  interface Rows<T> {
    T read(ResultSet rs) throws SQLException;
  }

  /**
   * A statement's parameters from index 1, whatever comes before them in the round trip (the
   * advisory lock of {@link #atomically} takes the first two).
   */
  static final class Params {
    private final PreparedStatement ps;
    private final int offset;
    private int highest; // the highest index of ps set through this

    Params(PreparedStatement ps, int offset) {
      this.ps = ps;
      this.offset = offset;
      this.highest = offset;
    }

    private int at(int i) {
      highest = Math.max(highest, i + offset);
      return i + offset;
    }

    /** The highest parameter index of the whole statement set so far (the offset if none). */
    int highest() {
      return highest;
    }

    Params setLong(int i, long v) throws SQLException {
      ps.setLong(at(i), v);
      return this;
    }

    Params setInt(int i, int v) throws SQLException {
      ps.setInt(at(i), v);
      return this;
    }

    Params setString(int i, String v) throws SQLException {
      ps.setString(at(i), v);
      return this;
    }

    /** An instant as two parameters (epoch seconds, nanos); returns the next index. */
    int setInstant(int i, Instant t) throws SQLException {
      at(i + 1);
      return Db.setInstant(ps, i + offset, t) - offset;
    }

    /**
     * An array parameter of the SQL element type {@code type} ({@code bigint}, {@code text}...).
     */
    Params setArray(int i, String type, Object[] elements) throws SQLException {
      ps.setArray(at(i), ps.getConnection().createArrayOf(type, elements));
      return this;
    }
  }

  /**
   * Runs one statement (one round trip) and reads its rows. Outside {@link #atomically} it runs in
   * autocommit mode on a pooled connection: a single statement is a transaction of its own, so a
   * change needs no separate {@code COMMIT} round trip, and a read sees one snapshot. Inside, it
   * runs in the bound transaction ({@link Mode#WRITE_OWN} excepted) and, when the transaction's
   * advisory lock is still pending, carries it: {@code SELECT pg_advisory_xact_lock(...); sql} in
   * the same round trip, the lock taken before {@code sql} starts (and so before its snapshot).
   */
  <T> T query(String queue, Mode mode, String sql, Bind bind, Rows<T> rows) {
    checkOpen();
    checkLookup(queue);
    if (mode != Mode.READ) {
      checkWritable();
    }
    Bound b = mode == Mode.WRITE_OWN ? null : bound.get();
    if (b == null) {
      takePendingLock(queue);
      try (Lease lease = lease()) {
        Connection c = lease.connection;
        return execute(c, sql, bind, rows, null);
      } catch (SQLException e) {
        throw translate(queue, e);
      }
    }
    return run(queue, b.c, c -> execute(c, sql, bind, rows, b));
  }

  /**
   * Two reads in one round trip, as {@link #query} in {@link Mode#READ} runs one (in autocommit, or
   * in the bound transaction carrying its pending lock and deferred change); {@code combine} joins
   * their results. Each statement reads its own snapshot; {@code rows1} reads first.
   */
  <A, B, T> T queryTwo(
      String queue,
      String sql1,
      Bind bind1,
      Rows<A> rows1,
      String sql2,
      Bind bind2,
      Rows<B> rows2,
      java.util.function.BiFunction<A, B, T> combine) {
    checkOpen();
    checkLookup(queue);
    Bound b = bound.get();
    Segment<A> first = new Segment<>(sql1, bind1, rows1);
    Segment<B> second = new Segment<>(sql2, bind2, rows2);
    Object[] results;
    if (b == null) {
      try (Lease lease = lease()) {
        results = executeAll(lease.connection, null, first, second);
      } catch (SQLException e) {
        throw translate(queue, e);
      }
    } else {
      results = run(queue, b.c, c -> executeAll(c, b, first, second));
    }
    @SuppressWarnings("unchecked")
    A a = (A) results[0];
    @SuppressWarnings("unchecked")
    B r = (B) results[1];
    return combine.apply(a, r);
  }

  /**
   * {@link #query} in {@link Mode#WRITE} for a change whose result its caller does not read: inside
   * {@link #atomically} it is not sent at once but with the transaction's next statement, or with
   * its {@code COMMIT}, in the same round trip, and {@code check} reads its rows then. So a
   * section's last change costs no round trip of its own. {@code check} may throw only where the
   * statement changed nothing (a group not found): when it comes with the {@code COMMIT}, the
   * transaction has committed by the time it runs. An error of the server, instead, aborts the
   * transaction before its {@code COMMIT} runs. {@code bind} runs when the statement is sent, so
   * what it reads must not change until then. Outside a transaction it runs at once, as {@link
   * #query}.
   */
  void writeDeferred(String queue, String sql, Bind bind, Rows<Void> check) {
    checkOpen();
    checkLookup(queue);
    checkWritable();
    Bound b = bound.get();
    if (b == null) {
      query(queue, Mode.WRITE, sql, bind, check);
      return;
    }
    if (b.deferred != null) {
      run(queue, b.c, c -> execute(c, null, null, null, b));
    }
    b.deferred = new Deferred(sql, bind, check);
  }

  /**
   * Commits {@code b}: with its deferred change, if any, in the same round trip ({@code change;
   * COMMIT}), then that change's check.
   */
  private void commit(Bound b) throws SQLException {
    if (b.deferred == null) {
      b.c.commit();
      return;
    }
    executeAll(b.c, b, new Segment<>("COMMIT", p -> {}, null));
    b.c.commit(); // the server has committed: the driver sends nothing more
  }

  /**
   * {@link #query} in {@link Mode#WRITE} for a statement that locks a row ({@code FOR UPDATE}) and
   * then reads rows that the other holders of that lock change. Under READ COMMITTED a statement
   * that waits for a row lock sees the locked row as it is now but every other row as it was when
   * the statement started, so it would miss what the holder it waited for committed. Outside {@link
   * #atomically}, {@code rowLock} (the same row lock; its two parameters {@code queue} and {@code
   * groupId}, as are the first two of {@code sql}) therefore runs first, in the same round trip and
   * the same implicit transaction (one {@code Sync}), and {@code sql} starts its snapshot once the
   * lock is held. Inside, the transaction's advisory lock already orders the changes, and {@code
   * sql} runs as {@link #query} runs it.
   */
  <T> T queryAfterRowLock(
      String queue, String groupId, String rowLock, String sql, Bind bind, Rows<T> rows) {
    OneStatement one = oneStatement.get();
    if (one != null && !one.spent) {
      oneStatement.remove(); // for the checks of this call
      try {
        return inOneStatement(one, queue, groupId, rowLock, sql, bind, rows);
      } finally {
        one.spent = true;
        oneStatement.set(one);
      }
    }
    checkOpen();
    checkLookup(queue);
    checkWritable();
    if (bound.get() != null) {
      return query(queue, Mode.WRITE, sql, bind, rows);
    }
    return afterLeading(
        queue,
        rowLock,
        1,
        2,
        ps -> {
          ps.setString(1, queue);
          ps.setString(2, groupId);
        },
        sql,
        bind,
        rows); // the leading result: the locked row, if any
  }

  /**
   * {@link #queryAfterRowLock} as the one statement of {@code one}: the lock statement of {@code
   * one}'s group (with {@code synchronous_commit} off), {@code rowLock} and {@code sql}, in one
   * round trip and one implicit transaction.
   */
  private <T> T inOneStatement(
      OneStatement one,
      String queue,
      String groupId,
      String rowLock,
      String sql,
      Bind bind,
      Rows<T> rows) {
    checkOpen();
    checkLookup(queue);
    checkWritable();
    return afterLeading(
        queue,
        LAZY_LOCK_SQL + "; " + rowLock,
        2,
        4,
        ps -> {
          bindLock(ps, one.queue, one.groupId);
          ps.setString(3, queue);
          ps.setString(4, groupId);
        },
        sql,
        bind,
        rows);
  }

  /**
   * Runs {@code body}, which makes one store call of one statement run by {@link
   * #queryAfterRowLock}, under the advisory lock of {@code (queue, groupId)} with {@code
   * synchronous_commit} off: that statement is sent in autocommit after the lock's statement, in
   * one round trip, and commits with it; no {@code COMMIT} round trip follows. Any other store call
   * in the body, or a second one, fails with an {@link IllegalStateException} before it reaches the
   * server. Nested in {@link #atomically}, the body joins that transaction as it is.
   */
  <T> T atomicallyOneStatement(String queue, String groupId, Supplier<T> body) {
    if (bound.get() != null) {
      return atomically(queue, groupId, true, body);
    }
    checkOpen();
    checkWritable();
    checkLookup(queue);
    oneStatement.set(new OneStatement(queue, groupId));
    try {
      return body.get();
    } finally {
      oneStatement.remove();
    }
  }

  /**
   * {@code lead} ({@code leading} statements, their {@code leadParams} parameters set by {@code
   * bindLead}) and then {@code sql} on a pooled connection in autocommit mode, in one round trip
   * and so one implicit transaction (one {@code Sync}); the rows of {@code sql}. {@code sql}'s
   * binder runs first: its checks come before any use of the parameters.
   */
  private <T> T afterLeading(
      String queue,
      String lead,
      int leading,
      int leadParams,
      Binder bindLead,
      String sql,
      Bind bind,
      Rows<T> rows) {
    try (Lease lease = lease();
        PreparedStatement ps = lease.connection.prepareStatement(lead + "; " + sql)) {
      bind.bind(new Params(ps, leadParams));
      bindLead.bind(ps);
      return resultAfter(ps, leading, sql, rows);
    } catch (SQLException e) {
      throw translate(queue, e);
    }
  }

  /** One statement of a round trip ({@link #executeAll}); {@code rows} null: its rows unread. */
  private record Segment<T>(String sql, Bind bind, Rows<T> rows) {}

  /**
   * {@code sql} on {@code c}, preceded in the same round trip by the pending lock of {@code b}, if
   * any, and by its deferred change ({@link #writeDeferred}), if any; with {@code sql} null, only
   * those two.
   */
  private <T> T execute(Connection c, String sql, Bind bind, Rows<T> rows, Bound b)
      throws SQLException {
    if (b == null || (b.lockQueue == null && b.deferred == null)) {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        bind.bind(new Params(ps, 0));
        try (ResultSet rs = ps.executeQuery()) {
          return rows.read(rs);
        }
      }
    }
    if (sql == null) {
      executeAll(c, b);
      return null;
    }
    @SuppressWarnings("unchecked")
    T result = (T) executeAll(c, b, new Segment<>(sql, bind, rows))[0];
    return result;
  }

  /**
   * {@code segments} on {@code c} in one round trip (one {@code Sync}), preceded by the pending
   * lock of {@code b} and by its deferred change, if {@code b} has them; the rows each of {@code
   * segments} read, in order (null for one without {@code rows}). The deferred change's check runs
   * on its rows first. The lock counts as taken and the change as sent once the statements are
   * bound (a failure of the server aborts the transaction anyway); a binder that throws leaves both
   * to the next statement.
   */
  private Object[] executeAll(Connection c, Bound b, Segment<?>... segments) throws SQLException {
    List<Segment<?>> all = new ArrayList<>(segments.length + 2);
    if (b != null && b.lockQueue != null) {
      String q = b.lockQueue;
      String g = b.lockGroup;
      all.add(new Segment<>(b.lazy ? LAZY_LOCK_SQL : LOCK_SQL, p -> bindLock(p, q, g), null));
    }
    if (b != null && b.deferred != null) {
      Deferred d = b.deferred;
      all.add(new Segment<>(d.sql(), d.bind(), d.check()));
    }
    int lead = all.size();
    all.addAll(java.util.Arrays.asList(segments));
    StringBuilder text = new StringBuilder();
    for (Segment<?> seg : all) {
      text.append(text.length() > 0 ? "; " : "").append(seg.sql());
    }
    Object[] results = new Object[all.size()];
    try (PreparedStatement ps = c.prepareStatement(text.toString())) {
      int next = 0;
      for (Segment<?> seg : all) {
        Params p = new Params(ps, next);
        seg.bind().bind(p);
        next = p.highest();
      }
      if (b != null) {
        b.lockQueue = null;
        b.lockGroup = null;
        b.deferred = null;
      }
      ps.execute();
      for (int i = 0; i < all.size(); i++) {
        Segment<?> seg = all.get(i);
        boolean hasRows = i == 0 ? ps.getResultSet() != null : ps.getMoreResults();
        if (seg.rows() == null) {
          continue;
        }
        if (!hasRows) {
          throw new SQLException("no result rows from " + seg.sql());
        }
        try (ResultSet rs = ps.getResultSet()) {
          results[i] = seg.rows().read(rs);
        }
      }
    }
    return java.util.Arrays.copyOfRange(results, lead, results.length);
  }

  /**
   * Runs {@code ps}, {@code leading} statements that each return rows and then {@code sql}, and
   * reads the rows of {@code sql}.
   */
  private static <T> T resultAfter(PreparedStatement ps, int leading, String sql, Rows<T> rows)
      throws SQLException {
    ps.execute();
    for (int i = 0; i < leading; i++) {
      if (!ps.getMoreResults()) {
        throw new SQLException("no result rows from " + sql);
      }
    }
    try (ResultSet rs = ps.getResultSet()) {
      return rows.read(rs);
    }
  }

  /**
   * A queue name no queue can have (BEHAVIOUR S-NAMES) is not found, without a query: PostgreSQL
   * text cannot hold NUL (the query would fail as a store error) and the driver writes an unpaired
   * surrogate as {@code ?} (the query would find another queue). Null and empty mean "no queue".
   */
  private static void checkLookup(String queue) {
    if (queue != null && !queue.isEmpty() && !Names.isValid(queue)) {
      throw new QueueNotFoundException(queue);
    }
  }

  /** Runs {@code work} in a transaction of its own and commits it. */
  private <T> T transaction(String queue, Work<T> work) {
    checkOpen();
    try (Lease lease = lease()) {
      Connection c = lease.connection;
      c.setAutoCommit(false);
      try {
        T result = work.run(c);
        c.commit();
        return result;
      } catch (SQLException | RuntimeException | Error e) {
        rollbackQuietly(c, e);
        throw e;
      }
    } catch (SQLException e) {
      throw translate(queue, e);
    }
  }

  /**
   * Makes the calling thread's bound transaction, if lazy ({@link #atomically}), wait for its WAL
   * flush at commit after all: for a change others may act on outside the store as soon as they see
   * it (an append: a dead letter a reader hands on). Outside a lazy transaction it does nothing.
   */
  void durableCommit(String queue) {
    Bound b = bound.get();
    if (b == null || !b.lazy) {
      return;
    }
    b.lazy = false;
    if (b.lockQueue == null) { // the lock's statement turned it off already: on again
      run(
          queue,
          b.c,
          c -> {
            try (PreparedStatement ps =
                c.prepareStatement("SELECT set_config('synchronous_commit', 'on', true)")) {
              ps.execute();
            }
            return null;
          });
    }
  }

  /**
   * {@link #query} in {@link Mode#WRITE} for a change that may be lost in a crash without harm (see
   * {@code ConsumerGroupStore#atomicallyLazy}): outside a bound transaction its implicit
   * transaction commits without waiting for the WAL flush ({@code synchronous_commit} off, set by a
   * statement before it in the same round trip); inside one it runs as {@link #query} runs it.
   */
  <T> T queryLazy(String queue, String sql, Bind bind, Rows<T> rows) {
    checkOpen();
    checkLookup(queue);
    checkWritable();
    if (bound.get() != null) {
      return query(queue, Mode.WRITE, sql, bind, rows);
    }
    return afterLeading(queue, LAZY_SQL, 1, 0, ps -> {}, sql, bind, rows);
  }

  /**
   * Makes every transaction committed before this call durable: outside a bound transaction, one
   * statement in autocommit that writes a WAL record (a transactional logical message, which no
   * decoder reads unless it asks for its prefix) and so waits at commit for the WAL to be flushed
   * up to it, past every earlier commit record. A transaction that writes no WAL, such as {@code
   * SELECT txid_current()}, commits without that wait. Inside a bound transaction it does nothing
   * and returns false: that transaction's commit decides.
   */
  boolean awaitDurable() {
    checkOpen();
    checkWritable();
    if (bound.get() != null) {
      return false;
    }
    try (Lease lease = lease();
        PreparedStatement ps = lease.connection.prepareStatement(FLUSH_SQL)) {
      ps.execute();
      return true;
    } catch (SQLException e) {
      throw translate(null, e);
    }
  }

  /** {@link #awaitDurable}'s statement. */
  private static final String FLUSH_SQL =
      "SELECT pg_logical_emit_message(true, 'queuebridge.flush', '')";

  /** Whether the calling thread is inside {@link #atomically} (or {@link #snapshot}). */
  boolean inBoundTransaction() {
    return bound.get() != null;
  }

  /**
   * Runs {@code body} in one transaction that holds the advisory lock of {@code (queue, groupId)}
   * from before its first statement on; store calls the body makes on this thread join the
   * transaction. The lock is taken by the round trip of the body's first statement ({@link Bound}).
   * Commits when the body returns, rolls back when it throws. Nested calls join the outer
   * transaction, taking the outer lock if still pending and then their own, at once.
   */
  <T> T atomically(String queue, String groupId, Supplier<T> body) {
    return atomically(queue, groupId, false, body);
  }

  /**
   * {@link #atomically}; when {@code lazy} and not nested in another, the transaction commits
   * without waiting for its WAL flush ({@code synchronous_commit} off, set by the statement that
   * takes the lock: no round trip more) until a change that must be durable at commit turns it back
   * on ({@link #durableCommit}).
   */
  <T> T atomically(String queue, String groupId, boolean lazy, Supplier<T> body) {
    checkOpen();
    checkWritable();
    checkLookup(queue);
    Bound outer = bound.get();
    if (outer != null) {
      run(queue, outer.c, c -> lockGroup(locked(outer), queue, groupId, false));
      outer.depth++;
      try {
        return body.get();
      } finally {
        outer.depth--;
      }
    }
    try (Lease lease = lease()) {
      Connection c = lease.connection;
      c.setAutoCommit(false);
      Bound b = new Bound(c);
      b.lockQueue = queue;
      b.lockGroup = groupId;
      b.lazy = lazy;
      bound.set(b);
      try {
        T result = body.get();
        commit(b);
        return result;
      } catch (SQLException | RuntimeException | Error e) {
        rollbackQuietly(c, e);
        throw e;
      } finally {
        bound.remove();
      }
    } catch (SQLException e) {
      throw translate(queue, e);
    }
  }

  /** The advisory lock of a group, parameters 1 and 2. */
  private static final String LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext(?), hashtext(?))";

  /** {@link #LOCK_SQL} that also turns {@code synchronous_commit} off for the transaction. */
  private static final String LAZY_LOCK_SQL =
      "SELECT pg_advisory_xact_lock(hashtext(?), hashtext(?)),"
          + " set_config('synchronous_commit', 'off', true)";

  /** A statement before another in the same round trip: no WAL flush wait for its transaction. */
  private static final String LAZY_SQL = "SELECT set_config('synchronous_commit', 'off', true)";

  private Void lockGroup(Connection c, String queue, String groupId, boolean lazy)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(lazy ? LAZY_LOCK_SQL : LOCK_SQL)) {
      bindLock(ps, queue, groupId);
      ps.execute();
    }
    return null;
  }

  private void bindLock(Params p, String queue, String groupId) throws SQLException {
    p.setString(1, config.schema() + "/" + queue);
    p.setString(
        2, Names.isValid(groupId) ? groupId : "invalid:" + Integer.toHexString(groupId.hashCode()));
  }

  private void bindLock(PreparedStatement ps, String queue, String groupId) throws SQLException {
    ps.setString(1, config.schema() + "/" + queue);
    // an id no group can have (NUL cannot be a text parameter) locks on a stand-in: a shared lock
    // key only costs contention
    ps.setString(
        2, Names.isValid(groupId) ? groupId : "invalid:" + Integer.toHexString(groupId.hashCode()));
  }

  private <T> T run(String queue, Connection c, Work<T> work) {
    try {
      return work.run(c);
    } catch (SQLException e) {
      throw translate(queue, e);
    }
  }

  /**
   * A pooled connection and the borrower's permit, both given back by {@link #close}. The permits
   * ({@link #borrowers}, one per pooled connection, fair) serve borrowers in arrival order: the
   * pool alone lets a thread that has just returned a connection take it again before a thread
   * already waiting, and under many more threads than connections a waiter could starve until
   * {@code connect.timeout.ms}.
   */
  private final class Lease implements AutoCloseable {
    final Connection connection;

    Lease(Connection connection) {
      this.connection = connection;
    }

    @Override
    public void close() throws SQLException {
      try {
        connection.close();
      } finally {
        borrowers.release();
      }
    }
  }

  /**
   * Waits up to {@code connect.timeout.ms} for a permit, in arrival order, then borrows a
   * connection.
   *
   * @throws SQLTransientConnectionException if no permit came in time (retriable) or the thread was
   *     interrupted while waiting (its interrupt status set again)
   * @throws StoreClosedException if the store was closed
   */
  private Lease lease() throws SQLException {
    long timeoutMs = config.connectTimeoutMs();
    try {
      if (!borrowers.tryAcquire(timeoutMs, TimeUnit.MILLISECONDS)) {
        throw new SQLTransientConnectionException(
            "no pooled connection became free within connect.timeout.ms="
                + timeoutMs
                + " ("
                + config.poolSize()
                + " in use, "
                + borrowers.getQueueLength()
                + " more callers waiting)",
            "08001");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLTransientConnectionException(
          "interrupted while waiting for a pooled connection", "08001", e);
    }
    try {
      return new Lease(pool.getConnection());
    } catch (SQLException | RuntimeException e) {
      borrowers.release();
      if (closed || pool.isClosed()) {
        throw new StoreClosedException(config.description());
      }
      throw e;
    }
  }

  /** How many callers wait for a pooled connection now (for tests). */
  int borrowersWaiting() {
    return borrowers.getQueueLength();
  }

  private static void rollbackQuietly(Connection c, Throwable cause) {
    try {
      c.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  /**
   * The SQLSTATEs, besides classes 08 and 53, after which the same call may pass: serialization
   * failure, deadlock, lock not available ({@code lock_timeout}, {@code NOWAIT}), a statement
   * cancelled ({@code statement_timeout}, an operator's {@code pg_cancel_backend}), the server
   * shutting down, crashed or still starting, a session ended for being idle, and an I/O error of
   * the server. Not {@code 57P04} (the database was dropped).
   */
  private static final Set<String> RETRIABLE_STATES =
      Set.of("40001", "40P01", "55P03", "57014", "57P01", "57P02", "57P03", "57P05", "58030");

  /** The store exception for {@code e}, naming the store and the queue. */
  RuntimeException translate(String queue, SQLException e) {
    if (closed) {
      return new StoreClosedException(config.description());
    }
    return translate(config.description(), queue, e);
  }

  /**
   * The store exception for {@code e} of the open store described as {@code store}: a retriable
   * {@link QueueStoreException} when {@link #isRetriable}, else a fatal {@link
   * StoreRefusedException}; the message names the store, the queue (when not null), the error and
   * its SQLSTATE.
   */
  static QueueException translate(String store, String queue, SQLException e) {
    String state = sqlState(e);
    String message =
        "postgres store "
            + store
            + (queue == null ? "" : ", queue " + queue)
            + ": "
            + e.getMessage()
            + (state.isEmpty() ? "" : " [SQLSTATE " + state + "]");
    return isRetriable(e)
        ? new QueueStoreException(queue, message, e)
        : new StoreRefusedException(queue, message, e);
  }

  /**
   * Whether the same call may pass later: a SQLSTATE of class 08 (connection exception) or 53
   * (insufficient resources) or one of {@link #RETRIABLE_STATES}; or, whatever the state, a
   * transient or recoverable {@link SQLException} (a pool timeout) or an {@link IOException} among
   * the causes (the connection broke mid-call). Everything else will fail the same way: class 42 (a
   * missing privilege, table or column; a syntax error), 22 (a value the server rejects), 23 (a
   * violated constraint: the store's statements avoid conflicts with {@code ON CONFLICT} and row
   * locks, so one is not a race a retry wins), 25 (a read-only transaction), 0A, XX, and an error
   * without a state.
   */
  static boolean isRetriable(SQLException e) {
    String state = sqlState(e);
    if (state.startsWith("08") || state.startsWith("53") || RETRIABLE_STATES.contains(state)) {
      return true;
    }
    for (Throwable t : chain(e)) {
      if (t instanceof SQLTransientException
          || t instanceof SQLRecoverableException
          || t instanceof IOException) {
        return true;
      }
    }
    return false;
  }

  /**
   * The SQLSTATE of {@code e}, else of the first chained or causing {@link SQLException} that has
   * one (a batch's {@link java.sql.BatchUpdateException} carries the server's error as its next
   * exception); empty when none has.
   */
  static String sqlState(SQLException e) {
    for (Throwable t : chain(e)) {
      if (t instanceof SQLException s && s.getSQLState() != null && !s.getSQLState().isEmpty()) {
        return s.getSQLState();
      }
    }
    return "";
  }

  /**
   * {@code e}, then, breadth first, the next exceptions of SQL chains and the causes; each once, at
   * most 32.
   */
  private static List<Throwable> chain(SQLException e) {
    List<Throwable> seen = new ArrayList<>();
    Set<Throwable> visited = Collections.newSetFromMap(new IdentityHashMap<>());
    ArrayDeque<Throwable> todo = new ArrayDeque<>();
    todo.add(e);
    while (!todo.isEmpty() && seen.size() < 32) {
      Throwable t = todo.poll();
      if (!visited.add(t)) {
        continue;
      }
      seen.add(t);
      if (t instanceof SQLException s && s.getNextException() != null) {
        todo.add(s.getNextException());
      }
      if (t.getCause() != null) {
        todo.add(t.getCause());
      }
    }
    return seen;
  }

  private static String rootMessage(Throwable t) {
    Throwable r = t;
    while (r.getCause() != null && r.getCause() != r) {
      r = r.getCause();
    }
    return r.getMessage() == null ? r.getClass().getSimpleName() : r.getMessage();
  }

  boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    closed = true;
    pool.close();
  }

  // ---- small JDBC helpers -----------------------------------------------------------------

  /** Binds a statement's parameters. */
  @FunctionalInterface
  interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  /** Prepares {@code sql}, binds it and executes it as an update; returns the row count. */
  static int update(Connection c, String sql, Binder binder) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      return ps.executeUpdate();
    }
  }

  /**
   * Like {@link #update}, for a change that must touch a row: throws what {@code ifNone} supplies
   * when none changed (the transaction is then rolled back by its runner).
   */
  static void updateSome(
      Connection c, String sql, Binder binder, Supplier<? extends RuntimeException> ifNone)
      throws SQLException {
    if (update(c, sql, binder) == 0) {
      throw ifNone.get();
    }
  }

  /** Sets an instant as two parameters (epoch seconds, nanos), null as two nulls. */
  static int setInstant(PreparedStatement ps, int index, Instant t) throws SQLException {
    if (t == null) {
      ps.setNull(index, java.sql.Types.BIGINT);
      ps.setNull(index + 1, java.sql.Types.INTEGER);
    } else {
      ps.setLong(index, t.getEpochSecond());
      ps.setInt(index + 1, t.getNano());
    }
    return index + 2;
  }

  /** Reads an instant from two columns (epoch seconds, nanos); null when the first is null. */
  static Instant getInstant(ResultSet rs, int index) throws SQLException {
    long s = rs.getLong(index);
    if (rs.wasNull()) {
      return null;
    }
    return Instant.ofEpochSecond(s, rs.getInt(index + 1));
  }
}
