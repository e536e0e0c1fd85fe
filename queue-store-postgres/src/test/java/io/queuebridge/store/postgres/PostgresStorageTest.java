package io.queuebridge.store.postgres;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the postgres store promises beyond the contract kit: schema versioning and concurrent
 * openers, honest durability, wake-ups by NOTIFY across storages, transactional {@code atomically}
 * serialised across storages, gap-free offsets with writers in two storages, the byte total of a
 * queue and exact truncation.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PostgresStorageTest {
  private static final Instant T0 = Instant.parse("2024-05-01T12:00:00Z");

  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();
  private final List<Storage> opened = new ArrayList<>();
  private ExecutorService executor;
  private String schema;

  @BeforeEach
  void setUp(TestInfo test) {
    executor = Executors.newCachedThreadPool();
    schema = "s_" + Integer.toHexString(test.getDisplayName().hashCode() & 0x7fffffff);
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    opened.forEach(Storage::close);
    executor.shutdownNow();
    assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
  }

  private Storage open(Map<String, String> config) {
    Storage s = QueueStores.open("postgres", config);
    opened.add(s);
    return s;
  }

  private Storage open() {
    return open(database.config(schema));
  }

  // ---- schema --------------------------------------------------------------------------------

  @Test
  void concurrentOpenersOfANewSchemaMigrateItOnceAndAllWork() throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Storage>> openers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      openers.add(
          executor.submit(
              () -> {
                go.await();
                return QueueStores.open("postgres", database.config(schema));
              }));
    }
    go.countDown();
    List<Storage> storages = new ArrayList<>();
    for (Future<Storage> f : openers) {
      storages.add(f.get(1, TimeUnit.MINUTES));
    }
    opened.addAll(storages);
    assertThat(versions()).containsExactly(Schema.VERSION);
    storages.get(0).queues().createQueue(QueueConfig.durable("q").build());
    for (Storage s : storages) {
      assertThat(s.queues().listQueues()).extracting(QueueConfig::name).containsExactly("q");
    }
    Storage again = open();
    assertThat(again.queues().listQueues()).hasSize(1);
    assertThat(versions()).containsExactly(Schema.VERSION);
  }

  @Test
  void aSchemaNewerThanThisCodeIsRefusedAndLeftAlone() throws Exception {
    open().queues().createQueue(QueueConfig.durable("q").build());
    opened.forEach(Storage::close);
    opened.clear();
    sql("UPDATE " + schema + ".schema_version SET version = 99");
    assertThatThrownBy(this::open)
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("#" + schema + " ")
        .hasMessageContaining("schema version 99")
        .hasMessageContaining("(" + Schema.VERSION + ")");
    assertThat(versions()).containsExactly(99);
    sql("UPDATE " + schema + ".schema_version SET version = " + Schema.VERSION);
    assertThat(open().queues().listQueues()).hasSize(1);
  }

  // ---- durability ----------------------------------------------------------------------------

  @Test
  void supportsDurableSyncIsFalseWhenTheSessionsCommitAsynchronously() throws Exception {
    Map<String, String> config = database.config(schema);
    config.put("url", database.url() + "?options=-c%20synchronous_commit%3Doff");
    Storage lazy = open(config);
    assertThat(lazy.queues().supportsDurableSync()).isFalse();
    assertThat(lazy.description()).contains("not durable").contains("synchronous_commit");
    Storage strict = open();
    assertThat(strict.queues().supportsDurableSync()).isTrue();
    assertThat(strict.description()).doesNotContain("not durable");
  }

  // ---- wake-ups ------------------------------------------------------------------------------

  @Test
  void awaitAppendIsWokenByAnAppendInAnotherStorageThroughNotify() throws Exception {
    Map<String, String> config = database.config(schema);
    config.put("poll.interval.ms", "60000"); // only a notification can wake the waiter in time
    Storage waiterSide = open(config);
    Storage writerSide = open(config);
    waiterSide.queues().createQueue(QueueConfig.durable("q").build());
    AtomicReference<Thread> waiter = new AtomicReference<>();
    CompletableFuture<Boolean> woken =
        CompletableFuture.supplyAsync(
            () -> {
              waiter.set(Thread.currentThread());
              try {
                return waiterSide.queues().awaitAppend("q", 0, Duration.ofSeconds(50));
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            },
            executor);
    await("waiter parked")
        .atMost(Duration.ofSeconds(20))
        .until(() -> waiter.get() != null && waiter.get().getState() == Thread.State.TIMED_WAITING);
    long appendedAt = System.nanoTime();
    writerSide.queues().append("q", Message.builder().value("x".getBytes(UTF_8)).build());
    await("woken by NOTIFY").atMost(Duration.ofSeconds(2)).until(woken::isDone);
    long latencyMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - appendedAt);
    assertThat(woken.get()).isTrue();
    assertThat(latencyMs).as("wake-up latency in ms").isLessThan(2000);
  }

  // ---- atomically ----------------------------------------------------------------------------

  @Test
  void atomicallyRollsBackEveryChangeOfABodyThatThrows() {
    Storage storage = open();
    storage.queues().createQueue(QueueConfig.durable("q").build());
    storage
        .groups()
        .createGroup(ConsumerGroupState.create("q", "g", "", GroupMode.QUEUE, true, T0));
    IllegalStateException boom = new IllegalStateException("boom");
    assertThatThrownBy(
            () ->
                storage
                    .groups()
                    .atomically(
                        "q",
                        "g",
                        () -> {
                          storage.groups().claimPending("q", "g", List.of(entry(0, "c")), 1, T0);
                          storage.queues().append("q", Message.builder().build());
                          assertThat(storage.groups().getGroup("q", "g").cursor()).isEqualTo(1);
                          throw boom;
                        }))
        .isSameAs(boom);
    ConsumerGroupState after = storage.groups().getGroup("q", "g");
    assertThat(after.cursor()).isZero();
    assertThat(after.pending()).isEmpty();
    assertThat(storage.queues().tail("q")).isZero();
  }

  @Test
  void atomicallyOnOneGroupWaitsForTheHolderInAnotherStorage() throws Exception {
    Storage one = open();
    Storage two = open();
    one.queues().createQueue(QueueConfig.durable("q").build());
    one.groups().createGroup(ConsumerGroupState.create("q", "g", "", GroupMode.QUEUE, true, T0));
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Future<?> holder =
        executor.submit(
            () ->
                one.groups()
                    .atomically(
                        "q",
                        "g",
                        () -> {
                          one.groups().updateCursor("q", "g", 5, T0);
                          holding.countDown();
                          try {
                            return release.await(60, TimeUnit.SECONDS);
                          } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                          }
                        }));
    assertThat(holding.await(30, TimeUnit.SECONDS)).isTrue();
    Future<Long> second =
        executor.submit(
            () ->
                two.groups().atomically("q", "g", () -> two.groups().getGroup("q", "g").cursor()));
    await("the second caller waits on the group's lock")
        .atMost(Duration.ofSeconds(30))
        .until(() -> waitingAdvisoryLocks() == 1);
    assertThat(second).isNotDone();
    // another group is not blocked
    two.groups().createGroup(ConsumerGroupState.create("q", "h", "", GroupMode.QUEUE, true, T0));
    assertThat(two.groups().atomically("q", "h", () -> "free")).isEqualTo("free");
    release.countDown();
    holder.get(30, TimeUnit.SECONDS);
    assertThat(second.get(30, TimeUnit.SECONDS))
        .as("the second body saw the first body's committed change")
        .isEqualTo(5);
  }

  // ---- appends from two storages -------------------------------------------------------------

  @Test
  void writersInTwoStoragesGetContiguousUniqueOffsets() throws Exception {
    Storage one = open();
    Storage two = open();
    one.queues().createQueue(QueueConfig.durable("q").build());
    int perWriter = 100;
    List<Future<List<Long>>> writers = new ArrayList<>();
    for (Storage s : List.of(one, two, one, two)) {
      writers.add(
          executor.submit(
              () -> {
                List<Long> firsts = new ArrayList<>();
                for (int i = 0; i < perWriter; i++) {
                  List<Message> batch =
                      List.of(Message.builder().build(), Message.builder().build());
                  firsts.add(
                      i % 2 == 0
                          ? s.queues().appendBatch("q", batch)
                          : s.queues().appendBatchAndSync("q", batch, Map.of()));
                }
                return firsts;
              }));
    }
    List<Long> all = new ArrayList<>();
    for (Future<List<Long>> w : writers) {
      all.addAll(w.get(1, TimeUnit.MINUTES));
    }
    int total = 4 * perWriter * 2;
    assertThat(all).doesNotHaveDuplicates().allMatch(o -> o % 2 == 0);
    assertThat(one.queues().tail("q")).isEqualTo(total);
    List<Message> read = two.queues().readBatch("q", 0, total + 10);
    assertThat(read).hasSize(total);
    for (int i = 0; i < total; i++) {
      assertThat(read.get(i).offset()).isEqualTo(i);
    }
  }

  // ---- bytes and truncation ------------------------------------------------------------------

  @Test
  void bytesIsTheEncodedSizeOfTheRetainedMessagesAndFollowsAppendsAndTruncation() throws Exception {
    Storage storage = open();
    var q = storage.queues();
    q.createQueue(QueueConfig.durable("q").build());
    q.createQueue(QueueConfig.durable("other").build());
    assertThat(q.bytes("q")).hasValue(0);
    q.append("other", Message.builder().value(new byte[500]).build());

    long previous = 0;
    for (int size : new int[] {10, 200, 3000, 40}) {
      q.append("q", Message.builder().value(new byte[size]).build());
      long now = q.bytes("q").orElseThrow();
      assertThat(now).as("after appending %d value bytes", size).isGreaterThan(previous + size - 1);
      assertThat(now).isEqualTo(storedSizes("q", 0));
      previous = now;
    }
    q.appendBatch(
        "q", List.of(Message.builder().value(new byte[7]).build(), Message.builder().build()));
    assertThat(q.bytes("q")).hasValue(storedSizes("q", 0));
    assertThat(q.sizeOffset("q", q.bytes("q").orElseThrow()))
        .as("everything retained fits in bytes()")
        .hasValue(0);

    long whole = q.bytes("q").orElseThrow();
    q.truncate("q", 2);
    assertThat(q.bytes("q")).hasValue(storedSizes("q", 2));
    assertThat(q.bytes("q").orElseThrow()).isLessThan(whole);
    assertThat(q.sizeOffset("q", q.bytes("q").orElseThrow())).hasValue(2);
    q.truncate("q", q.tail("q"));
    assertThat(q.bytes("q")).hasValue(0);
    q.append("q", Message.builder().value(new byte[64]).build());
    assertThat(q.bytes("q")).hasValue(storedSizes("q", 0));
    assertThat(q.bytes("other")).hasValue(storedSizes("other", 0));
    assertThatThrownBy(() -> q.bytes("nope")).isInstanceOf(QueueNotFoundException.class);
  }

  @Test
  void truncateRemovesExactlyTheRowsBelowMinOffset() throws Exception {
    Storage storage = open();
    var q = storage.queues();
    q.createQueue(QueueConfig.durable("q").build());
    for (int i = 0; i < 10; i++) {
      q.append("q", Message.builder().value(new byte[] {(byte) i}).build());
    }
    q.truncate("q", 4);
    assertThat(q.head("q")).isEqualTo(4);
    assertThat(storedOffsets("q")).containsExactly(4L, 5L, 6L, 7L, 8L, 9L);
    q.truncate("q", 2); // below the head: nothing
    assertThat(q.head("q")).isEqualTo(4);
    assertThat(storedOffsets("q")).containsExactly(4L, 5L, 6L, 7L, 8L, 9L);
    q.truncate("q", 5);
    assertThat(storedOffsets("q")).containsExactly(5L, 6L, 7L, 8L, 9L);
    assertThat(q.read("q", 5).value()).containsExactly(5);
    q.truncate("q", 1_000); // clamped to the tail
    assertThat(q.head("q")).isEqualTo(10);
    assertThat(q.tail("q")).isEqualTo(10);
    assertThat(storedOffsets("q")).isEmpty();
    assertThat(q.append("q", Message.builder().build())).isEqualTo(10);
    assertThat(storedOffsets("q")).containsExactly(10L);
  }

  /**
   * The sum of the stored body sizes of queue {@code queue} in the rows from offset {@code from}
   * (the rows of this class's appends start at the offsets it names).
   */
  private long storedSizes(String queue, long from) throws SQLException {
    try (Connection c = database.connect();
        java.sql.PreparedStatement ps =
            c.prepareStatement(
                "SELECT coalesce(sum(m.size), 0), coalesce(sum(length(m.body)"
                    + " - CASE WHEN m.run_length > 1 THEN 5 + 4 * m.run_length ELSE 0 END), 0) FROM "
                    + schema
                    + ".messages m JOIN "
                    + schema
                    + ".queues q ON q.id = m.queue_id WHERE q.name = ? AND m.off >= ?")) {
      ps.setString(1, queue);
      ps.setLong(2, from);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getLong(1))
            .as("size column = body length without a run's framing")
            .isEqualTo(rs.getLong(2));
        return rs.getLong(1);
      }
    }
  }

  /** The offsets of every stored row of queue {@code queue}, readable or not. */
  private List<Long> storedOffsets(String queue) throws SQLException {
    try (Connection c = database.connect();
        java.sql.PreparedStatement ps =
            c.prepareStatement(
                "SELECT m.off FROM "
                    + schema
                    + ".messages m JOIN "
                    + schema
                    + ".queues q ON q.id = m.queue_id WHERE q.name = ? ORDER BY m.off")) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        List<Long> out = new ArrayList<>();
        while (rs.next()) {
          out.add(rs.getLong(1));
        }
        return out;
      }
    }
  }

  // ---- helpers -------------------------------------------------------------------------------

  private static PendingEntry entry(long offset, String consumer) {
    return new PendingEntry(offset, consumer, T0, 1, T0, T0.plusSeconds(30));
  }

  private List<Integer> versions() throws SQLException {
    try (Connection c = database.connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT version FROM " + schema + ".schema_version")) {
      List<Integer> out = new ArrayList<>();
      while (rs.next()) {
        out.add(rs.getInt(1));
      }
      return out;
    }
  }

  private void sql(String statement) throws SQLException {
    try (Connection c = database.connect();
        Statement st = c.createStatement()) {
      st.execute(statement);
    }
  }

  private static long waitingAdvisoryLocks() throws SQLException {
    try (Connection c = database.connect();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database"
                    + " WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = '"
                    + database.name()
                    + "'")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
