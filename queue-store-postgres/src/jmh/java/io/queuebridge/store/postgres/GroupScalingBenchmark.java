package io.queuebridge.store.postgres;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.ClaimsSwitch;
import java.nio.charset.StandardCharsets;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.AuxCounters;
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
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * K members of one queue-mode group on the postgres store against K raw {@code SKIP LOCKED}
 * consumers of a plain jobs table, on the same server in the same run. Run it once per K with JMH's
 * {@code -t K}; each JMH thread is one member:
 *
 * <ul>
 *   <li>{@code instances}: each member on a store instance of its own (its own pool) under its own
 *       engine, as K worker processes would be;
 *   <li>{@code oneProcess}: one store instance and one engine, K members;
 *   <li>{@code raw}: each member on a JDBC connection of its own: {@code UPDATE ... WHERE id IN
 *       (SELECT ... FOR UPDATE SKIP LOCKED LIMIT 10) RETURNING id, body}, {@code COMMIT}, then
 *       {@code DELETE ... WHERE id = ANY(?)}, {@code COMMIT}.
 * </ul>
 *
 * One operation is {@code claimBatch(10)} and one {@code ackAll} (or the raw pair); the {@code
 * messages} counter is what they claimed and settled, per second. {@code ordered=true} runs ours on
 * a queue ordered by message key (64 keys); the raw side has no ordering. Bodies are 200 bytes.
 * Before each iteration both backlogs are topped up to {@link #BACKLOG} messages, so no iteration
 * runs dry.
 *
 * <pre>
 * for k in 1 2 4 8; do
 *   mvn -B -ntp -q -Pbench -pl queue-core,queue-store-postgres test-compile exec:exec \
 *     -Dpg.jmh.args="GroupScalingBenchmark -t $k -jvmArgsAppend -Dorg.slf4j.simpleLogger.defaultLogLevel=warn"
 * done
 * </pre>
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 1, time = 4)
@Measurement(iterations = 3, time = 4)
@Fork(1)
public class GroupScalingBenchmark {
  static final int BATCH = 10;
  static final int BODY = 200;
  static final int KEYS = 64;

  /** Messages available to claim when an iteration starts. */
  static final int BACKLOG = 150_000;

  /** The server, a store with both queues, and the raw table; shared by every member. */
  @State(Scope.Benchmark)
  public static class Server {
    PostgresTestDatabase database;
    Map<String, String> config;
    Storage storage;
    GroupCoordinator shared;
    Connection raw;
    final AtomicLong claimed = new AtomicLong();
    final AtomicLong rawClaimed = new AtomicLong();
    final AtomicInteger members = new AtomicInteger();
    long loaded;
    long rawLoaded;
    byte[] body;

    /**
     * The engine's path: false, the store as it is (claims and acks in the group's section); true,
     * its group half switched to answer {@code concurrentClaims()} true (row-lock claims and acks
     * outside the section, and outside the coordinator's lock in one process).
     */
    @Param({"false"})
    public boolean concurrent;

    @Setup(Level.Trial)
    public void open() throws SQLException {
      database = PostgresTestDatabase.create();
      config = database.config();
      config.put("pool.size", "10");
      storage = QueueStores.open("postgres", config);
      storage.queues().createQueue(QueueConfig.durable("work").build());
      storage
          .queues()
          .createQueue(QueueConfig.durable("ordered").ordering(OrderingKey.MESSAGE_KEY).build());
      shared = engine(storage);
      body = new byte[BODY];
      new Random(42).nextBytes(body);
      Properties p = new Properties();
      p.setProperty("reWriteBatchedInserts", "true");
      raw = database.connect(p);
      try (Statement st = raw.createStatement()) {
        st.execute(
            "CREATE TABLE raw_jobs (id bigserial PRIMARY KEY, body bytea NOT NULL,"
                + " claimed_by text)");
        st.execute("CREATE INDEX raw_jobs_ready ON raw_jobs (id) WHERE claimed_by IS NULL");
      }
      raw.setAutoCommit(false);
    }

    GroupCoordinator engine(Storage s) {
      return concurrent
          ? GroupCoordinator.builder(s.queues(), ClaimsSwitch.answering(s.groups(), true)).build()
          : GroupCoordinator.builder(s).build();
    }

    Connection connect() throws SQLException {
      Connection c = database.connect();
      c.setAutoCommit(false);
      return c;
    }

    @TearDown(Level.Trial)
    public void close() throws SQLException {
      raw.close();
      storage.close();
      try {
        database.close();
      } catch (IllegalStateException busy) {
        System.err.println("benchmark database not dropped: " + busy.getMessage());
      }
    }
  }

  /** Which queue ours drain, and its backlog topped up per iteration. */
  @State(Scope.Benchmark)
  public static class Queue {
    @Param({"false", "true"})
    public boolean ordered;

    String name;
    long loaded;

