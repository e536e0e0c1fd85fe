package io.queuebridge.store.postgres;

import io.queuebridge.core.config.Names;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.OffsetOutOfRangeException;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.ReservedQueueException;
import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.AppendResult;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PreparedBatch;
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
 * arrays, the checkpoint upserts, and {@code pg_notify} ({@link #appendSql}). Consecutive messages
 * of a batch share a row, up to {@link #RUN_BYTES} ({@link #runs}, schema version 5): the server's
 * cost of a heap tuple and a primary-key entry is paid per row, not per message. For the sync
 * methods the committed statement is the durability barrier: with {@code synchronous_commit} on,
 * the commit returns after the WAL is flushed. Concurrent durable appenders share WAL flushes
 * (PostgreSQL's own group commit).
 *
 * <p><b>Reads</b> run in autocommit mode and see only committed data, and find the row holding an
 * offset as the last row from at most that offset (a backward step of the primary key), so a row of
 * several messages costs a read nothing more than a lookup; {@link #truncate} is exact (the head
 * moves in one short transaction, the rows below it are deleted right after); {@link #timeOffset}
 * is exact; {@link #sizeOffset} is exact for the store's size measure, the encoded body length of
 * each message, and {@link #bytes} is the retained total of that measure (two primary-key lookups).
 * {@link #awaitAppend} sleeps on a local condition woken by {@link AppendListener} (LISTEN/NOTIFY),
 * re-checking at least every {@code poll.interval.ms}.
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

  /**
   * The most bytes of a run's body (schema version 5), its framing included: a batch's messages go
   * into rows of consecutive messages up to this size, kept in the row's heap tuple by the table's
   * {@code toast_tuple_target} (8160 bytes, the run's framing and the other columns included). A
   * message larger than this has a row of its own, as every message had before version 5.
   */
  static final int RUN_BYTES = 7_680;

  /** The most messages one row holds. */
  static final int RUN_MESSAGES = 256;

  /** Whether the schema has {@code messages.run_length} ({@link Schema#hasRuns}). */
  private final boolean runs;

  /** The column, or its value on a schema without it. */
  private final String runLength;

  /**
   * @param runs whether the schema has the column {@code messages.run_length}: true for a writable
   *     open (it migrates), the schema's own answer for a read-only one
   */
  PgQueueStore(
      Db db,
      AppendListener listener,
      boolean durable,
      String description,
      Runnable closeStorage,
      boolean runs) {
    this.db = db;
    this.listener = listener;
    this.durable = durable;
    this.description = description;
    this.closeStorage = closeStorage;
    this.s = db.config().schema();
    this.runs = runs;
    this.runLength = runs ? "run_length" : "1";
  }

  // ---- administration ------------------------------------------------------------------------

  /** Applies the full {@link QueueConfig#validate()}, like the memory store. */
  @Override
  public void createQueue(QueueConfig config) {
    Objects.requireNonNull(config, "config");
    db.checkOpen();
    config.validate(); // the naming rules of every store included (BEHAVIOUR S-NAMES)
    db.durableCommit(config.name());
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
    db.durableCommit(config.name());
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
    db.durableCommit(name);
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

  /**
   * Encodes the messages and packs them into rows ({@link Rows}) on the caller's thread: the
   * client's whole share of an append, done while a writer's previous batch is being committed.
   */
  @Override
  public PreparedBatch prepareBatch(String queue, List<Message> messages) {
    return new Encoded(this, queue, messages);
  }

  @Override
  public long appendPreparedAndSync(PreparedBatch batch, Map<String, String> checkpoints)
      throws InterruptedException {
    Objects.requireNonNull(batch, "batch");
    Map<String, String> merged = StoreChecks.checkCheckpoints(checkpoints);
    StoreChecks.checkNotInterrupted(batch.queue());
    Rows rows = batch instanceof Encoded e && e.store == this ? e.rows : Rows.of(batch.messages());
    return appendNow(batch.queue(), rows, merged, true);
  }

  /** A batch whose rows this store packed ahead of the write. */
  private static final class Encoded extends PreparedBatch {
    final PgQueueStore store;
    final Rows rows;

    Encoded(PgQueueStore store, String queue, List<Message> messages) {
      super(queue, messages);
      this.store = store;
      this.rows = Rows.of(messages());
    }
  }

  private long appendNow(
      String queue, List<Message> messages, Map<String, String> checkpoints, boolean sync) {
    return appendNow(queue, Rows.of(messages), checkpoints, sync);
  }

  private long appendNow(String queue, Rows rows, Map<String, String> checkpoints, boolean sync) {
    Objects.requireNonNull(queue, "queue");
    boolean own = sync || !db.inBoundTransaction();
    if (!own) {
      db.durableCommit(queue); // a reader may hand it on as soon as it sees it
    }
    long first =
        db.query(
            queue,
            sync ? Db.Mode.WRITE_OWN : Db.Mode.WRITE,
            appendSql(),
            p -> bindAppend(p, queue, rows, checkpoints),
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
    Rows rows = Rows.of(List.of(message));
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
              long offset = appendRows(c, queue, rows);
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
        + ".messages (queue_id, off, run_length, created_s, created_n, size, bytes_before, body)"
        + " SELECT r.id, r.first + e.o, e.n, e.cs, e.cn, e.size, r.before + e.rel, e.body FROM r,"
        + " unnest(?::int[], ?::int[], ?::bigint[], ?::int[], ?::int[], ?::bigint[], ?::bytea[])"
        + " AS e(o, n, cs, cn, size, rel, body)),"
        + " k AS (INSERT INTO "
        + s
        + ".checkpoints (queue_id, key, value) SELECT r.id, x.k, x.v FROM r,"
        + " unnest(?::text[], ?::text[]) AS x(k, v)"
        + " ON CONFLICT (queue_id, key) DO UPDATE SET value = EXCLUDED.value)"
        + " SELECT r.id, r.first, pg_notify(?, ?) FROM r";
  }

  /**
   * A batch encoded and packed into the rows of {@code messages} (schema version 5, {@link #runs}):
   * the columns of {@link #appendSql}, one element per row, offsets and byte positions relative to
   * the batch.
   *
   * @param messages the number of messages
   * @param bytes the encoded bytes of all of them
   */
  private record Rows(
      int messages,
      long bytes,
      Integer[] first,
      Integer[] lengths,
      Long[] createdS,
      Integer[] createdN,
      Integer[] sizes,
      Long[] before,
      byte[][] bodies) {

    static Rows of(List<Message> messages) {
      int n = messages.size();
      byte[][] encoded = new byte[n][];
      for (int i = 0; i < n; i++) {
        encoded[i] = MessageCodec.encode(messages.get(i));
      }
      List<int[]> ranges = runs(encoded);
      int rows = ranges.size();
      Integer[] first = new Integer[rows];
      Integer[] lengths = new Integer[rows];
      Long[] createdS = new Long[rows];
      Integer[] createdN = new Integer[rows];
      Integer[] sizes = new Integer[rows];
      Long[] before = new Long[rows];
      byte[][] bodies = new byte[rows][];
      long running = 0;
      for (int r = 0; r < rows; r++) {
        int from = ranges.get(r)[0];
        int to = ranges.get(r)[1];
        Instant latest = null;
        int size = 0;
        for (int i = from; i < to; i++) {
          Instant t = messages.get(i).createdAt();
          if (t != null && (latest == null || t.isAfter(latest))) {
            latest = t;
          }
          size += encoded[i].length;
        }
        first[r] = from;
        lengths[r] = to - from;
        createdS[r] = latest == null ? null : latest.getEpochSecond();
        createdN[r] = latest == null ? null : latest.getNano();
        sizes[r] = size;
        before[r] = running;
        running += size;
        bodies[r] = MessageCodec.row(encoded, from, to);
      }
      return new Rows(n, running, first, lengths, createdS, createdN, sizes, before, bodies);
    }
  }

  private void bindAppend(Db.Params p, String queue, Rows rows, Map<String, String> checkpoints)
      throws SQLException {
    String[] keys = new String[checkpoints.size()];
    String[] values = new String[keys.length];
    int k = 0;
    for (Map.Entry<String, String> e : checkpoints.entrySet()) {
      keys[k] = e.getKey();
      values[k++] = e.getValue();
    }
    long n = rows.messages();
    long bytes = rows.bytes();
    p.setLong(1, n).setLong(2, bytes).setString(3, queue).setLong(4, n).setLong(5, bytes);
    p.setArray(6, "int4", rows.first()).setArray(7, "int4", rows.lengths());
    p.setArray(8, "bigint", rows.createdS()).setArray(9, "int4", rows.createdN());
    p.setArray(10, "int4", rows.sizes()).setArray(11, "bigint", rows.before());
    p.setArray(12, "bytea", rows.bodies());
    p.setArray(13, "text", keys).setArray(14, "text", values);
    p.setString(15, db.config().channel()).setString(16, queue);
  }

  /**
   * The rows a batch of encodings goes into, each {@code [from, to)}: consecutive messages up to
   * {@link #RUN_BYTES} and {@link #RUN_MESSAGES} a row, a larger message alone.
   */
  static List<int[]> runs(byte[][] bodies) {
    List<int[]> out = new ArrayList<>();
    int from = 0;
    long bytes = 5; // the run's marker and count
    for (int i = 0; i < bodies.length; i++) {
      int length = 4 + bodies[i].length;
      if (i > from && (bytes + length > RUN_BYTES || i - from == RUN_MESSAGES)) {
        out.add(new int[] {from, i});
        from = i;
        bytes = 5;
      }
      bytes += length;
    }
    if (bodies.length > from) {
      out.add(new int[] {from, bodies.length});
    }
    return out;
  }

  /** The first offset of an append, from the row of {@link #appendSql}. */
  private static long appended(String queue, ResultSet rs) throws SQLException {
    if (!rs.next()) {
      throw new QueueNotFoundException(queue);
    }
    return rs.getLong(2);
  }

  /** {@link #appendSql} inside a transaction of the caller's (a deduplicated append). */
  private long appendRows(Connection c, String queue, Rows rows) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(appendSql())) {
      bindAppend(new Db.Params(ps, 0), queue, rows, Map.of());
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

  /**
   * One statement: the row holding {@code offset} is the last row from at most that offset (one
   * backward step of the primary key).
   */
  @Override
  public Message read(String queue, long offset) {
    Objects.requireNonNull(queue, "queue");
    return db.query(
        queue,
        Db.Mode.READ,
        withRows(
            "q.head, q.tail, m.off, m.n, m.body",
            "body",
            "off <= ? ORDER BY off DESC LIMIT 1",
            "? >= q.head AND ? < q.tail"),
        p -> p.setLong(1, offset).setLong(2, offset).setLong(3, offset).setString(4, queue),
        rs -> {
          if (!rs.next()) {
            throw new QueueNotFoundException(queue);
          }
          byte[] body = rs.getBytes(5);
          long off = rs.getLong(3);
          int n = body == null ? 0 : rowLength(queue, off, rs.getInt(4), body);
          if (body == null || off + n <= offset) {
            throw new OffsetOutOfRangeException(queue, offset, rs.getLong(1), rs.getLong(2));
          }
          List<Message> one = new ArrayList<>(1);
          decodeRow(queue, off, n, body, offset, offset + 1, 1, one);
          return one.get(0);
        });
  }

  /**
   * One statement: the rows from the one holding the start (one backward step of the primary key)
   * to the one holding {@code start + limit - 1}, at most {@code limit} of them since a row holds
   * at least one message.
   */
  @Override
  public List<Message> readBatch(String queue, long start, int limit) {
    StoreChecks.checkReadLimit(queue, limit);
    Objects.requireNonNull(queue, "queue");
    long from = Math.min(start, Long.MAX_VALUE - limit); // no overflow in SQL; far past any tail
    return db.query(
        queue,
        Db.Mode.READ,
        withRows(
                "q.head, q.tail, m.off, m.n, m.body",
                "body",
                "off >= "
                    + rowHolding("GREATEST(?, q.head)")
                    + " AND off < LEAST(q.tail, GREATEST(?, q.head) + ?) ORDER BY off",
                "true")
            + " ORDER BY m.off",
        p ->
            p.setLong(1, from)
                .setLong(2, from)
                .setLong(3, from)
                .setInt(4, limit)
                .setString(5, queue),
        rs -> {
          if (!rs.next()) {
            throw new QueueNotFoundException(queue);
          }
          return List.copyOf(decodeRows(queue, from, limit, rs));
        });
  }

  /**
   * The messages of a read's rows from the current one on (columns head, tail, off, n, body): those
   * from {@code from} (raised to the head) up to {@code limit} of them.
   */
  private List<Message> decodeRows(String queue, long from, int limit, ResultSet rs)
      throws SQLException {
    long first = Math.max(from, rs.getLong(1));
    long tail = rs.getLong(2);
    List<Message> out = new ArrayList<>();
    do {
      byte[] body = rs.getBytes(5);
      if (body != null) {
        long off = rs.getLong(3);
        int n = rowLength(queue, off, rs.getInt(4), body);
        decodeRow(queue, off, n, body, first, tail, limit - out.size(), out);
      }
    } while (rs.next() && out.size() < limit);
    return out;
  }

  /**
   * {@link #readBatch} from the cursor of a group, read by the statement itself: its parameters are
   * the group id, the limit and the queue name; its rows are read by {@link #fromGroupCursor}.
   */
  String fromGroupCursorSql() {
    return "SELECT q.head, q.tail, m.off, m.n, m.body, c.cur FROM "
        + s
        + ".queues q JOIN LATERAL (SELECT g.cur FROM "
        + s
        + ".groups g WHERE g.queue_id = q.id AND g.group_id = ?) c ON true LEFT JOIN LATERAL"
        + " (SELECT off, "
        + runLength
        + " AS n, body FROM "
        + s
        + ".messages WHERE queue_id = q.id AND off >= "
        + rowHolding("GREATEST(c.cur, q.head)")
        + " AND off < LEAST(q.tail, GREATEST(c.cur, q.head) + ?) ORDER BY off) m ON true"
        + " WHERE q.name = ? ORDER BY m.off";
  }

  /**
   * The messages of {@link #fromGroupCursorSql}'s rows, as {@link #readBatch} returns them for the
   * group's cursor; null when there is no row (no such queue or group).
   */
  List<Message> fromGroupCursor(String queue, int limit, ResultSet rs) throws SQLException {
    if (!rs.next()) {
      return null;
    }
    return decodeRows(queue, rs.getLong(6), limit, rs);
  }

  /**
   * {@code SELECT columns} of the queues row {@code q} named by the statement's last parameter,
   * joined with the rows {@code m} of its messages that {@code rows} selects (a condition on them
   * and its ordering; each row with {@code off}, {@code n}, its message count, and {@code
   * rowColumns}) where {@code on} holds; one row with null {@code m} columns when none does.
   */
  private String withRows(String columns, String rowColumns, String rows, String on) {
    return "SELECT "
        + columns
        + " FROM "
        + s
        + ".queues q LEFT JOIN LATERAL (SELECT off, "
        + runLength
        + " AS n, "
        + rowColumns
        + " FROM "
        + s
        + ".messages WHERE queue_id = q.id AND "
        + rows
        + ") m ON "
        + on
        + " WHERE q.name = ?";
  }

  /**
   * A subquery for the offset of the row holding offset {@code at} (an SQL expression over the
   * queues row {@code q}): the last row from at most it, or {@code at} itself when there is none.
   * With it a range condition on {@code off} stays a primary-key range.
   */
  private String rowHolding(String at) {
    return "COALESCE((SELECT max(f.off) FROM "
        + s
        + ".messages f WHERE f.queue_id = q.id AND f.off <= "
        + at
        + "), "
        + at
        + ")";
  }

  /**
   * How many messages the row at {@code off} holds: its {@code run_length}, or one on a schema
   * without the column.
   *
   * @throws QueueStoreException if the schema has no runs but the body is one: a writable open
   *     migrated the schema while this read-only view was open
   */
  private int rowLength(String queue, long off, int column, byte[] body) {
    if (runs) {
      return column;
    }
    if (body.length > 0 && body[0] == MessageCodec.RUN) {
      throw new QueueStoreException(
          queue,
          "the row at offset "
              + off
              + " of "
              + description
              + " holds several messages (schema version "
              + Schema.RUNS_FROM
              + " or later): the store was migrated after this read-only view opened; reopen it");
    }
    return 1;
  }

  /**
   * Decodes into {@code out} the messages of the row at {@code off} ({@code n} of them) whose
   * offsets are in {@code [from, to)}, at most {@code max} of them.
   */
  private void decodeRow(
      String queue, long off, int n, byte[] body, long from, long to, int max, List<Message> out) {
    int[] parts = parts(queue, off, n, body);
    int taken = 0;
    for (int i = 0; i < n && taken < max; i++) {
      long offset = off + i;
      if (offset >= from && offset < to) {
        out.add(decode(queue, body, parts[2 * i], parts[2 * i + 1], offset));
        taken++;
      }
    }
  }

  private int[] parts(String queue, long off, int n, byte[] body) {
    try {
      return MessageCodec.parts(body, n);
    } catch (IllegalArgumentException e) {
      throw new StoreCorruptedException(
          queue, description + " messages", off, "unreadable row: " + e.getMessage());
    }
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
    db.durableCommit(queue);
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
    // Rows wholly below the head are unreadable already (a row holding the head stays; reads skip
    // its messages below the head); deleting them outside the head update keeps
    // the queue row (and so appenders) locked only briefly. A crash in between leaves rows that
    // the next truncation deletes.
    db.write(
        queue,
        c ->
            Db.update(
                c,
                "DELETE FROM "
                    + s
                    + ".messages WHERE queue_id = ? AND off < ? AND off + "
                    + runLength
                    + " <= ?",
                ps -> {
                  ps.setLong(1, moved.id());
                  ps.setLong(2, moved.head());
                  ps.setLong(3, moved.head());
                }));
  }

  /**
   * Exact: the first offset whose createdAt is at or after {@code time}, skipping null ones. One
   * statement: the first two rows from the one holding the head whose latest creation time is at or
   * after it (only the first can hold messages below the head, so the second, if any, holds the
   * answer).
   */
  @Override
  public OptionalLong timeOffset(String queue, Instant time) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(time, "time");
    return OptionalLong.of(
        db.query(
            queue,
            Db.Mode.READ,
            withRows(
                    "q.head, q.tail, m.off, m.n, m.body",
                    "body",
                    "off >= "
                        + rowHolding("q.head")
                        + " AND off < q.tail AND (created_s > ? OR (created_s = ? AND"
                        + " created_n >= ?)) ORDER BY off LIMIT 2",
                    "true")
                + " ORDER BY m.off",
            p ->
                p.setLong(1, time.getEpochSecond())
                    .setLong(2, time.getEpochSecond())
                    .setInt(3, time.getNano())
                    .setString(4, queue),
            rs -> {
              if (!rs.next()) {
                throw new QueueNotFoundException(queue);
              }
              long head = rs.getLong(1);
              long tail = rs.getLong(2);
              do {
                byte[] body = rs.getBytes(5);
                if (body == null) {
                  break;
                }
                long off = rs.getLong(3);
                int n = rowLength(queue, off, rs.getInt(4), body);
                List<Message> row = new ArrayList<>(n);
                decodeRow(queue, off, n, body, head, tail, n, row);
                for (Message m : row) {
                  if (m.createdAt() != null && !m.createdAt().isBefore(time)) {
                    return m.offset();
                  }
                }
              } while (rs.next());
              return tail;
            }));
  }

  /**
   * Exact for this store's size measure (the encoded body length): the lowest offset from which the
   * newest messages' sizes sum to at most {@code retentionBytes}. One statement: the first row from
   * the one holding the head whose end meets the budget, and within it the first message that does
   * (else the offset after the row).
   *
   * @throws IllegalArgumentException if {@code retentionBytes} is negative
   */
  @Override
  public OptionalLong sizeOffset(String queue, long retentionBytes) {
    StoreChecks.checkRetentionBytes(queue, retentionBytes);
    Objects.requireNonNull(queue, "queue");
    long budget = Math.min(retentionBytes, Long.MAX_VALUE / 4); // no overflow in SQL
    return OptionalLong.of(
        db.query(
            queue,
            Db.Mode.READ,
            withRows(
                "q.head, q.tail, q.total_bytes, m.off, m.n, m.bytes_before, m.body",
                "bytes_before, body",
                "off >= "
                    + rowHolding("q.head")
                    + " AND off < q.tail AND bytes_before + size + ? >= q.total_bytes"
                    + " ORDER BY off LIMIT 1",
                "true"),
            p -> p.setLong(1, budget).setString(2, queue),
            rs -> {
              if (!rs.next()) {
                throw new QueueNotFoundException(queue);
              }
              long head = rs.getLong(1);
              long tail = rs.getLong(2);
              long total = rs.getLong(3);
              byte[] body = rs.getBytes(7);
              if (body == null) {
                return tail;
              }
              long off = rs.getLong(4);
              int n = rowLength(queue, off, rs.getInt(5), body);
              int[] parts = parts(queue, off, n, body);
              long before = rs.getLong(6);
              for (int i = 0; i < n; i++) {
                long offset = off + i;
                if (offset >= tail) {
                  return tail;
                }
                if (offset >= head && before + budget >= total) {
                  return offset;
                }
                before += parts[2 * i + 1];
              }
              return Math.min(off + n, tail);
            }));
  }

  /**
   * The encoded length of the retained messages (offsets {@code head .. tail - 1}), the measure
   * {@link #sizeOffset} uses: row overhead, indexes, the runs' framing and TOAST compression are
   * not counted. One statement, two primary-key lookups whatever the queue's size: {@code
   * queues.total_bytes} is the running total of every byte ever appended to the queue, and {@code
   * messages.bytes_before} of the row holding the head the total before its first message (plus the
   * lengths of its messages below the head, when the head is inside a run), so their difference is
   * what is retained. Both columns are part of schema version 1 and are maintained by the appends
   * themselves, in their transaction; {@link #truncate} changes neither (it moves the head). Never
   * negative.
   *
   * @throws QueueNotFoundException if there is no such queue
   */
  @Override
  public OptionalLong bytes(String queue) {
    Objects.requireNonNull(queue, "queue");
    return OptionalLong.of(
        db.query(
            queue,
            Db.Mode.READ,
            withRows(
                "q.head, q.total_bytes, m.off, m.n, m.bytes_before,"
                    + " CASE WHEN m.off < q.head THEN m.body END",
                "bytes_before, body",
                "off <= q.head ORDER BY off DESC LIMIT 1",
                "q.head < q.tail"),
            p -> p.setString(1, queue),
            rs -> {
              if (!rs.next()) {
                throw new QueueNotFoundException(queue);
              }
              long head = rs.getLong(1);
              long total = rs.getLong(2);
              long before = rs.getLong(5);
              if (rs.wasNull()) {
                return 0L; // nothing retained
              }
              long off = rs.getLong(3);
              byte[] body = rs.getBytes(6);
              if (body != null) { // the head is inside the row: its messages below the head
                int n = rowLength(queue, off, rs.getInt(4), body);
                int[] parts = parts(queue, off, n, body);
                for (int i = 0; i < n && off + i < head; i++) {
                  before += parts[2 * i + 1];
                }
              }
              return Math.max(0, total - before);
            }));
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

  private Message decode(String queue, byte[] body, int start, int length, long offset) {
    try {
      return MessageCodec.decode(body, start, length, offset);
    } catch (IllegalArgumentException e) {
      throw new StoreCorruptedException(
          queue, description + " messages", offset, "unreadable message body: " + e.getMessage());
    }
  }

  private QueueConfig decodeConfig(String queue, byte[] json) {
    return decodeConfig(description, queue, json);
  }

  /** A queue's configuration as its row holds it; {@code description} names the store. */
  static QueueConfig decodeConfig(String description, String queue, byte[] json) {
    try {
      return QueueConfigCodec.fromJson(json);
    } catch (RuntimeException e) {
      throw new StoreCorruptedException(
          queue, description + " queues", -1, "unreadable queue config: " + e.getMessage());
    }
  }
}
