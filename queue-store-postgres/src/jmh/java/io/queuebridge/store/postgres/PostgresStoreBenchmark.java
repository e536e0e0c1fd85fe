package io.queuebridge.store.postgres;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The postgres store against plain JDBC doing the same work on the same server in the same run.
 *
 * <ul>
 *   <li>{@code appendBatchAndSync} (100 messages of {@code bodyBytes} and one checkpoint per call,
 *       one transaction each) vs {@code rawBatchedInsert}: the same 100 bodies inserted with one
 *       batched (rewritten multi-row) INSERT into a plain table and committed.
 *   <li>{@code claimAckAllCoordinator}: a GroupCoordinator claims {@code batch} messages ({@code
 *       claimBatch}, one transaction) and acknowledges them with one {@code ackAll} (one
 *       transaction) vs {@code rawSkipLockedClaimBatchDelete}: {@code UPDATE ... WHERE id IN
 *       (SELECT ... FOR UPDATE SKIP LOCKED LIMIT batch) RETURNING}, {@code COMMIT}, then one {@code
 *       DELETE ... WHERE id = ANY(?)} and {@code COMMIT}. These two are the batched pair.
 *   <li>{@code claimAckCoordinator}: the same claim, then {@link GroupDelivery#ack()} per delivery
 *       (one transaction each) vs {@code rawSkipLockedClaimDelete}: the same raw claim, then one
 *       {@code DELETE} and {@code COMMIT} per row.
 * </ul>
 *
 * Both sides commit with the server's {@code synchronous_commit} (on for the test server), so every
 * commit waits for a WAL flush. One operation = one batch (100 appended, or {@code batch} claimed
 * and acknowledged). Before each iteration the claim benchmarks top their backlog up to {@link
 * #BACKLOG} messages (rows), so an iteration never runs dry.
 *
 * <pre>
 * mvn -B -ntp -Pbench -pl queue-core,queue-store-postgres test-compile \
 *   exec:exec -Dpg.jmh.args="PostgresStoreBenchmark"
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 3)
@Measurement(iterations = 5, time = 3)
@Fork(1)
@Threads(1)
public class PostgresStoreBenchmark {
  static final int APPEND_BATCH = 100;

  /**
   * Messages (rows) available to claim when an iteration starts: more than one iteration of the
   * fastest claim benchmark consumes.
   */
  static final int BACKLOG = 120_000;

  /** A fresh database with a store and a raw table. */
  @State(Scope.Benchmark)
  public static class Db {
    /** The size of every message body (1 KiB and 200 bytes), on both sides alike. */
    @Param({"1024", "200"})
    public int bodyBytes;

    PostgresTestDatabase database;
    Storage storage;
    Connection raw;
    byte[][] bodies;
    List<Message> batch;
    long rawOffset;

    @Setup(Level.Trial)
    public void open() throws SQLException {
      database = PostgresTestDatabase.create();
      storage = QueueStores.open("postgres", database.config());
      storage.queues().createQueue(QueueConfig.durable("append").build());
      storage
          .queues()
          .createQueue(QueueConfig.durable("work").messageTtl(java.time.Duration.ZERO).build());
      Properties p = new Properties();
      p.setProperty("reWriteBatchedInserts", "true");
      raw = database.connect(p);
      try (Statement st = raw.createStatement()) {
        st.execute(
            "CREATE TABLE raw_messages (queue_id bigint NOT NULL, off bigint NOT NULL,"
                + " body bytea NOT NULL, PRIMARY KEY (queue_id, off))");
        st.execute(
            "CREATE TABLE raw_jobs (id bigserial PRIMARY KEY, body bytea NOT NULL,"
                + " claimed_by text)");
      }
      raw.setAutoCommit(false);
      Random r = new Random(42);
      bodies = new byte[APPEND_BATCH][bodyBytes];
      batch = new ArrayList<>();
      for (byte[] b : bodies) {
        for (int i = 0; i < b.length; i++) {
          b[i] = (byte) ('a' + r.nextInt(26));
        }
        batch.add(Message.builder().topic("append").value(b).build());
      }
    }

    @TearDown(Level.Trial)
    public void close() throws SQLException {
      raw.close();
      storage.close();
      try {
        database.close();
      } catch (IllegalStateException busy) {
        // an autovacuum worker still busy in the database after the drop's retries: the
        // measurements stand, the database is left behind (named in the message) to drop by hand
        System.err.println("benchmark database not dropped: " + busy.getMessage());
      }
    }
  }

  /** Messages claimed per operation of the claim benchmarks. */
  @State(Scope.Benchmark)
  public static class Batch {
    @Param({"10", "100"})
    int batch;
  }

  /** The claim side: a coordinator with one member, and a backlog topped up per iteration. */
  @State(Scope.Benchmark)
  public static class Work {
    GroupCoordinator coordinator;
    long loaded;
    long claimed;

    @Setup(Level.Trial)
    public void join(Db db) {
      coordinator = GroupCoordinator.builder(db.storage).build();
      coordinator.join("work", "", "g", "c", CursorOption.resume(GroupMode.QUEUE));
    }

    @Setup(Level.Iteration)
    public void load(Db db) {
      while (loaded - claimed < BACKLOG) {
        db.storage.queues().appendBatch("work", db.batch);
        loaded += APPEND_BATCH;
      }
    }
  }

  /** The raw claim side: the same bodies in a plain jobs table, topped up per iteration. */
  @State(Scope.Benchmark)
  public static class RawWork {
    long loaded;
    long claimed;

    @Setup(Level.Iteration)
    public void load(Db db) throws SQLException {
      try (PreparedStatement ps =
          db.raw.prepareStatement("INSERT INTO raw_jobs (body) VALUES (?)")) {
        while (loaded - claimed < BACKLOG) {
          for (byte[] body : db.bodies) {
            ps.setBytes(1, body);
            ps.addBatch();
          }
          ps.executeBatch();
          loaded += APPEND_BATCH;
        }
      }
      db.raw.commit();
    }
  }

  @Benchmark
  public long appendBatchAndSync(Db db) throws InterruptedException {
    return db.storage
        .queues()
        .appendBatchAndSync(
            "append", db.batch, Map.of("partition-0", Long.toString(db.rawOffset++)));
  }

  @Benchmark
  public long rawBatchedInsert(Db db) throws SQLException {
    try (PreparedStatement ps =
        db.raw.prepareStatement(
            "INSERT INTO raw_messages (queue_id, off, body) VALUES (1, ?, ?)")) {
      long first = db.rawOffset;
      for (byte[] body : db.bodies) {
        ps.setLong(1, db.rawOffset++);
        ps.setBytes(2, body);
        ps.addBatch();
      }
      ps.executeBatch();
      db.raw.commit();
      return first;
    }
  }

  private static List<GroupDelivery> claim(Work work, Batch b, Blackhole bh) {
    List<GroupDelivery> claimed = work.coordinator.claimBatch("work", "g", "c", b.batch);
    if (claimed.size() < b.batch) {
      throw new IllegalStateException(
          "backlog exhausted: claimed " + claimed.size() + " of " + b.batch + "; raise BACKLOG");
    }
    for (GroupDelivery d : claimed) {
      bh.consume(d.message().valueUnsafe());
    }
    work.claimed += claimed.size();
    return claimed;
  }

  @Benchmark
  public int claimAckAllCoordinator(Work work, Batch b, Blackhole bh) {
    List<GroupDelivery> claimed = claim(work, b, bh);
    List<GroupDelivery> notAcked = work.coordinator.ackAll(claimed);
    if (!notAcked.isEmpty()) {
      throw new IllegalStateException(notAcked.size() + " deliveries not acknowledged");
    }
    return claimed.size();
  }

  @Benchmark
  public int claimAckCoordinator(Work work, Batch b, Blackhole bh) {
    List<GroupDelivery> claimed = claim(work, b, bh);
    for (GroupDelivery d : claimed) {
      d.ack();
    }
    return claimed.size();
  }

  private static Long[] rawClaim(Db db, RawWork work, Batch b, Blackhole bh) throws SQLException {
    Long[] ids = new Long[b.batch];
    int n = 0;
    try (PreparedStatement ps =
        db.raw.prepareStatement(
            "UPDATE raw_jobs SET claimed_by = ? WHERE id IN (SELECT id FROM raw_jobs"
                + " WHERE claimed_by IS NULL ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED)"
                + " RETURNING id, body")) {
      ps.setString(1, "c");
      ps.setInt(2, b.batch);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids[n++] = rs.getLong(1);
          bh.consume(rs.getBytes(2));
        }
      }
    }
    db.raw.commit();
    if (n < b.batch) {
      throw new IllegalStateException(
          "backlog exhausted: claimed " + n + " of " + b.batch + "; raise BACKLOG");
    }
    work.claimed += n;
    return ids;
  }

  @Benchmark
  public int rawSkipLockedClaimBatchDelete(Db db, RawWork work, Batch b, Blackhole bh)
      throws SQLException {
    Long[] ids = rawClaim(db, work, b, bh);
    try (PreparedStatement ps = db.raw.prepareStatement("DELETE FROM raw_jobs WHERE id = ANY(?)")) {
      ps.setArray(1, db.raw.createArrayOf("bigint", ids));
      ps.executeUpdate();
    }
    db.raw.commit();
    return ids.length;
  }

  @Benchmark
  public int rawSkipLockedClaimDelete(Db db, RawWork work, Batch b, Blackhole bh)
      throws SQLException {
    Long[] ids = rawClaim(db, work, b, bh);
    try (PreparedStatement ps = db.raw.prepareStatement("DELETE FROM raw_jobs WHERE id = ?")) {
      for (long id : ids) {
        ps.setLong(1, id);
        ps.executeUpdate();
        db.raw.commit();
      }
    }
    return ids.length;
  }
}
