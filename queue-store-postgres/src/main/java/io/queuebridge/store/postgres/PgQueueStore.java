package io.queuebridge.store.postgres;

import io.queuebridge.core.config.Names;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.OffsetOutOfRangeException;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.ReservedQueueException;
import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.AppendResult;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.support.QueueConfigCodec;
import io.queuebridge.core.store.support.StoreChecks;
import io.queuebridge.core.topic.TopicIndex;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The queue-log half of {@link PostgresStorage}.
 *
 * <p><b>Appends.</b> One statement per call, run in autocommit mode (one round trip, one commit;
 * inside {@code atomically} the non-durable ones join the bound transaction): {@code UPDATE queues
 * SET tail = tail + n ... RETURNING} reserves the offsets (the row lock serialises writers of one
 * queue across every process, so offsets are contiguous and unique, and a reader sees the new tail
 * only together with the rows, at commit), one multi-row {@code INSERT} of the messages from
 * arrays, the checkpoint upserts, and {@code pg_notify} ({@link #appendSql}). For the sync methods
 * the committed statement is the durability barrier: with {@code synchronous_commit} on, the commit
 * returns after the WAL is flushed. Concurrent durable appenders share WAL flushes (PostgreSQL's
 * own group commit).
 *
 * <p><b>Reads</b> run in autocommit mode and see only committed data; {@link #truncate} is exact
 * (the head moves in one short transaction, the rows below it are deleted right after); {@link
 * #timeOffset} is exact; {@link #sizeOffset} is exact for the store's size measure, the encoded
 * body length of each message, and {@link #bytes} is the retained total of that measure (two
 * primary-key lookups). {@link #awaitAppend} sleeps on a local condition woken by {@link
 * AppendListener} (LISTEN/NOTIFY), re-checking at least every {@code poll.interval.ms}.
 *
 * <p><b>Topic index.</b> {@link #findMatchingQueues} keeps a {@link TopicIndex} rebuilt whenever
 * the {@code catalog} version moved (one indexed single-row read per call), so queues created by
 * other processes are matched at once.
 *
 * <p><b>Shared with the other stores</b>: the argument checks ({@link StoreChecks}), the naming
 * rules ({@link Names}, part of {@link QueueConfig#validate()}) and the configuration format
 * ({@link QueueConfigCodec}). Unlike the memory and file stores it does not extend {@link
 * io.queuebridge.core.store.support.QueueLogStore}: there is no per-queue log in this process to
 * forward to, every call is SQL on rows that every process shares.
 *
 * <p>Thread-safe.
 */
final class PgQueueStore implements DurableQueueStore {
  private final Db db;
  private final AppendListener listener;
  private final boolean durable;
  private final String description;
  private final Runnable closeStorage;
  private final String s;
  private volatile IndexSnapshot index = new IndexSnapshot(-1, new TopicIndex());

  private record IndexSnapshot(long version, TopicIndex index) {}

  private record QueueRow(long id, long head, long tail) {}

  PgQueueStore(
      Db db, AppendListener listener, boolean durable, String description, Runnable closeStorage) {
    this.db = db;
    this.listener = listener;
    this.durable = durable;
    this.description = description;
    this.closeStorage = closeStorage;
    this.s = db.config().schema();
  }

  // ---- administration ------------------------------------------------------------------------

  /** Applies the full {@link QueueConfig#validate()}, like the memory store. */
  @Override
  public void createQueue(QueueConfig config) {
    Objects.requireNonNull(config, "config");
    db.checkOpen();
    config.validate(); // the naming rules of every store included (BEHAVIOUR S-NAMES)
    byte[] json = QueueConfigCodec.toJson(config);
    changeQueueRow(
        config.name(),
        "INSERT INTO "
            + s
            + ".queues (name, config, reserved) VALUES (?, ?, ?)"
            + " ON CONFLICT (name) DO NOTHING",
        ps -> {
          ps.setString(1, config.name());
          ps.setBytes(2, json);
          ps.setBoolean(3, config.reserved());
        },
        () -> new QueueAlreadyExistsException(config.name()));
  }

  @Override
  public QueueConfig getQueue(String name) {
    Objects.requireNonNull(name, "name");
    return queueRow(name, "config", rs -> decodeConfig(name, rs.getBytes(1)));
  }

  /** Row mapper for {@link #queueRow}. */
  private interface RowMapper<T> {
    T map(ResultSet rs) throws SQLException;
  }

  /**
   * Reads {@code columns} of queue {@code name}'s row in the queues table.
   *
   * @throws QueueNotFoundException if there is no such queue
   */
  private <T> T queueRow(String name, String columns, RowMapper<T> mapper) {
    return db.query(
        name,
        Db.Mode.READ,
        "SELECT " + columns + " FROM " + s + ".queues WHERE name = ?",
        p -> p.setString(1, name),
        rs -> {
          if (!rs.next()) {
            throw new QueueNotFoundException(name);
          }
          return mapper.map(rs);
        });
  }

  @Override
  public void updateQueue(QueueConfig config) {
    StoreChecks.checkUpdate(config, db::checkOpen);
    byte[] json = QueueConfigCodec.toJson(config);
    changeQueueRow(
        config.name(),
        "UPDATE " + s + ".queues SET config = ?, reserved = ? WHERE name = ?",
        ps -> {
          ps.setBytes(1, json);
          ps.setBoolean(2, config.reserved());
          ps.setString(3, config.name());
        },
        () -> new QueueNotFoundException(config.name()));
  }

  @Override
  public void deleteQueue(String name) {
    Objects.requireNonNull(name, "name");
    db.write(
        name,
        c -> {
          long id = lockForDeletion(c, name);
          for (String table :
              new String[] {"messages", "checkpoints", "pending", "consumers", "groups", "dedup"}) {
            Db.update(
                c,
                "DELETE FROM " + s + "." + table + " WHERE queue_id = ?",
                ps -> ps.setLong(1, id));
          }
          Db.update(c, "DELETE FROM " + s + ".queues WHERE id = ?", ps -> ps.setLong(1, id));
          bumpCatalog(c);
          notifyAppend(c, name); // waiters wake and find the queue gone
          return null;
        });
    listener.wake(name);
  }

  /** Locks a queue's row for deletion; returns its id. */
  private long lockForDeletion(Connection c, String name) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT id, reserved FROM " + s + ".queues WHERE name = ? FOR UPDATE")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new QueueNotFoundException(name);
        }
        if (rs.getBoolean(2)) {
          throw new ReservedQueueException(name);
        }
        return rs.getLong(1);
      }
    }
  }

  @Override
  public List<QueueConfig> listQueues() {
    return db.read(
        null,
        c -> {
          List<QueueConfig> out = new ArrayList<>();
          try (PreparedStatement ps =
                  c.prepareStatement("SELECT name, config FROM " + s + ".queues ORDER BY id");
              ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              out.add(decodeConfig(rs.getString(1), rs.getBytes(2)));
            }
          }
          return List.copyOf(out);
        });
  }

  @Override
  public List<String> findMatchingQueues(String topic) {
    db.checkOpen();
    if (topic == null || topic.isEmpty()) {
      return List.of();
    }
    IndexSnapshot current = index;
    long version =
        db.read(
            null,
            c -> {
              try (PreparedStatement ps =
                      c.prepareStatement("SELECT version FROM " + s + ".catalog WHERE id = 1");
                  ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
              }
            });
    if (version != current.version()) {
      TopicIndex fresh = new TopicIndex();
      for (QueueConfig q : listQueues()) {
        fresh.addQueue(q.name(), q.topics());
      }
      current = new IndexSnapshot(version, fresh);
      index = current;
    }
    return current.index().findMatching(topic);
  }

  // ---- appends -------------------------------------------------------------------------------

  @Override
  public long append(String queue, Message message) {
    Objects.requireNonNull(message, "message");
    return appendNow(queue, List.of(message), Map.of(), false);
  }

  @Override
  public long appendBatch(String queue, List<Message> messages) {
    return appendNow(queue, StoreChecks.checkBatch(queue, messages), Map.of(), false);
  }

  @Override
  public long appendAndSync(String queue, Message message) throws InterruptedException {
    Objects.requireNonNull(message, "message");
    StoreChecks.checkNotInterrupted(queue);
    return appendNow(queue, List.of(message), Map.of(), true);
  }

  @Override
  public long appendBatchAndSync(
      String queue, List<Message> messages, Map<String, String> checkpoints)
      throws InterruptedException {
    List<Message> batch = StoreChecks.checkBatch(queue, messages);
    Map<String, String> merged = StoreChecks.checkCheckpoints(checkpoints);
    StoreChecks.checkNotInterrupted(queue);
    return appendNow(queue, batch, merged, true);
  }

  private long appendNow(
      String queue, List<Message> messages, Map<String, String> checkpoints, boolean sync) {
    Objects.requireNonNull(queue, "queue");
    int n = messages.size();
    byte[][] bodies = new byte[n][];
    long bytes = 0;
    for (int i = 0; i < n; i++) {
      bodies[i] = MessageCodec.encode(messages.get(i));
      bytes += bodies[i].length;
    }
    long total = bytes;
    boolean own = sync || !db.inBoundTransaction();
    long first =
        db.query(
            queue,
            sync ? Db.Mode.WRITE_OWN : Db.Mode.WRITE,
            appendSql(),
            p -> bindAppend(p, queue, messages, bodies, total, checkpoints),
            rs -> appended(queue, rs));
    if (own) {
      listener.wake(queue);
    }
    return first;
  }

  /**
   * One transaction of its own (BEHAVIOUR Q-DEDUP): forgets a few ids older than the window
   * (skipping rows other transactions hold), claims the id's row in {@code dedup} with {@code
   * INSERT ... ON CONFLICT DO UPDATE ... WHERE} the remembered one is older than the window,
   * appends and records the offset. A live id's row wins the conflict: nothing is appended and its
   * offset is the answer. Two processes appending one id meet on the row's lock: the second waits
   * for the first to commit and then sees its offset. Committed like every append here, so the sync
   * variant is the same call.
   */
  @Override
  public AppendResult appendDeduplicated(String queue, Message message, Instant windowStart) {
    Objects.requireNonNull(queue, "queue");
    String id = StoreChecks.checkDeduplicationId(queue, message);
    Objects.requireNonNull(windowStart, "windowStart");
    byte[] body = MessageCodec.encode(message);
    Instant created = message.createdAt() == null ? windowStart : message.createdAt();
    AppendResult result =
        db.writeOwn(
            queue,
            c -> {
              Db.update(
                  c,
                  "DELETE FROM "
                      + s
                      + ".dedup d USING (SELECT o.queue_id, o.dedup_id FROM "
                      + s
                      + ".dedup o JOIN "
                      + s
                      + ".queues q ON q.id = o.queue_id WHERE q.name = ? AND o.created_s < ?"
                      + " LIMIT 256 FOR UPDATE OF o SKIP LOCKED) old"
                      + " WHERE d.queue_id = old.queue_id AND d.dedup_id = old.dedup_id",
                  ps -> {
                    ps.setString(1, queue);
                    ps.setLong(2, windowStart.getEpochSecond()); // whole seconds before the start
                  });
              long queueId = -1;
              try (PreparedStatement ps =
                  c.prepareStatement(
                      "INSERT INTO "
                          + s
                          + ".dedup AS d (queue_id, dedup_id, off, created_s, created_n)"
                          + " SELECT id, ?, -1, ?, ? FROM "
                          + s
                          + ".queues WHERE name = ?"
                          + " ON CONFLICT (queue_id, dedup_id) DO UPDATE SET off = -1,"
                          + " created_s = EXCLUDED.created_s, created_n = EXCLUDED.created_n"
                          + " WHERE (d.created_s, d.created_n) < (?, ?) RETURNING queue_id")) {
                ps.setString(1, id);
                Db.setInstant(ps, 2, created);
                ps.setString(4, queue);
                Db.setInstant(ps, 5, windowStart);
                try (ResultSet rs = ps.executeQuery()) {
                  if (rs.next()) {
                    queueId = rs.getLong(1);
                  }
                }
              }
              if (queueId < 0) {
                try (PreparedStatement ps =
                    c.prepareStatement(
                        "SELECT d.off FROM "
                            + s
                            + ".dedup d JOIN "
                            + s
                            + ".queues q ON q.id = d.queue_id WHERE q.name = ? AND d.dedup_id = ?")) {
                  ps.setString(1, queue);
                  ps.setString(2, id);
                  try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                      throw new QueueNotFoundException(queue);
                    }
                    return AppendResult.duplicateOf(rs.getLong(1));
                  }
                }
              }
              long offset =
                  appendRows(c, queue, List.of(message), new byte[][] {body}, body.length);
              long qid = queueId;
              Db.update(
                  c,
                  "UPDATE " + s + ".dedup SET off = ? WHERE queue_id = ? AND dedup_id = ?",
                  ps -> {
                    ps.setLong(1, offset);
                    ps.setLong(2, qid);
                    ps.setString(3, id);
                  });
              return AppendResult.stored(offset);
            });
    if (!result.duplicate()) {
      listener.wake(queue);
    }
    return result;
  }

  /**
   * One query on the {@code dedup} row of the id: its offset when the row is live (created at or
   * after the window start) and its append committed ({@code off} is -1 while one is under way).
   */
  @Override
  public OptionalLong deduplicatedOffset(String queue, String id, Instant windowStart) {
    Objects.requireNonNull(queue, "queue");
    StoreChecks.checkDeduplicationId(queue, id);
    Objects.requireNonNull(windowStart, "windowStart");
    return db.query(
        queue,
        Db.Mode.READ,
        "SELECT d.off, d.created_s, d.created_n FROM "
            + s
            + ".queues q LEFT JOIN "
            + s
            + ".dedup d ON d.queue_id = q.id AND d.dedup_id = ? WHERE q.name = ?",
        p -> p.setString(1, id).setString(2, queue),
        rs -> {
          if (!rs.next()) {
            throw new QueueNotFoundException(queue);
          }
          long off = rs.getLong(1);
          if (rs.wasNull() || off < 0) {
            return OptionalLong.empty();
          }
          Instant created = Db.getInstant(rs, 2);
          return created.isBefore(windowStart) ? OptionalLong.empty() : OptionalLong.of(off);
        });
  }

  @Override
  public AppendResult appendDeduplicatedAndSync(String queue, Message message, Instant windowStart)
      throws InterruptedException {
    Objects.requireNonNull(message, "message");
    StoreChecks.checkNotInterrupted(queue);
    return appendDeduplicated(queue, message, windowStart);
  }

  /**
   * An append as one statement: the offset reservation ({@code UPDATE queues ... RETURNING}, whose
   * row lock serialises the queue's writers), the messages as one multi-row {@code INSERT} from
   * arrays ({@code unnest}), the checkpoint upserts, and {@code pg_notify} (delivered at commit).
   * Parameters: {@link #bindAppend}. One row comes back ({@code id}, first offset) unless the queue
   * does not exist; then nothing was written.
   */
  private String appendSql() {
    return "WITH r AS (UPDATE "
        + s
        + ".queues SET tail = tail + ?, total_bytes = total_bytes + ? WHERE name = ?"
        + " RETURNING id, tail - ? AS first, total_bytes - ? AS before),"
        + " m AS (INSERT INTO "
        + s
        + ".messages (queue_id, off, created_s, created_n, size, bytes_before, body)"
        + " SELECT r.id, r.first + e.i - 1, e.cs, e.cn, e.size, r.before + e.rel, e.body FROM r,"
        + " unnest(?::bigint[], ?::int[], ?::int[], ?::bigint[], ?::bytea[]) WITH ORDINALITY"
        + " AS e(cs, cn, size, rel, body, i)),"
        + " k AS (INSERT INTO "
        + s
        + ".checkpoints (queue_id, key, value) SELECT r.id, x.k, x.v FROM r,"
        + " unnest(?::text[], ?::text[]) AS x(k, v)"
        + " ON CONFLICT (queue_id, key) DO UPDATE SET value = EXCLUDED.value)"
        + " SELECT r.id, r.first, pg_notify(?, ?) FROM r";
  }

  private void bindAppend(
      Db.Params p,
      String queue,
      List<Message> messages,
      byte[][] bodies,
      long bytes,
      Map<String, String> checkpoints)
      throws SQLException {
    int n = messages.size();
    Long[] createdS = new Long[n];
    Integer[] createdN = new Integer[n];
    Integer[] sizes = new Integer[n];
    Long[] before = new Long[n];
    long running = 0;
    for (int i = 0; i < n; i++) {
      Instant t = messages.get(i).createdAt();
      createdS[i] = t == null ? null : t.getEpochSecond();
      createdN[i] = t == null ? null : t.getNano();
      sizes[i] = bodies[i].length;
      before[i] = running;
      running += bodies[i].length;
    }
    String[] keys = new String[checkpoints.size()];
    String[] values = new String[keys.length];
    int k = 0;
    for (Map.Entry<String, String> e : checkpoints.entrySet()) {
      keys[k] = e.getKey();
      values[k++] = e.getValue();
    }
    p.setLong(1, n).setLong(2, bytes).setString(3, queue).setLong(4, n).setLong(5, bytes);
    p.setArray(6, "bigint", createdS).setArray(7, "int4", createdN).setArray(8, "int4", sizes);
    p.setArray(9, "bigint", before).setArray(10, "bytea", bodies);
    p.setArray(11, "text", keys).setArray(12, "text", values);
    p.setString(13, db.config().channel()).setString(14, queue);
  }

  /** The first offset of an append, from the row of {@link #appendSql}. */
  private static long appended(String queue, ResultSet rs) throws SQLException {
    if (!rs.next()) {
      throw new QueueNotFoundException(queue);
    }
    return rs.getLong(2);
  }

  /** {@link #appendSql} inside a transaction of the caller's (a deduplicated append). */
  private long appendRows(
      Connection c, String queue, List<Message> messages, byte[][] bodies, long bytes)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(appendSql())) {
      bindAppend(new Db.Params(ps, 0), queue, messages, bodies, bytes, Map.of());
      try (ResultSet rs = ps.executeQuery()) {
        return appended(queue, rs);
      }
    }
  }

  private void notifyAppend(Connection c, String queue) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
      ps.setString(1, db.config().channel());
      ps.setString(2, queue);
      ps.execute();
    }
  }

  /**
   * One transaction (or the bound one): a change of one queue row that must touch it (else what
   * {@code ifNone} supplies is thrown) and a catalog bump, so every store rebuilds its topic index.
   */
  private void changeQueueRow(
      String name, String sql, Db.Binder binder, Supplier<? extends RuntimeException> ifNone) {
    db.write(
        name,
        c -> {
          Db.updateSome(c, sql, binder, ifNone);
          bumpCatalog(c);
          return null;
        });
  }

  private void bumpCatalog(Connection c) throws SQLException {
    Db.update(c, "UPDATE " + s + ".catalog SET version = version + 1 WHERE id = 1", ps -> {});
  }

  @Override
  public Map<String, String> checkpoints(String queue) {
    Objects.requireNonNull(queue, "queue");
    return db.read(
        queue,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT k.key, k.value FROM "
                      + s
                      + ".queues q LEFT JOIN "
                      + s
                      + ".checkpoints k ON k.queue_id = q.id WHERE q.name = ?")) {
            ps.setString(1, queue);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                throw new QueueNotFoundException(queue);
              }
              Map<String, String> out = new HashMap<>();
              do {
                if (rs.getString(1) != null) {
                  out.put(rs.getString(1), rs.getString(2));
                }
              } while (rs.next());
              return Map.copyOf(out);
            }
          }
        });
  }

  /** True only if commits are flushed to disk before they return (checked at open). */
  @Override
  public boolean supportsDurableSync() {
    return durable;
  }

  // ---- reads ---------------------------------------------------------------------------------

  @Override
  public Message read(String queue, long offset) {
    Objects.requireNonNull(queue, "queue");
    return db.query(
        queue,
        Db.Mode.READ,
        "SELECT q.head, q.tail, m.body FROM "
            + s
            + ".queues q LEFT JOIN "
            + s
            + ".messages m ON m.queue_id = q.id AND m.off = ? AND m.off >= q.head"
            + " AND m.off < q.tail WHERE q.name = ?",
        p -> p.setLong(1, offset).setString(2, queue),
        rs -> {
          if (!rs.next()) {
            throw new QueueNotFoundException(queue);
          }
          byte[] body = rs.getBytes(3);
          if (body == null) {
            throw new OffsetOutOfRangeException(queue, offset, rs.getLong(1), rs.getLong(2));
          }
          return decode(queue, body, offset);
        });
  }

  @Override
  public List<Message> readBatch(String queue, long start, int limit) {
    StoreChecks.checkReadLimit(queue, limit);
    Objects.requireNonNull(queue, "queue");
    return db.query(
        queue,
        Db.Mode.READ,
        "SELECT m.off, m.body FROM "
            + s
            + ".queues q LEFT JOIN LATERAL (SELECT off, body FROM "
            + s
            + ".messages WHERE queue_id = q.id AND off >= GREATEST(?, q.head)"
            + " AND off < q.tail ORDER BY off LIMIT ?) m ON true WHERE q.name = ?"
            + " ORDER BY m.off",
        p -> p.setLong(1, start).setInt(2, limit).setString(3, queue),
        rs -> {
          if (!rs.next()) {
            throw new QueueNotFoundException(queue);
          }
          List<Message> out = new ArrayList<>();
          do {
            byte[] body = rs.getBytes(2);
            if (body != null) {
              out.add(decode(queue, body, rs.getLong(1)));
            }
          } while (rs.next());
          return List.copyOf(out);
        });
  }

  @Override
  public long head(String queue) {
    return bounds(queue).head();
  }

  @Override
  public long tail(String queue) {
    return bounds(queue).tail();
  }

  @Override
  public long count(String queue) {
    QueueRow r = bounds(queue);
    return r.tail() - r.head();
  }

  private QueueRow bounds(String queue) {
    Objects.requireNonNull(queue, "queue");
    return queueRow(
        queue, "id, head, tail", rs -> new QueueRow(rs.getLong(1), rs.getLong(2), rs.getLong(3)));
  }

  /**
   * Exact: the head moves to {@code min(max(head, minOffset), tail)} and exactly the rows below the
   * new head are deleted, nothing at or above it. The head moves in one short transaction (from
   * then on the rows below it are unreadable, and {@link #bytes} no longer counts them); the rows
   * are deleted in a second one right after, or in the bound transaction inside {@code atomically}.
   * A crash between the two leaves unreadable rows below the head, which the next truncation of the
   * queue deletes.
   */
  @Override
  public void truncate(String queue, long minOffset) {
    Objects.requireNonNull(queue, "queue");
    QueueRow moved =
        db.write(
            queue,
            c -> {
              try (PreparedStatement ps =
                  c.prepareStatement(
                      "UPDATE "
                          + s
                          + ".queues SET head = LEAST(GREATEST(head, ?), tail) WHERE name = ?"
                          + " RETURNING id, head, tail")) {
                ps.setLong(1, minOffset);
                ps.setString(2, queue);
                try (ResultSet rs = ps.executeQuery()) {
                  if (!rs.next()) {
                    throw new QueueNotFoundException(queue);
                  }
                  return new QueueRow(rs.getLong(1), rs.getLong(2), rs.getLong(3));
                }
              }
            });
    // Rows below the head are unreadable already; deleting them outside the head update keeps
    // the queue row (and so appenders) locked only briefly. A crash in between leaves rows that
    // the next truncation deletes.
    db.write(
        queue,
        c ->
            Db.update(
                c,
                "DELETE FROM " + s + ".messages WHERE queue_id = ? AND off < ?",
                ps -> {
                  ps.setLong(1, moved.id());
                  ps.setLong(2, moved.head());
                }));
  }

  /** Exact: the first offset whose createdAt is at or after {@code time}, skipping null ones. */
  @Override
  public OptionalLong timeOffset(String queue, Instant time) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(time, "time");
    return OptionalLong.of(
        boundedLookup(
            queue,
            "(m.created_s > ? OR (m.created_s = ? AND m.created_n >= ?))",
            ps -> {
              ps.setLong(1, time.getEpochSecond());
              ps.setLong(2, time.getEpochSecond());
              ps.setInt(3, time.getNano());
              return 4;
            }));
  }

  /**
   * Exact for this store's size measure (the encoded body length): the lowest offset from which the
   * newest messages' sizes sum to at most {@code retentionBytes}.
   *
   * @throws IllegalArgumentException if {@code retentionBytes} is negative
   */
  @Override
  public OptionalLong sizeOffset(String queue, long retentionBytes) {
    StoreChecks.checkRetentionBytes(queue, retentionBytes);
    Objects.requireNonNull(queue, "queue");
    long budget = Math.min(retentionBytes, Long.MAX_VALUE / 4); // no overflow in SQL
    return OptionalLong.of(
        boundedLookup(
            queue,
            "m.bytes_before + ? >= q.total_bytes",
            ps -> {
              ps.setLong(1, budget);
              return 2;
            }));
  }

  /**
   * The encoded length of the retained messages (offsets {@code head .. tail - 1}), the measure
   * {@link #sizeOffset} uses: row overhead, indexes and TOAST compression are not counted. One
   * statement, two primary-key lookups whatever the queue's size: {@code queues.total_bytes} is the
   * running total of every byte ever appended to the queue, and {@code messages.bytes_before} of
   * the head message the total before it, so their difference is what is retained. Both columns are
   * part of schema version 1 and are maintained by the appends themselves, in their transaction;
   * {@link #truncate} changes neither (it moves the head). Never negative.
   *
   * @throws QueueNotFoundException if there is no such queue
   */
  @Override
  public OptionalLong bytes(String queue) {
    Objects.requireNonNull(queue, "queue");
    return OptionalLong.of(
        db.read(
            queue,
            c -> {
              try (PreparedStatement ps =
                  c.prepareStatement(
                      "SELECT GREATEST(0, q.total_bytes - COALESCE((SELECT m.bytes_before FROM "
                          + s
                          + ".messages m WHERE m.queue_id = q.id AND m.off = q.head"
                          + " AND q.head < q.tail), q.total_bytes)) FROM "
                          + s
                          + ".queues q WHERE q.name = ?")) {
                ps.setString(1, queue);
                try (ResultSet rs = ps.executeQuery()) {
                  if (!rs.next()) {
                    throw new QueueNotFoundException(queue);
                  }
                  return rs.getLong(1);
                }
              }
            }));
  }

  @FunctionalInterface
  private interface ConditionBinder {
    /** Binds the condition's parameters from index 1; returns the next index. */
    int bind(PreparedStatement ps) throws SQLException;
  }

  /** The first readable offset meeting {@code condition}, or the tail when none does. */
  private long boundedLookup(String queue, String condition, ConditionBinder binder) {
    return db.read(
        queue,
        c -> {
          try (PreparedStatement ps =
              c.prepareStatement(
                  "SELECT q.tail, (SELECT m.off FROM "
                      + s
                      + ".messages m WHERE m.queue_id = q.id AND m.off >= q.head"
                      + " AND m.off < q.tail AND "
                      + condition
                      + " ORDER BY m.off LIMIT 1) FROM "
                      + s
                      + ".queues q WHERE q.name = ?")) {
            int next = binder.bind(ps);
            ps.setString(next, queue);
            try (ResultSet rs = ps.executeQuery()) {
              if (!rs.next()) {
                throw new QueueNotFoundException(queue);
              }
              long found = rs.getLong(2);
              return rs.wasNull() ? rs.getLong(1) : found;
            }
          }
        });
  }

  /**
   * Sleeps on a local condition woken by appends of any process (LISTEN/NOTIFY), re-checking the
   * tail at least every {@code poll.interval.ms}; never spins.
   */
  @Override
  public boolean awaitAppend(String queue, long offset, Duration timeout)
      throws InterruptedException {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(timeout, "timeout");
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted while waiting for an append to " + queue);
    }
    AppendListener.Waiters w = listener.waiters(queue);
    long pollNanos = TimeUnit.MILLISECONDS.toNanos(db.config().pollIntervalMs());
    long deadline = System.nanoTime() + StoreChecks.awaitNanos(timeout);
    while (true) {
      long generation;
      w.lock.lock();
      try {
        generation = w.generation;
      } finally {
        w.lock.unlock();
      }
      if (tail(queue) > offset) {
        return true;
      }
      long remaining = deadline - System.nanoTime();
      if (remaining <= 0) {
        return false;
      }
      w.lock.lockInterruptibly();
      try {
        if (w.generation == generation) {
          w.appended.awaitNanos(Math.min(remaining, pollNanos));
        }
      } finally {
        w.lock.unlock();
      }
    }
  }

  /** Closes the whole {@link PostgresStorage} (both halves). Idempotent. */
  @Override
  public void close() {
    closeStorage.run();
  }

  @Override
  public String toString() {
    return description;
  }

  // ---- helpers -------------------------------------------------------------------------------

  private Message decode(String queue, byte[] body, long offset) {
    try {
      return MessageCodec.decode(body, offset);
    } catch (IllegalArgumentException e) {
      throw new StoreCorruptedException(
          queue, description + " messages", offset, "unreadable message body: " + e.getMessage());
    }
  }

  private QueueConfig decodeConfig(String queue, byte[] json) {
    try {
      return QueueConfigCodec.fromJson(json);
    } catch (RuntimeException e) {
      throw new StoreCorruptedException(
          queue, description + " queues", -1, "unreadable queue config: " + e.getMessage());
    }
  }
}
