package io.queuebridge.store.postgres;

import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.StoreNotFoundException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The store's tables, created and migrated on open (see {@link #migrate}).
 *
 * <p><b>Versioning.</b> Table {@code schema_version} holds one row, the version of the layout the
 * schema has. Opening runs every migration above it in order, in one transaction, under a
 * transaction-scoped advisory lock, so several workers opening the store at once are safe: the
 * first migrates, the others wait and then find nothing to do. A schema whose version is newer than
 * this code knows is refused with a message naming both versions; nothing is changed.
 *
 * <p><b>Read-only opens</b> ({@link #check}) never create or migrate anything: they look the
 * schema, its tables and its version up in the catalog and refuse a schema that is missing, lacks a
 * table, or has a version this code cannot read: a newer one as above, or one older than {@link
 * #READ_ONLY_FROM} (which would need the writable open to migrate it first). Versions 1 to 5 are
 * read as they are: version 2 only added the table of deduplication ids, which reads never use,
 * version 3 only an index, and versions 4, 5 and 6 a column each whose absence reads as its default
 * ({@link #hasOrderKeys}, {@link #hasRuns}, {@link #hasPaused}: the stores then name no {@code
 * order_key}, {@code run_length} or {@code paused} in any statement, every entry reads with the
 * empty ordering key, every message row as one message and every group as not paused, as the
 * migrations would have filled them in).
 *
 * <p><b>Layout (version 1).</b> One set of tables per store schema, not per queue, each keyed by
 * the queue's row id ({@code queues.id}, a new id for each incarnation of a name, so a deleted and
 * re-created queue never sees old rows): {@code queues} (name, JSON config, head, tail, byte
 * total), {@code messages} (offset, created-at, size, running byte total before the message, body),
 * {@code checkpoints}, {@code groups}, {@code pending}, {@code consumers}, and {@code catalog} (a
 * version counter bumped by every queue creation, update and deletion, so a store can cache its
 * topic index and still see other processes' changes). There are no foreign keys: the store deletes
 * dependent rows itself, and appends avoid per-row trigger cost. Instants are two columns (epoch
 * seconds, nanos) so they keep nanoseconds.
 *
 * <p><b>Version 2</b> adds {@code dedup} (BEHAVIOUR Q-DEDUP): per queue row id, the deduplication
 * ids remembered, each with the offset of the message it was first stored with and that message's
 * creation time, primary key {@code (queue_id, dedup_id)} and an index on {@code (queue_id,
 * created_s, created_n)} for forgetting the ids older than the window.
 *
 * <p><b>Version 3</b> adds the index {@code pending_due} on {@code pending (queue_id, group_id,
 * visible_s, visible_n, off)}: the engine finds a group's entries claimable now (redeliveries and
 * scheduled messages, BEHAVIOUR Q-DELAY) from it without reading the others.
 *
 * <p><b>Version 4</b> adds the column {@code pending.order_key} ({@code text NOT NULL DEFAULT ''}:
 * the pending entry's ordering key, empty for none, BEHAVIOUR Q-ORDER; a constant default, so
 * adding it rewrites no row) and the partial index {@code pending_key} on {@code pending (queue_id,
 * group_id, order_key, off) WHERE order_key <> ''}: the engine finds a key's lowest entry from it,
 * and entries without a key (every entry of a queue that orders nothing) cost it nothing.
 *
 * <p><b>Version 5</b> adds the column {@code messages.run_length} ({@code int NOT NULL DEFAULT 1},
 * a constant default again): a row holds the {@code run_length} consecutive messages from offset
 * {@code off}, so an append of a batch writes a heap tuple and an index entry per few kilobytes
 * instead of per message (the server's per-row cost bounded the postgres sink). Its body is then a
 * run ({@link MessageCodec}), {@code size} the sum of the messages' encoded lengths, {@code
 * bytes_before} the running total before the first of them, and {@code created_s, created_n} the
 * latest creation time among them (null when none has one), which is the creation time of the
 * message itself for a row of one. Rows never overlap and leave no gap between the head and the
 * tail. The migration also sets {@code toast_tuple_target = 8160} on the table, so a run of up to
 * {@link PgQueueStore#RUN_BYTES} stays in its heap tuple, uncompressed, instead of going out of
 * line to TOAST.
 */
final class Schema {
  /** The layout version this code writes. */
  static final int VERSION = 6;

  /** The oldest version a read-only open reads as it is (without migrating). */
  static final int READ_ONLY_FROM = 1;

  /** The first version with the column {@code pending.order_key}. */
  static final int ORDER_KEYS_FROM = 4;

  /** The first version with the column {@code messages.run_length}. */
  static final int RUNS_FROM = 5;

  /** The first version with the column {@code groups.paused}. */
  static final int PAUSED_FROM = 6;

  /** The tables of a schema at version 1, {@code schema_version} included. */
  private static final Set<String> TABLES_V1 =
      Set.of(
          "schema_version",
          "catalog",
          "queues",
          "messages",
          "checkpoints",
          "groups",
          "pending",
          "consumers");

  /** The tables of a schema at {@link #VERSION}, {@code schema_version} included. */
  static final Set<String> TABLES = union(TABLES_V1, Set.of("dedup"));

  private static Set<String> union(Set<String> a, Set<String> b) {
    Set<String> all = new TreeSet<>(a);
    all.addAll(b);
    return Set.copyOf(all);
  }

  /** The tables of a schema at {@code version} (one this code reads). */
  static Set<String> tables(int version) {
    return version == 1 ? TABLES_V1 : TABLES;
  }

  /**
   * Whether a schema at {@code version} (one this code reads) has the column {@code
   * pending.order_key}; without it every pending entry has the empty ordering key.
   */
  static boolean hasOrderKeys(int version) {
    return version >= ORDER_KEYS_FROM;
  }

  /**
   * Whether a schema at {@code version} (one this code reads) has the column {@code
   * messages.run_length}; without it every row holds one message.
   */
  static boolean hasRuns(int version) {
    return version >= RUNS_FROM;
  }

  /**
   * Whether a schema at {@code version} (one this code reads) has the column {@code groups.paused};
   * without it no group is paused.
   */
  static boolean hasPaused(int version) {
    return version >= PAUSED_FROM;
  }

  /** Key of the advisory lock that serialises migrations (any schema of any database). */
  private static final long MIGRATION_LOCK = 0x5142_5343_4845_4D41L; // "QBSCHEMA"

  private Schema() {}

  /**
   * The statements of migration {@code to} (from {@code to - 1}), for schema {@code s}; also run by
   * the tests that build a schema of an older version.
   */
  static List<String> migration(int to, String s) {
    if (to == 1) {
      return List.of(
          "CREATE TABLE "
              + s
              + ".catalog (id int PRIMARY KEY CHECK (id = 1), version bigint NOT NULL)",
          "INSERT INTO " + s + ".catalog VALUES (1, 0)",
          "CREATE TABLE "
              + s
              + ".queues (id bigserial PRIMARY KEY, name text NOT NULL UNIQUE, config bytea NOT NULL,"
              + " reserved boolean NOT NULL, head bigint NOT NULL DEFAULT 0,"
              + " tail bigint NOT NULL DEFAULT 0, total_bytes bigint NOT NULL DEFAULT 0)",
          "CREATE TABLE "
              + s
              + ".messages (queue_id bigint NOT NULL, off bigint NOT NULL, created_s bigint,"
              + " created_n int, size int NOT NULL, bytes_before bigint NOT NULL,"
              + " body bytea NOT NULL, PRIMARY KEY (queue_id, off))",
          "CREATE TABLE "
              + s
              + ".checkpoints (queue_id bigint NOT NULL, key text NOT NULL, value text NOT NULL,"
              + " PRIMARY KEY (queue_id, key))",
          "CREATE TABLE "
              + s
              + ".groups (queue_id bigint NOT NULL, group_id text NOT NULL, pattern text NOT NULL,"
              + " mode text NOT NULL, auto_commit boolean NOT NULL, cur bigint NOT NULL,"
              + " committed bigint NOT NULL, created_s bigint NOT NULL, created_n int NOT NULL,"
              + " updated_s bigint NOT NULL, updated_n int NOT NULL,"
              + " PRIMARY KEY (queue_id, group_id))",
          "CREATE TABLE "
              + s
              + ".pending (queue_id bigint NOT NULL, group_id text NOT NULL, off bigint NOT NULL,"
              + " consumer_id text NOT NULL, claimed_s bigint NOT NULL, claimed_n int NOT NULL,"
              + " delivery_count int NOT NULL, first_s bigint NOT NULL, first_n int NOT NULL,"
              + " visible_s bigint NOT NULL, visible_n int NOT NULL,"
              + " PRIMARY KEY (queue_id, group_id, off))",
          "CREATE TABLE "
              + s
              + ".consumers (queue_id bigint NOT NULL, group_id text NOT NULL,"
              + " consumer_id text NOT NULL, client_id text NOT NULL, registered_s bigint NOT NULL,"
              + " registered_n int NOT NULL, heartbeat_s bigint NOT NULL,"
              + " heartbeat_n int NOT NULL, PRIMARY KEY (queue_id, group_id, consumer_id))");
    }
    if (to == 2) {
      return List.of(
          "CREATE TABLE "
              + s
              + ".dedup (queue_id bigint NOT NULL, dedup_id text NOT NULL, off bigint NOT NULL,"
              + " created_s bigint NOT NULL, created_n int NOT NULL,"
              + " PRIMARY KEY (queue_id, dedup_id))",
          "CREATE INDEX dedup_created ON " + s + ".dedup (queue_id, created_s, created_n)");
    }
    if (to == 3) {
      return List.of(
          "CREATE INDEX pending_due ON "
              + s
              + ".pending (queue_id, group_id, visible_s, visible_n, off)");
    }
    if (to == 4) {
      return List.of(
          "ALTER TABLE " + s + ".pending ADD COLUMN order_key text NOT NULL DEFAULT ''",
          "CREATE INDEX pending_key ON "
              + s
              + ".pending (queue_id, group_id, order_key, off) WHERE order_key <> ''");
    }
    if (to == 5) {
      return List.of(
          "ALTER TABLE " + s + ".messages ADD COLUMN run_length int NOT NULL DEFAULT 1",
          "ALTER TABLE " + s + ".messages SET (toast_tuple_target = 8160)");
    }
    if (to == 6) {
      return List.of(
          "ALTER TABLE " + s + ".groups ADD COLUMN paused boolean NOT NULL DEFAULT false");
    }
    throw new IllegalArgumentException("no migration to version " + to);
  }

  /**
   * Creates the schema if needed and brings it to {@link #VERSION}.
   *
   * @return the version found before migrating (0 for a new schema)
   * @throws QueueStoreException if the schema is newer than this code
   */
  static int migrate(Connection c, PostgresConfig config) throws SQLException {
    String s = config.schema(); // validated: an unquoted lower-case identifier
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(false);
    try (Statement st = c.createStatement()) {
      st.execute("SELECT pg_advisory_xact_lock(" + MIGRATION_LOCK + ")");
      boolean exists;
      try (ResultSet rs =
          st.executeQuery("SELECT 1 FROM pg_namespace WHERE nspname = '" + s + "'")) {
        exists = rs.next(); // checked first: CREATE SCHEMA needs CREATE on the database even
      } // with IF NOT EXISTS, which a role given a prepared schema may not have
      if (!exists) {
        st.execute("CREATE SCHEMA " + s);
      }
      st.execute("CREATE TABLE IF NOT EXISTS " + s + ".schema_version (version int NOT NULL)");
      int found = 0;
      try (ResultSet rs = st.executeQuery("SELECT max(version) FROM " + s + ".schema_version")) {
        if (rs.next()) {
          found = rs.getInt(1);
        }
      }
      if (found > VERSION) {
        throw newer(config, found);
      }
      for (int v = found + 1; v <= VERSION; v++) {
        for (String sql : migration(v, s)) {
          st.execute(sql);
        }
      }
      if (found < VERSION) {
        st.execute("DELETE FROM " + s + ".schema_version");
        st.execute("INSERT INTO " + s + ".schema_version VALUES (" + VERSION + ")");
      }
      c.commit();
      return found;
    } catch (SQLException | RuntimeException e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(autoCommit);
    }
  }

  private static QueueStoreException newer(PostgresConfig config, int found) {
    return new QueueStoreException(
        null,
        "the postgres store "
            + config.description()
            + " has schema version "
            + found
            + ", newer than this Queue Bridge understands ("
            + VERSION
            + "); upgrade Queue Bridge or use another schema");
  }

  /**
   * Checks, reading only the catalog and {@code schema_version}, that the configured schema holds a
   * store this code can read as it is. Creates, migrates and locks nothing; run it in a read-only
   * transaction.
   *
   * @return the schema's version, {@link #READ_ONLY_FROM} to {@link #VERSION}
   * @throws StoreNotFoundException if the schema does not exist, holds no {@code schema_version}
   *     table or version, or lacks one of the {@link #TABLES}
   * @throws QueueStoreException if the schema version is newer than this code, or older (a writable
   *     open migrates it)
   */
  static int check(Connection c, PostgresConfig config) throws SQLException {
    String s = config.schema();
    String store = config.description();
    Set<String> present = new TreeSet<>();
    boolean schemaExists;
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT c.relname FROM pg_namespace n LEFT JOIN pg_class c ON c.relnamespace = n.oid"
                + " AND c.relkind IN ('r', 'p') WHERE n.nspname = ?")) {
      ps.setString(1, s);
      try (ResultSet rs = ps.executeQuery()) {
        schemaExists = false;
        while (rs.next()) {
          schemaExists = true;
          if (rs.getString(1) != null) {
            present.add(rs.getString(1));
          }
        }
      }
    }
    if (!schemaExists) {
      throw new StoreNotFoundException(
          store,
          "the database has no schema '" + s + "' (expected one created by a writable open)");
    }
    if (!present.contains("schema_version")) {
      throw new StoreNotFoundException(
          store,
          "schema '"
              + s
              + "' has no table schema_version (found tables "
              + present
              + "; a Queue Bridge store has "
              + new TreeSet<>(TABLES)
              + ")");
    }
    int found = 0;
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT max(version) FROM " + s + ".schema_version")) {
      if (rs.next()) {
        found = rs.getInt(1); // 0 for an empty table
      }
    }
    if (found == 0) {
      throw new StoreNotFoundException(
          store, "table " + s + ".schema_version holds no version (expected " + VERSION + ")");
    }
    if (found > VERSION) {
      throw newer(config, found);
    }
    if (found < READ_ONLY_FROM) {
      throw new QueueStoreException(
          null,
          "the postgres store "
              + store
              + " has schema version "
              + found
              + ", older than this Queue Bridge reads ("
              + READ_ONLY_FROM
              + " to "
              + VERSION
              + "); a read-only open migrates nothing: open it writable once to migrate it");
    }
    Set<String> expected = tables(found);
    Set<String> missing = new TreeSet<>(expected);
    missing.removeAll(present);
    if (!missing.isEmpty()) {
      throw new StoreNotFoundException(
          store,
          "schema '"
              + s
              + "' at version "
              + found
              + " lacks the tables "
              + missing
              + " (expected all of "
              + new TreeSet<>(expected)
              + ")");
    }
    return found;
  }
}
