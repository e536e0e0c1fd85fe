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
 *   <li>{@code appendBatchAndSync} (100 × 1 KiB messages and one checkpoint per call, one
 *       transaction each) vs {@code rawBatchedInsert}: the same 100 bodies inserted with one
 *       batched (rewritten multi-row) INSERT into a plain table and committed.
 *   <li>{@code claimAckCoordinator}: a GroupCoordinator claims 10 messages (one atomically
 *       transaction: claimPending + reads) and acks each (one transaction per ack) vs {@code
 *       rawSkipLockedClaimDelete}: {@code UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED
 *       LIMIT 10) RETURNING body} then one {@code DELETE} transaction per row.
 * </ul>
 *
 * Both sides commit with the server's {@code synchronous_commit} (on for the test server), so every
 * commit waits for a WAL flush. One operation = one batch (100 appended or 10 claimed+acked).
 *
 * <pre>
 * flock /work/bench.lock mvn -B -ntp -Pbench -pl queue-core,queue-store-postgres test-compile \
 *   exec:exec -Dpg.jmh.args="PostgresStoreBenchmark"
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 5)
@Measurement(iterations = 4, time = 10)
@Fork(1)
@Threads(1)
public class PostgresStoreBenchmark {
  static final int APPEND_BATCH = 100;
  static final int CLAIM_BATCH = 10;
  static final int BODY_BYTES = 1024;

  /** Messages loaded before each claim iteration: more than one iteration can consume. */
  static final int PRELOAD = 30_000;

  /** A fresh database with a store and a raw table. */
  @State(Scope.Benchmark)
  public static class Db {
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
      p.setProperty("user", database.user());
      p.setProperty("password", database.password());
      p.setProperty("reWriteBatchedInserts", "true");
      raw = java.sql.DriverManager.getConnection(database.url(), p);
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
      bodies = new byte[APPEND_BATCH][BODY_BYTES];
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
      database.close();
    }
  }

  /** The claim side: a coordinator with one member, and work loaded before each iteration. */
  @State(Scope.Benchmark)
  public static class Work {
    GroupCoordinator coordinator;

    @Setup(Level.Trial)
    public void join(Db db) {
      coordinator = GroupCoordinator.builder(db.storage).build();
      coordinator.join("work", "", "g", "c", CursorOption.resume(GroupMode.QUEUE));
    }

    @Setup(Level.Iteration)
    public void load(Db db) {
      for (int i = 0; i < PRELOAD; i += APPEND_BATCH) {
        db.storage.queues().appendBatch("work", db.batch);
      }
    }
  }

  /** The raw claim side: the same bodies loaded into a plain jobs table before each iteration. */
  @State(Scope.Benchmark)
  public static class RawWork {
    @Setup(Level.Iteration)
    public void load(Db db) throws SQLException {
      try (PreparedStatement ps =
          db.raw.prepareStatement("INSERT INTO raw_jobs (body) VALUES (?)")) {
        for (int i = 0; i < PRELOAD; i++) {
          ps.setBytes(1, db.bodies[i % APPEND_BATCH]);
          ps.addBatch();
          if (i % APPEND_BATCH == APPEND_BATCH - 1) {
            ps.executeBatch();
          }
        }
        ps.executeBatch();
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

  @Benchmark
  public int claimAckCoordinator(Work work, Blackhole bh) {
    List<GroupDelivery> claimed = work.coordinator.claimBatch("work", "g", "c", CLAIM_BATCH);
    for (GroupDelivery d : claimed) {
      bh.consume(d.message().valueUnsafe());
      d.ack();
    }
    if (claimed.isEmpty()) {
      throw new IllegalStateException("preload exhausted: raise PRELOAD");
    }
    return claimed.size();
  }

  @Benchmark
  public int rawSkipLockedClaimDelete(Db db, RawWork work, Blackhole bh) throws SQLException {
    List<Long> ids = new ArrayList<>(CLAIM_BATCH);
    try (PreparedStatement ps =
        db.raw.prepareStatement(
            "UPDATE raw_jobs SET claimed_by = ? WHERE id IN (SELECT id FROM raw_jobs"
                + " WHERE claimed_by IS NULL ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED)"
                + " RETURNING id, body")) {
      ps.setString(1, "c");
      ps.setInt(2, CLAIM_BATCH);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids.add(rs.getLong(1));
          bh.consume(rs.getBytes(2));
        }
      }
    }
    db.raw.commit();
    if (ids.isEmpty()) {
      throw new IllegalStateException("preload exhausted: raise PRELOAD");
    }
    try (PreparedStatement ps = db.raw.prepareStatement("DELETE FROM raw_jobs WHERE id = ?")) {
      for (long id : ids) {
        ps.setLong(1, id);
        ps.executeUpdate();
        db.raw.commit();
      }
    }
    return ids.size();
  }
}
