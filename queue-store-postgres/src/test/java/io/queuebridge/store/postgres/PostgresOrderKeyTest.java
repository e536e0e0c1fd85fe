package io.queuebridge.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.GroupOverview;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.PrimitivesOnlyGroupStore;
import io.queuebridge.core.store.fixtures.FixtureChecks;
import io.queuebridge.core.store.fixtures.FixtureManifest;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Ordering keys in the postgres store (BEHAVIOUR Q-ORDER, schema version 4): a schema at version 3
 * — the checked-in version-1 dump of an earlier release ({@link PostgresFixtureGenerator}) brought
 * to 3 by the migrations of that release — is read as it is by a read-only open (every entry
 * without a key, no lookup finds one) and migrated by a writable open (column {@code
 * pending.order_key}, partial index {@code pending_key}), after which keyed entries round-trip; and
 * {@code firstPendingByKey}'s indexed query answers what the interface's default, which reads the
 * whole group, answers, on randomised entries and keys; {@code releaseBlocked}'s one statement
 * gives the memory store's answers and leaves its group (the memory and file stores share {@code
 * GroupTable}). Skipped, visibly, without the PostgreSQL test server.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PostgresOrderKeyTest {
  private static final String SCHEMA = PostgresConfig.DEFAULT_SCHEMA;
  private static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");
  private static final String QUEUE = "orders";
  private static final String GROUP = "workers";

  private static Path dump;
  private static FixtureManifest manifest;

  private final List<PostgresTestDatabase> databases = new ArrayList<>();

  @BeforeAll
  static void readFixture() {
    Path dir =
        FixtureChecks.resourceDirectory(
            PostgresOrderKeyTest.class, "/fixtures/" + PostgresFixtureGenerator.DUMP);
    dump = dir.resolve(PostgresFixtureGenerator.DUMP);
    manifest = FixtureManifest.read(dir.resolve(PostgresFixtureGenerator.MANIFEST));
  }

  @AfterEach
  void dropDatabases() {
    databases.forEach(PostgresTestDatabase::close);
  }

  private PostgresTestDatabase fresh() {
    PostgresTestDatabase db = PostgresTestDatabase.create();
    databases.add(db);
    return db;
  }

  /**
   * A fresh database holding the fixture at schema version 3: the version-1 dump restored, then
   * migrations 2 and 3 run as a writable open of the release before version 4 ran them.
   */
  private PostgresTestDatabase versionThree() throws Exception {
    PostgresTestDatabase db = fresh();
    try (Connection c = db.connect()) {
      SqlDump.restore(c, dump);
    }
    try (Connection c = db.connect();
        Statement st = c.createStatement()) {
      for (int v = 2; v <= 3; v++) {
        for (String sql : Schema.migration(v, SCHEMA)) {
          st.execute(sql);
        }
      }
      st.execute("UPDATE " + SCHEMA + ".schema_version SET version = 3");
    }
    assertThat(version(db)).isEqualTo(3);
    assertThat(orderKeyColumn(db)).as("a version-3 schema has no order_key").isEmpty();
    return db;
  }

  private static int version(PostgresTestDatabase db) throws SQLException {
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT max(version) FROM " + SCHEMA + ".schema_version")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** The type, nullability and default of {@code pending.order_key}, if the column exists. */
  private static Optional<String> orderKeyColumn(PostgresTestDatabase db) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT data_type, is_nullable, column_default FROM information_schema.columns"
                    + " WHERE table_schema = ? AND table_name = 'pending'"
                    + " AND column_name = 'order_key'")) {
      ps.setString(1, SCHEMA);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next()
            ? Optional.of(rs.getString(1) + " " + rs.getString(2) + " " + rs.getString(3))
            : Optional.empty();
      }
    }
  }

  /** The definition of index {@code index} of the store schema, if it exists. */
  private static Optional<String> index(PostgresTestDatabase db, String index) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "SELECT indexdef FROM pg_indexes WHERE schemaname = ? AND indexname = ?")) {
      ps.setString(1, SCHEMA);
      ps.setString(2, index);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
      }
    }
  }

  private static List<PendingEntry> fixtureEntries() {
    return manifest.groupsOf(QUEUE).stream()
        .filter(g -> g.id().equals(GROUP))
        .findFirst()
        .orElseThrow()
        .pending();
  }

  private static PendingEntry keyed(long offset, String consumer, String key) {
    return new PendingEntry(offset, consumer, T0, 1, T0, T0.plusSeconds(30), key);
  }

  @Test
  void aReadOnlyOpenReadsAVersionThreeSchemaAsItIsWithEveryEntryUnkeyed() throws Exception {
    PostgresTestDatabase db = versionThree();
    List<PendingEntry> old = fixtureEntries();
    assertThat(old).as("the fixture's pending entries").hasSize(3);
    try (Storage s = QueueStores.provider("postgres").openReadOnly(db.config(SCHEMA))) {
      ConsumerGroupStore groups = s.groups();
      assertThat(groups.getAllPending(QUEUE, GROUP))
          .containsExactlyElementsOf(old)
          .allSatisfy(e -> assertThat(e.orderKey()).isEmpty());
      assertThat(groups.getGroup(QUEUE, GROUP).pending()).containsExactlyElementsOf(old);
      assertThat(groups.findPending(QUEUE, GROUP, old.get(1).offset())).contains(old.get(1));
      assertThat(groups.getPending(QUEUE, GROUP, "worker-2#1")).containsExactly(old.get(2));
      assertThat(groups.duePending(QUEUE, GROUP, T0, null, 10))
          .containsExactlyInAnyOrderElementsOf(old);
      GroupOverview o = groups.overview(QUEUE, GROUP);
      assertThat(o.pending()).isEqualTo(3);
      assertThat(o.blocked()).isZero();
      assertThat(groups.firstPendingByKey(QUEUE, GROUP, List.of("tenant-1", "tenant-2")))
          .as("no entry of a version-3 schema has a key")
          .isEmpty();
      assertThat(groups.firstPendingByKey(QUEUE, "eu@orders/eu/#", List.of("k"))).isEmpty();
      assertThat(groups.firstPendingByKey(QUEUE, "nobody", List.of())).isEmpty();
      assertThatThrownBy(() -> groups.firstPendingByKey(QUEUE, "nobody", List.of("k")))
          .isInstanceOf(GroupNotFoundException.class);
      assertThatThrownBy(() -> groups.firstPendingByKey(QUEUE, GROUP, List.of("")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("empty");
    }
    assertThat(version(db)).as("nothing migrated").isEqualTo(3);
    assertThat(orderKeyColumn(db)).isEmpty();
    assertThat(index(db, "pending_key")).isEmpty();
  }

  @Test
  void aWritableOpenMigratesVersionThreeAndKeyedEntriesRoundTrip() throws Exception {
    PostgresTestDatabase db = versionThree();
    List<PendingEntry> old = fixtureEntries();
    // a read-only store opened on version 3 keeps reading it as version 3 across the migration
    try (Storage before = QueueStores.provider("postgres").openReadOnly(db.config(SCHEMA));
        Storage s = QueueStores.open("postgres", db.config(SCHEMA))) {
      assertThat(version(db)).isEqualTo(Schema.VERSION);
      assertThat(orderKeyColumn(db)).contains("text NO ''::text");
      assertThat(index(db, "pending_key"))
          .hasValueSatisfying(
              def ->
                  assertThat(def)
                      .contains("(queue_id, group_id, order_key, off)")
                      .contains("WHERE (order_key <> ''::text)"));
      assertThat(index(db, "pending_due")).as("version 3's index kept").isPresent();

      ConsumerGroupStore groups = s.groups();
      assertThat(groups.getAllPending(QUEUE, GROUP))
          .as("the entries written before the migration, unkeyed")
          .containsExactlyElementsOf(old);
      assertThat(groups.firstPendingByKey(QUEUE, GROUP, List.of("tenant-1"))).isEmpty();

      // a claim of several messages, a single add, a blocked entry, an unkeyed one beside them
      PendingEntry a10 = keyed(10, "worker-1#1", "tenant-1");
      PendingEntry b11 = keyed(11, "worker-2#1", "tenant-2");
      PendingEntry a12 = PendingEntry.blocked(12, T0, "tenant-1");
      PendingEntry plain13 = new PendingEntry(13, "worker-1#1", T0, 1, T0, T0.plusSeconds(30));
      groups.claimPending(QUEUE, GROUP, List.of(a10, b11, a12, plain13), 14, T0);
      PendingEntry c14 = keyed(14, "worker-2#1", "tenant-3");
      groups.addPending(QUEUE, GROUP, c14);
      List<PendingEntry> all = new ArrayList<>(old);
      all.addAll(List.of(a10, b11, a12, plain13, c14));
      assertThat(groups.getAllPending(QUEUE, GROUP)).containsExactlyElementsOf(all);
      assertThat(groups.findPending(QUEUE, GROUP, 12)).contains(a12);
      assertThat(groups.findPending(QUEUE, GROUP, 12).orElseThrow().visibleAt())
          .isEqualTo(PendingEntry.NEVER);
      assertThat(groups.firstPendingByKey(QUEUE, GROUP, List.of("tenant-1", "tenant-3", "x")))
          .containsOnlyKeys("tenant-1", "tenant-3")
          .containsEntry("tenant-1", a10)
          .containsEntry("tenant-3", c14);
      GroupOverview o = groups.overview(QUEUE, GROUP);
      assertThat(o.scheduled()).isEqualTo(1);
      assertThat(o.blocked()).isEqualTo(1);

      // a transfer keeps the key, an update writes the one it is given
      PendingEntry moved =
          groups.transferPending(
              QUEUE,
              GROUP,
              11,
              "worker-2#1",
              "worker-1#1",
              T0.plusSeconds(1),
              Duration.ofSeconds(5));
      assertThat(moved.orderKey()).isEqualTo("tenant-2");
      assertThat(groups.findPending(QUEUE, GROUP, 11)).contains(moved);
      PendingEntry released = a12.withVisibleAt(T0.plusSeconds(2));
      groups.updatePending(QUEUE, GROUP, released);
      PendingEntry rekeyed = plain13.withOrderKey("tenant-4");
      groups.updatePending(QUEUE, GROUP, rekeyed);
      groups.acknowledgePending(QUEUE, GROUP, "worker-1#1", 10, 1, T0.plusSeconds(3));
      assertThat(groups.firstPendingByKey(QUEUE, GROUP, List.of("tenant-1", "tenant-4")))
          .containsEntry("tenant-1", released)
          .containsEntry("tenant-4", rekeyed);

      // whole-group writes
      groups.createGroup(
          ConsumerGroupState.create(QUEUE, "fresh", "", GroupMode.QUEUE, false, T0)
              .withPending(List.of(keyed(3, "m", "k"), PendingEntry.blocked(4, T0, "k")), T0));
      assertThat(groups.getAllPending(QUEUE, "fresh"))
          .containsExactly(keyed(3, "m", "k"), PendingEntry.blocked(4, T0, "k"));
      ConsumerGroupState g = groups.getGroup(QUEUE, "fresh");
      groups.updateGroup(g.withPending(List.of(PendingEntry.blocked(4, T0, "k2")), T0));
      assertThat(groups.firstPendingByKey(QUEUE, "fresh", List.of("k", "k2")))
          .containsOnlyKeys("k2");

      // the read-only store opened before the migration still reads, every entry unkeyed
      assertThat(before.groups().getAllPending(QUEUE, "fresh"))
          .containsExactly(PendingEntry.blocked(4, T0, ""));
      assertThat(before.groups().firstPendingByKey(QUEUE, "fresh", List.of("k2"))).isEmpty();
    }
    List<PendingEntry> expected = new ArrayList<>();
    try (Storage s = QueueStores.open("postgres", db.config(SCHEMA))) {
      expected.addAll(s.groups().getAllPending(QUEUE, GROUP));
    }
    try (Storage ro = QueueStores.provider("postgres").openReadOnly(db.config(SCHEMA))) {
      assertThat(ro.groups().getAllPending(QUEUE, GROUP))
          .as("a read-only open of version 4 reads the keys")
          .containsExactlyElementsOf(expected)
          .extracting(PendingEntry::orderKey)
          .containsExactly("", "", "", "tenant-2", "tenant-1", "tenant-4", "tenant-3");
      assertThat(ro.groups().firstPendingByKey(QUEUE, GROUP, List.of("tenant-2", "tenant-2")))
          .containsOnlyKeys("tenant-2");
      assertThat(ro.groups().firstPendingByKey(QUEUE, "fresh", List.of("k2")))
          .containsEntry("k2", PendingEntry.blocked(4, T0, "k2"));
    }
  }

  @Test
  void aNewStoreIsCreatedWithTheOrderKeyColumnAndTheIndex() throws Exception {
    PostgresTestDatabase db = fresh();
    try (Storage s = QueueStores.open("postgres", db.config(SCHEMA))) {
      s.queues().createQueue(QueueConfig.durable("q").build());
    }
    assertThat(version(db))
        .isEqualTo(Schema.VERSION)
        .isGreaterThanOrEqualTo(Schema.ORDER_KEYS_FROM);
    assertThat(orderKeyColumn(db)).contains("text NO ''::text");
    assertThat(index(db, "pending_key")).isPresent();
  }

  /** Keys SQL and array literals treat specially, and one of the longest allowed (44 chars). */
  private static final List<String> KEYS =
      List.of(
          "k0",
          "k1",
          "k2",
          "NULL",
          "a,b",
          "{x}",
          "q\"uote",
          "back\\slash",
          " spaced ",
          "it's",
          "ключ-😀",
          "x".repeat(44));

  @Test
  void firstPendingByKeyAnswersWhatTheScanOfTheWholeGroupAnswers() throws Exception {
    long seed = new Random().nextLong();
    Random random = new Random(seed);
    PostgresTestDatabase db = fresh();
    try (Storage s = QueueStores.open("postgres", db.config(SCHEMA))) {
      ConsumerGroupStore pg = s.groups();
      ConsumerGroupStore scan = new PrimitivesOnlyGroupStore(pg);
      for (String q : List.of("a", "b")) {
        s.queues().createQueue(QueueConfig.durable(q).build());
        for (String g : List.of("g", "h")) {
          pg.createGroup(ConsumerGroupState.create(q, g, "", GroupMode.QUEUE, false, T0));
        }
      }
      String[] consumers = {"c1", "c2", "c3"};
      Map<String, Long> next = new HashMap<>();
      int found = 0;
      for (int round = 0; round < 40; round++) {
        String q = random.nextBoolean() ? "a" : "b";
        String g = random.nextInt(3) == 0 ? "h" : "g";
        String where = "seed " + seed + ", round " + round + ", " + q + "/" + g;
        List<PendingEntry> pending = pg.getAllPending(q, g);
        int op = random.nextInt(10);
        if (op < 5 || pending.isEmpty()) { // a claim of up to 12 messages
          long from = next.getOrDefault(q + "/" + g, 0L);
          List<PendingEntry> claim = new ArrayList<>();
          int n = 1 + random.nextInt(12);
          for (int i = 0; i < n; i++) {
            String key = random.nextInt(4) == 0 ? "" : KEYS.get(random.nextInt(KEYS.size()));
            long off = from + i;
            claim.add(
                key.isEmpty() || random.nextBoolean()
                    ? new PendingEntry(
                        off,
                        consumers[random.nextInt(3)],
                        T0,
                        1 + random.nextInt(3),
                        T0,
                        T0.plusSeconds(random.nextInt(60)),
                        key)
                    : PendingEntry.blocked(off, T0, key));
          }
          next.put(q + "/" + g, from + n);
          pg.claimPending(q, g, claim, from + n, T0);
        } else if (op < 7) { // settle some
          for (PendingEntry e : pending) {
            if (random.nextInt(3) == 0) {
              pg.acknowledgePending(q, g, e.consumerId(), e.offset(), e.deliveryCount(), T0);
            }
          }
        } else if (op < 9) { // release or re-key one
          PendingEntry e = pending.get(random.nextInt(pending.size()));
          pg.updatePending(
              q,
              g,
              random.nextBoolean()
                  ? e.withVisibleAt(T0.plusSeconds(5))
                  : e.withOrderKey(KEYS.get(random.nextInt(KEYS.size()))));
        } else { // rewrite the group with every other entry
          List<PendingEntry> kept = new ArrayList<>();
          for (int i = 0; i < pending.size(); i += 2) {
            kept.add(pending.get(i));
          }
          pg.updateGroup(pg.getGroup(q, g).withPending(kept, T0));
        }
        for (String qq : List.of("a", "b")) {
          for (String gg : List.of("g", "h")) {
            List<String> ask = new ArrayList<>();
            int n = random.nextInt(KEYS.size() + 3);
            for (int i = 0; i < n; i++) {
              ask.add(
                  random.nextInt(5) == 0 ? "absent-" + i : KEYS.get(random.nextInt(KEYS.size())));
            }
            Map<String, PendingEntry> answer = pg.firstPendingByKey(qq, gg, ask);
            assertThat(answer)
                .as("%s, asking %s/%s for %s", where, qq, gg, ask)
                .isEqualTo(scan.firstPendingByKey(qq, gg, ask));
            found += answer.size();
          }
        }
        assertThat(pg.firstPendingByKey(q, g, KEYS))
            .as("%s, every key", where)
            .isEqualTo(scan.firstPendingByKey(q, g, KEYS));
        // the postgres overview reads the queue's configuration with the group; the scan does not
        assertThat(pg.overview(q, g))
            .as(where)
            .isEqualTo(scan.overview(q, g).withQueueConfig(s.queues().getQueue(q)));
      }
      assertThat(found).as("seed %s: keys found over the run", seed).isGreaterThan(100);
    }
  }

  /**
   * Random keyed claims (blocked and held entries, read at different times), acknowledgements and
   * {@code releaseBlocked} calls with duplicate, absent and special keys: after every call the
   * postgres group and the memory store's agree ({@code updatedAt} included), and so do the
   * released entries, in order.
   */
  @Test
  void releaseBlockedGivesTheMemoryStoresResults() throws Exception {
    long seed = new Random().nextLong();
    Random random = new Random(seed);
    PostgresTestDatabase db = fresh();
    try (Storage pg = QueueStores.open("postgres", db.config(SCHEMA));
        Storage mem = QueueStores.open("memory", Map.of())) {
      for (Storage s : List.of(pg, mem)) {
        s.queues().createQueue(QueueConfig.durable(QUEUE).build());
        s.groups()
            .createGroup(ConsumerGroupState.create(QUEUE, GROUP, "", GroupMode.QUEUE, false, T0));
      }
      long next = 0;
      int released = 0;
      for (int step = 0; step < 200; step++) {
        Instant now = T0.plusSeconds(step + 1);
        String where = "seed " + seed + ", step " + step;
        int op = random.nextInt(10);
        if (op < 3) { // a claim: keyed entries held or blocked at random, unkeyed ones held
          List<PendingEntry> claim = new ArrayList<>();
          int n = 1 + random.nextInt(8);
          for (int i = 0; i < n; i++) {
            String key = random.nextInt(5) == 0 ? "" : KEYS.get(random.nextInt(4));
            claim.add(
                key.isEmpty() || random.nextInt(3) == 0
                    ? new PendingEntry(next + i, "c1", now, 1, now, now.plusSeconds(30), key)
                    : PendingEntry.blocked(next + i, now, key));
          }
          next += n;
          for (Storage s : List.of(pg, mem)) {
            s.groups().claimPending(QUEUE, GROUP, claim, next, now);
          }
        } else if (op
            < 6) { // settle up to three entries not blocked (a released one claimed first)
          List<PendingEntry> open =
              new ArrayList<>(
                  pg.groups().getAllPending(QUEUE, GROUP).stream()
                      .filter(e -> !e.isBlocked())
                      .toList());
          for (int i = 0; i < 3 && !open.isEmpty(); i++) {
            PendingEntry e = open.remove(random.nextInt(open.size()));
            PendingEntry held =
                e.isScheduled()
                    ? new PendingEntry(
                        e.offset(), "c1", now, 1, now, now.plusSeconds(30), e.orderKey())
                    : e;
            for (Storage s : List.of(pg, mem)) {
              if (held != e) {
                s.groups().updatePending(QUEUE, GROUP, held);
              }
              s.groups()
                  .acknowledgePending(
                      QUEUE, GROUP, held.consumerId(), held.offset(), held.deliveryCount(), now);
            }
          }
        } else { // release some keys
          List<String> keys = new ArrayList<>();
          int n = 1 + random.nextInt(6);
          for (int i = 0; i < n; i++) {
            keys.add(random.nextInt(6) == 0 ? "absent" : KEYS.get(random.nextInt(4)));
          }
          List<PendingEntry> answer = pg.groups().releaseBlocked(QUEUE, GROUP, keys, now);
          assertThat(answer)
              .as("%s: releaseBlocked %s", where, keys)
              .isEqualTo(mem.groups().releaseBlocked(QUEUE, GROUP, keys, now));
          released += answer.size();
        }
        assertThat(pg.groups().getGroup(QUEUE, GROUP))
            .as(where)
            .isEqualTo(mem.groups().getGroup(QUEUE, GROUP));
      }
      System.out.printf("releaseBlocked: seed %d, %d entries released%n", seed, released);
      assertThat(released).as("seed %s: entries released over the run", seed).isGreaterThan(10);
      assertThat(pg.groups().releaseBlocked(QUEUE, GROUP, List.of(), T0)).isEmpty();
      assertThatThrownBy(() -> pg.groups().releaseBlocked(QUEUE, "nobody", List.of("k0"), T0))
          .isInstanceOf(GroupNotFoundException.class);
    }
  }
}