    @Setup(Level.Iteration)
    public void load(Server server) {
      name = ordered ? "ordered" : "work";
      List<Message> batch = new ArrayList<>(100);
      while (loaded - server.claimed.get() < BACKLOG) {
        batch.clear();
        for (int i = 0; i < 100; i++) {
          String key = "k" + (int) ((loaded + i) % KEYS);
          batch.add(
              Message.builder()
                  .topic(name)
                  .key(key.getBytes(StandardCharsets.UTF_8))
                  .value(server.body)
                  .build());
        }
        server.storage.queues().appendBatch(name, batch);
        loaded += 100;
      }
    }
  }

  /** The raw backlog, topped up per iteration. */
  @State(Scope.Benchmark)
  public static class RawQueue {
    long loaded;

    @Setup(Level.Iteration)
    public void load(Server server) throws SQLException {
      try (PreparedStatement ps =
          server.raw.prepareStatement("INSERT INTO raw_jobs (body) VALUES (?)")) {
        while (loaded - server.rawClaimed.get() < BACKLOG) {
          for (int i = 0; i < 100; i++) {
            ps.setBytes(1, server.body);
            ps.addBatch();
          }
          ps.executeBatch();
          loaded += 100;
        }
      }
      server.raw.commit();
    }
  }

  /** Messages claimed and settled: JMH reports them per second. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.OPERATIONS)
  public static class Counted {
    public long messages;

    @Setup(Level.Iteration)
    public void clear() {
      messages = 0;
    }
  }

  /** One member: its id, and (for {@code instances}) a store and engine of its own. */
  @State(Scope.Thread)
  public static class Member {
    String id;
    Storage own;
    GroupCoordinator engine;
    Connection raw;
    String joined;

    @Setup(Level.Trial)
    public void name(Server server) {
      id = "m" + server.members.getAndIncrement();
    }

    GroupCoordinator instance(Server server, String queue) {
      if (own == null) {
        Map<String, String> config = new java.util.HashMap<>(server.config);
        config.put("pool.size", "2");
        own = QueueStores.open("postgres", config);
        engine = server.engine(own);
      }
      return join(engine, queue);
    }

    GroupCoordinator shared(Server server, String queue) {
      return join(server.shared, queue);
    }

    private GroupCoordinator join(GroupCoordinator e, String queue) {
      String key = System.identityHashCode(e) + "/" + queue;
      if (!key.equals(joined)) {
        e.join(queue, "", "g", id, CursorOption.resume(GroupMode.QUEUE));
        joined = key;
      }
      return e;
    }

    Connection raw(Server server) throws SQLException {
      if (raw == null) {
        raw = server.connect();
      }
      return raw;
    }

    @TearDown(Level.Trial)
    public void close() throws SQLException {
      if (own != null) {
        own.close();
      }
      if (raw != null) {
        raw.close();
      }
    }
  }

  private static int drain(
      GroupCoordinator engine, Server server, Queue q, Member m, Counted c, Blackhole bh) {
    List<GroupDelivery> claimed = engine.claimBatch(q.name, "g", m.id, BATCH);
    for (GroupDelivery d : claimed) {
      bh.consume(d.message().valueUnsafe());
    }
    List<GroupDelivery> notAcked = engine.ackAll(claimed);
    if (!notAcked.isEmpty()) {
      throw new IllegalStateException(notAcked.size() + " deliveries not acknowledged");
    }
    server.claimed.addAndGet(claimed.size());
    c.messages += claimed.size();
    return claimed.size();
  }

  @Benchmark
  public int instances(Server server, Queue q, Member m, Counted c, Blackhole bh) {
    return drain(m.instance(server, q.name), server, q, m, c, bh);
  }

  @Benchmark
  public int oneProcess(Server server, Queue q, Member m, Counted c, Blackhole bh) {
    return drain(m.shared(server, q.name), server, q, m, c, bh);
  }

  @Benchmark
  public int raw(Server server, RawQueue q, Member m, Counted c, Blackhole bh) throws SQLException {
    Connection db = m.raw(server);
    Long[] ids = new Long[BATCH];
    int n = 0;
    try (PreparedStatement ps =
        db.prepareStatement(
            "UPDATE raw_jobs SET claimed_by = ? WHERE id IN (SELECT id FROM raw_jobs"
                + " WHERE claimed_by IS NULL ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED)"
                + " RETURNING id, body")) {
      ps.setString(1, m.id);
      ps.setInt(2, BATCH);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids[n++] = rs.getLong(1);
          bh.consume(rs.getBytes(2));
        }
      }
    }
    db.commit();
    if (n > 0) {
      try (PreparedStatement ps = db.prepareStatement("DELETE FROM raw_jobs WHERE id = ANY(?)")) {
        ps.setArray(1, db.createArrayOf("bigint", java.util.Arrays.copyOf(ids, n)));
        ps.executeUpdate();
      }
      db.commit();
    }
    server.rawClaimed.addAndGet(n);
    c.messages += n;
    return n;
  }
}
