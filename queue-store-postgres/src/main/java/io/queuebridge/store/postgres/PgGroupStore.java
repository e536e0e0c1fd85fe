package io.queuebridge.store.postgres;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.Names;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.ConsumerGroupExistsException;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.PendingEntryNotFoundException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.GroupOverview;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.support.StoreChecks;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The consumer-group half of {@link PostgresStorage}: one row per group, one per pending entry, one
 * per member.
 *
 * <p><b>Atomicity.</b> Every method is one transaction that first locks the group's row ({@code
 * SELECT ... FOR UPDATE} or an {@code UPDATE} of it), so two calls on one group never lose an
 * update, from any process, and a failing call changes nothing. The acks, which read the entries
 * other acks remove, take that lock in a statement of their own first ({@link
 * Db#queryAfterRowLock}), so that they read after the ack they waited for. The conveniences are
 * row-level SQL with the same behaviour and {@code updatedAt} choices as the interface defaults
 * ({@link #acknowledgeAllPending}: as the memory and file stores' {@code GroupTable}).
 *
 * <p><b>Round trips.</b> The calls of the engine's hot paths are one statement each, so one round
 * trip ({@link Db#query}): {@link #overview}, {@link #claimPending} (cursor and a multi-row upsert
 * from arrays), {@link #acknowledgePending}, {@link #acknowledgeAllPending} (the whole batch),
 * {@link #findPending}, {@link #duePending}, {@link #firstPendingByKey}, {@link #releaseBlocked},
 * {@link #getPending}, {@link #getAllPending}, {@link #updatePending}, {@link #transferPending} and
 * {@link #registerConsumer}. Outside {@code atomically} such a statement runs in autocommit mode
 * (it is its own transaction and snapshot, no {@code BEGIN}/{@code COMMIT} round trips); inside,
 * the first one carries the group's advisory lock, and {@link #claimPending}, whose result the
 * engine does not read, is sent with the next statement or with the {@code COMMIT} ({@link
 * Db#writeDeferred}). An acknowledgement in {@link #atomicallyLazyAck} is its whole transaction:
 * the lock, the statement and the commit in one round trip. Multi-row reads of whole groups ({@link
 * #findGroup}, {@link #getGroup}, {@link #listGroups}) read one REPEATABLE READ snapshot in several
 * statements.
 *
 * <p><b>{@link #atomically}.</b> Runs the body in one transaction holding a transaction-scoped
 * advisory lock on {@code (schema/queue, group)}; every store call the body makes on its thread
 * (group and queue store alike, except the durable appends) joins that transaction, so a
 * read-decide-write sequence is atomic across every process sharing the database.
 *
 * <p><b>Errors.</b> Unknown queue: {@link QueueNotFoundException} for {@link #createGroup}, {@link
 * #findGroup} and {@link #listGroups}; {@link GroupNotFoundException} for the methods that need the
 * group; nothing for {@link #deleteGroup}.
 *
 * <p><b>Shared with the other stores</b>: the argument checks of more than one argument ({@link
 * StoreChecks}) and the naming rules for group ids ({@link Names}). The group rules are SQL here,
 * not {@link io.queuebridge.core.store.support.GroupTable}: a change is one statement on rows
 * shared by every process, never an in-memory table.
 *
 * <p>Thread-safe.
 */
final class PgGroupStore implements ConsumerGroupStore {
  private final PgQueueStore queues;

  /** The columns of a pending entry that every schema version has. */
  private static final String ENTRY_COLUMNS =
      "off, consumer_id, claimed_s, claimed_n, delivery_count, first_s, first_n, visible_s,"
          + " visible_n";

  /** The columns a pending entry is written with (schema version 4 and later). */
  private static final String PENDING_COLUMNS = ENTRY_COLUMNS + ", order_key";

  /** {@code (visible_s, visible_n)} of a blocked entry ({@link PendingEntry#NEVER}). */
  private static final String NEVER_VISIBLE =
      "(" + PendingEntry.NEVER.getEpochSecond() + ", " + PendingEntry.NEVER.getNano() + ")";

  private static final String GROUP_COLUMNS =
      "group_id, pattern, mode, auto_commit, cur, committed, created_s, created_n, updated_s,"
          + " updated_n";

  private final Db db;
  private final String description;
  private final String s;

  /** Whether the schema has {@code pending.order_key} ({@link Schema#hasOrderKeys}). */
  private final boolean orderKeys;

  /**
   * The columns a pending entry is read from, in {@link #pendingEntry} order: without {@code
   * order_key} on a schema older than version 4 (read-only opens only), whose entries read with the
   * empty key.
   */
  private final String readColumns;

  /**
   * What a group's pause flag is read from (the groups table aliased {@code g}): the column {@code
   * groups.paused}, or {@code false} on a schema older than version 6 (read-only opens only), whose
   * groups are not paused.
   */
  private final String pausedColumn;

  /**
   * @param schemaVersion the schema's version: {@link Schema#VERSION} for a writable store (its
   *     open migrated the schema), the schema's own for a read-only one, which reads the columns
   *     that version has
   */
  PgGroupStore(Db db, String description, int schemaVersion) {
    this(db, description, schemaVersion, null);
  }

  /**
   * @param queues the queue store of the same storage, which reads the messages from a group's
   *     cursor with its overview ({@link #overview(String, String, int)}); null: it does not
   */
  PgGroupStore(Db db, String description, int schemaVersion, PgQueueStore queues) {
    this.queues = queues;
    this.db = db;
    this.description = description;
    this.s = db.config().schema();
    this.orderKeys = Schema.hasOrderKeys(schemaVersion);
    this.readColumns = orderKeys ? PENDING_COLUMNS : ENTRY_COLUMNS + ", ''";
    this.pausedColumn = Schema.hasPaused(schemaVersion) ? "g.paused" : "false";
  }

  /**
   * The opening of every one-statement change of a group: the CTE {@code g}, the group's row locked
   * ({@code FOR UPDATE}) with {@code columns} besides its key; its two parameters are the queue
   * name and the group id. An unknown queue or group leaves {@code g} empty.
   */
  private String lockedGroup(String columns) {
    return "WITH g AS (SELECT g.queue_id, g.group_id"
        + columns
        + " FROM "
        + s
        + ".groups g JOIN "
        + s
        + ".queues q ON q.id = g.queue_id WHERE q.name = ? AND g.group_id = ? FOR UPDATE OF g)";
  }

  /**
   * The group's row lock as a statement of its own ({@link Db#queryAfterRowLock}); its two
   * parameters are the queue name and the group id.
   */
  private String groupRowLock() {
    return "SELECT 1 FROM "
        + s
        + ".groups g JOIN "
        + s
        + ".queues q ON q.id = g.queue_id WHERE q.name = ? AND g.group_id = ? FOR UPDATE OF g";
  }

  /** One transaction holding the group's advisory lock; see the class javadoc. */
  @Override
  public <T> T atomically(String queue, String groupId, Supplier<T> body) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    Objects.requireNonNull(body, "body");
    return db.atomically(queue, groupId, body);
  }

  /**
   * {@link #atomically} with {@code synchronous_commit} off for its one transaction, set by the
   * statement that takes the lock (no round trip more): the commit does not wait for the WAL flush.
   * An append in the body (a dead letter) turns it on again ({@link Db#durableCommit}). Nested in
   * another {@code atomically}, the body joins that transaction as it is.
   */
  @Override
  public <T> T atomicallyLazy(String queue, String groupId, Supplier<T> body) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    Objects.requireNonNull(body, "body");
    return db.atomically(queue, groupId, true, body);
  }

  /**
   * The acknowledgement's one statement in autocommit, after the statement that takes the group's
   * advisory lock and turns {@code synchronous_commit} off, all in one round trip ({@link
   * Db#atomicallyOneStatement}): the lock is held while the server runs them and released by the
   * implicit commit. Nested in another section, the body joins it as it is.
   */
  @Override
  public <T> T atomicallyLazyAck(String queue, String groupId, Supplier<T> body) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    Objects.requireNonNull(body, "body");
    return db.atomicallyOneStatement(queue, groupId, body);
  }

  /**
   * A transaction of its own that writes one WAL record and waits for its flush at commit ({@link
   * Db#awaitDurable}): the WAL is flushed in order, so every lazy commit before it is on disk when
   * it returns, and flushes of concurrent callers are shared by the server's group commit.
   */
  @Override
  public boolean awaitDurable() {
    return db.awaitDurable();
  }

  // ---- primitives ----------------------------------------------------------------------------

  @Override
  public void createGroup(ConsumerGroupState group) {
    Objects.requireNonNull(group, "group");
    Names.encode("group id", group.id()); // the file store's naming rules, for portability
    db.write(
        group.queue(),
        c -> {
          long qid = queueId(c, group.queue(), true);
          try (PreparedStatement ps =
              c.prepareStatement(
                  "INSERT INTO "
                      + s
                      + ".groups (queue_id, "
                      + GROUP_COLUMNS
                      + ", paused) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                      + " ON CONFLICT (queue_id, group_id) DO NOTHING")) {
            bindGroup(ps, qid, group);
            if (ps.executeUpdate() == 0) {
              throw new ConsumerGroupExistsException(group.queue(), group.id());
            }
          }
          upsertPending(c, qid, group.id(), group.pending());
          insertConsumers(c, qid, group.id(), group.consumers().values());
          return null;
        });
  }

  @Override
  public Optional<ConsumerGroupState> findGroup(String queue, String groupId) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    return db.readSnapshot(
        queue,
        c -> {
          long qid = queueId(c, queue, false);
          if (!Names.isValid(groupId)) { // no such group can exist (BEHAVIOUR S-NAMES)
            return Optional.<ConsumerGroupState>empty();
          }
          List<ConsumerGroupState> found = load(c, queue, qid, groupId);
          return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
        });
  }

  @Override
  public ConsumerGroupState getGroup(String queue, String groupId) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    return db.readSnapshot(
        queue,
        c -> {
          long qid = groupQueueId(c, queue, groupId, false);
          return load(c, queue, qid, groupId).get(0);
        });
  }

  @Override
  public void updateGroup(ConsumerGroupState group) {
    Objects.requireNonNull(group, "group");
    db.write(
        group.queue(),
        c -> {
          long qid = groupQueueId(c, group.queue(), group.id(), true);
          try (PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE "
                      + s
                      + ".groups SET pattern = ?, mode = ?, auto_commit = ?, cur = ?,"
                      + " committed = ?, created_s = ?, created_n = ?, updated_s = ?,"
                      + " updated_n = ?, paused = ? WHERE queue_id = ? AND group_id = ?")) {
            ps.setString(1, group.pattern());
            ps.setString(2, group.mode().name());
            ps.setBoolean(3, group.autoCommit());
            ps.setLong(4, group.cursor());
            ps.setLong(5, group.committed());
            Db.setInstant(ps, 6, group.createdAt());
            Db.setInstant(ps, 8, group.updatedAt());
            ps.setBoolean(10, group.paused());
            ps.setLong(11, qid);
            ps.setString(12, group.id());
            ps.executeUpdate();
          }
          deleteRows(c, "pending", qid, group.id());
          deleteRows(c, "consumers", qid, group.id());
          upsertPending(c, qid, group.id(), group.pending());
          insertConsumers(c, qid, group.id(), group.consumers().values());
          return null;
        });
  }

  @Override
  public void deleteGroup(String queue, String groupId) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    db.write(
        queue,
        c -> {
          Long qid = queueIdOrNull(c, queue, false);
          if (qid != null) {
            for (String table : new String[] {"pending", "consumers", "groups"}) {
              deleteRows(c, table, qid, groupId);
            }
          }
          return null;
        });
  }

  @Override
  public List<ConsumerGroupState> listGroups(String queue) {
    Objects.requireNonNull(queue, "queue");
    return db.readSnapshot(queue, c -> load(c, queue, queueId(c, queue, false), null));
  }

  // ---- conveniences as row-level SQL ---------------------------------------------------------

  @Override
  public void addPending(String queue, String groupId, PendingEntry entry) {
    Objects.requireNonNull(entry, "entry");
    changeGroup(
        queue,
        groupId,
        (c, qid) -> {
          upsertPending(c, qid, groupId, List.of(entry));
          touch(c, qid, groupId, entry.claimedAt());
        });
  }

  @Override
  public void removePending(String queue, String groupId, String consumerId, long offset) {
    Objects.requireNonNull(consumerId, "consumerId");
    changeGroup(
        queue,
        groupId,
        (c, qid) -> {
          Db.updateSome(
              c,
              "DELETE FROM "
                  + s
                  + ".pending WHERE queue_id = ? AND group_id = ? AND off = ?"
                  + " AND consumer_id = ?",
              ps -> {
                ps.setLong(1, qid);
                ps.setString(2, groupId);
                ps.setLong(3, offset);
                ps.setString(4, consumerId);
              },
              () -> new PendingEntryNotFoundException(queue, groupId, consumerId, offset));
        });
  }

  @Override
  public void updatePending(String queue, String groupId, PendingEntry entry) {
    Objects.requireNonNull(entry, "entry");
    boolean found =
        changeWith(
            queue,
            groupId,
            "UPDATE "
                + s
                + ".pending p SET consumer_id = ?, claimed_s = ?, claimed_n = ?,"
                + " delivery_count = ?, first_s = ?, first_n = ?, visible_s = ?, visible_n = ?,"
                + " order_key = ? FROM g WHERE p.queue_id = g.queue_id AND p.group_id = g.group_id"
                + " AND p.off = ? RETURNING p.off",
            entry.claimedAt(),
            p -> {
              p.setString(3, entry.consumerId());
              p.setInstant(4, entry.claimedAt());
              p.setInt(6, entry.deliveryCount());
              p.setInstant(7, entry.firstClaimedAt());
              p.setInstant(9, entry.visibleAt());
              p.setString(11, entry.orderKey());
              p.setLong(12, entry.offset());
              return 13;
            },
            rs -> {
              rs.getLong(2);
              return !rs.wasNull();
            });
    if (!found) {
      throw new PendingEntryNotFoundException(queue, groupId, entry.consumerId(), entry.offset());
    }
  }

  @Override
  public PendingEntry transferPending(
      String queue,
      String groupId,
      long offset,
      String from,
      String to,
      Instant now,
      Duration visibility) {
    StoreChecks.checkTransfer(from, to, now, visibility);
    Instant visibleAt = now.plus(visibility);
    return changeWith(
        queue,
        groupId,
        "UPDATE "
            + s
            + ".pending p SET consumer_id = ?, claimed_s = ?, claimed_n = ?,"
            + " delivery_count = p.delivery_count + 1, visible_s = ?, visible_n = ? FROM g"
            + " WHERE p.queue_id = g.queue_id AND p.group_id = g.group_id AND p.off = ?"
            + " AND p.consumer_id = ? RETURNING p.delivery_count, p.first_s, p.first_n,"
            + " p.order_key",
        now,
        p -> {
          p.setString(3, to);
          p.setInstant(4, now);
          p.setInstant(6, visibleAt);
          p.setLong(8, offset);
          p.setString(9, from);
          return 10;
        },
        rs -> {
          int count = rs.getInt(2);
          if (rs.wasNull()) {
            throw new PendingEntryNotFoundException(queue, groupId, from, offset);
          }
          return new PendingEntry(
              offset, to, now, count, Db.getInstant(rs, 3), visibleAt, rs.getString(5));
        });
  }

  @Override
  public Optional<PendingEntry> findPending(String queue, String groupId, long offset) {
    List<PendingEntry> found =
        groupPending(
            queue,
            groupId,
            " AND off = ?",
            "off",
            "",
            p -> {
              p.setLong(1, offset);
              return 2;
            });
    return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
  }

  /**
   * One statement: the queue's configuration, the group's row, one aggregate over its pending rows
   * (none is read; blocked entries are the scheduled ones visible {@link PendingEntry#NEVER}) and
   * its members, one row per member (one row with null member columns when there is none). A single
   * statement reads one snapshot, so it needs no transaction of its own; a claim takes the
   * configuration from it instead of a {@code getQueue} of its own.
   */
  @Override
  public GroupOverview overview(String queue, String groupId) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    return db.query(
        queue,
        Db.Mode.READ,
        overviewSql(),
        p -> bindOverview(p, queue, groupId),
        rs -> readOverview(rs, queue, groupId));
  }

  /**
   * {@link #overview(String, String)} and, in the same round trip, the messages from the group's
   * cursor ({@link PgQueueStore#fromGroupCursorSql}): a claim's overview and first read in one.
   */
  @Override
  public GroupOverview overview(String queue, String groupId, int fromCursor) {
    if (fromCursor < 0) {
      throw new IllegalArgumentException(
          "fromCursor must be >= 0 (0 reads no messages), got " + fromCursor);
    }
    if (fromCursor == 0 || queues == null) {
      return overview(queue, groupId);
    }
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    return db.queryTwo(
        queue,
        overviewSql(),
        p -> bindOverview(p, queue, groupId),
        rs -> readOverview(rs, queue, groupId),
        queues.fromGroupCursorSql(),
        p -> p.setString(1, groupId).setInt(2, fromCursor).setString(3, queue),
        rs -> queues.fromGroupCursor(queue, fromCursor, rs),
        (overview, messages) ->
            messages == null ? overview : overview.withFromCursor(messages, fromCursor));
  }

  /** {@link #overview}'s statement; its parameters: the group id and the queue name. */
  private String overviewSql() {
    return "SELECT g.pattern, g.mode, g.auto_commit, g.cur, g.committed, g.created_s, g.created_n,"
        + " g.updated_s, g.updated_n, p.n, p.waiting, p.highest, p.blocked, m.consumer_id,"
        + " m.client_id, m.registered_s, m.registered_n, m.heartbeat_s, m.heartbeat_n,"
        + " q.config, g.group_id, "
        + pausedColumn
        + " FROM "
        + s
        + ".queues q LEFT JOIN "
        + s
        + ".groups g ON g.queue_id = q.id AND g.group_id = ? LEFT JOIN LATERAL (SELECT"
        + " count(*) AS n, count(*) FILTER (WHERE consumer_id = '') AS waiting, max(off) AS"
        + " highest, count(*) FILTER (WHERE consumer_id = '' AND (visible_s, visible_n) = "
        + NEVER_VISIBLE
        + ") AS blocked FROM "
        + s
        + ".pending WHERE queue_id = g.queue_id AND group_id = g.group_id) p ON true LEFT JOIN "
        + s
        + ".consumers m ON m.queue_id = g.queue_id AND m.group_id = g.group_id"
        + " WHERE q.name = ?";
  }

  private void bindOverview(Db.Params p, String queue, String groupId) throws SQLException {
    checkGroupName(queue, groupId);
    p.setString(1, groupId).setString(2, queue);
  }

  private GroupOverview readOverview(ResultSet rs, String queue, String groupId)
      throws SQLException {
    if (!rs.next()) {
      throw new QueueNotFoundException(queue);
    }
    if (rs.getString(21) == null) {
      throw new GroupNotFoundException(queue, groupId);
    }
    QueueConfig config = PgQueueStore.decodeConfig(description, queue, rs.getBytes(20));
    String pattern = rs.getString(1);
    GroupMode mode = GroupMode.valueOf(rs.getString(2));
    boolean autoCommit = rs.getBoolean(3);
    long cursor = rs.getLong(4);
    long committed = rs.getLong(5);
    Instant created = Db.getInstant(rs, 6);
    Instant updated = Db.getInstant(rs, 8);
    int pending = rs.getInt(10);
    int waiting = rs.getInt(11);
    long highest = pending == 0 ? -1 : rs.getLong(12);
    int blocked = rs.getInt(13);
    boolean paused = rs.getBoolean(22);
    Map<String, ConsumerInfo> members = new HashMap<>();
    do {
      String id = rs.getString(14);
      if (id != null) {
        members.put(
            id,
            new ConsumerInfo(id, rs.getString(15), Db.getInstant(rs, 16), Db.getInstant(rs, 18)));
      }
    } while (rs.next());
    ConsumerGroupState g =
        new ConsumerGroupState(
            queue,
            groupId,
            pattern,
            mode,
            autoCommit,
            cursor,
            committed,
            List.of(),
            members,
            created,
            updated,
            paused);
    return new GroupOverview(g, pending, waiting, highest, blocked, config);
  }

  /**
   * One query on the index {@code pending_due} ({@code (queue_id, group_id, visible_s, visible_n,
   * off)}): reads only the entries it returns.
   */
  @Override
  public List<PendingEntry> duePending(
      String queue, String groupId, Instant now, PendingEntry after, int limit) {
    StoreChecks.checkDuePending(queue, groupId, now, limit);
    return groupPending(
        queue,
        groupId,
        " AND (visible_s, visible_n) <= (?, ?)"
            + (after == null ? "" : " AND (visible_s, visible_n, off) > (?, ?, ?)"),
        "visible_s, visible_n, off",
        " LIMIT ?",
        p -> {
          int next = p.setInstant(1, now);
          if (after != null) {
            next = p.setInstant(next, after.visibleAt());
            p.setLong(next++, after.offset());
          }
          p.setInt(next, limit);
          return next + 1;
        });
  }

  /**
   * One query on the index {@code pending_due}: for each queue-mode group of the queue, one index
   * probe that reads its first entry visible after {@code after} and stops; blocked entries ({@link
   * PendingEntry#NEVER}) are left out by the same range.
   */
  @Override
  public Optional<Instant> nextVisible(String queue, Instant after) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(after, "after");
    return db.query(
        queue,
        Db.Mode.READ,
        "SELECT n.visible_s, n.visible_n FROM "
            + s
            + ".queues q LEFT JOIN LATERAL (SELECT p.visible_s, p.visible_n FROM "
            + s
            + ".groups g CROSS JOIN LATERAL (SELECT visible_s, visible_n FROM "
            + s
            + ".pending WHERE queue_id = g.queue_id AND group_id = g.group_id"
            + " AND (visible_s, visible_n) > (?, ?) AND (visible_s, visible_n) < "
            + NEVER_VISIBLE
            + " ORDER BY visible_s, visible_n LIMIT 1) p WHERE g.queue_id = q.id AND g.mode = ?"
            + " ORDER BY p.visible_s, p.visible_n LIMIT 1) n ON true WHERE q.name = ?",
        p -> {
          int next = p.setInstant(1, after);
          p.setString(next, GroupMode.QUEUE.name()).setString(next + 1, queue);
        },
        rs -> {
          if (!rs.next()) {
            throw new QueueNotFoundException(queue);
          }
          long seconds = rs.getLong(1);
          return rs.wasNull()
              ? Optional.<Instant>empty()
              : Optional.of(Instant.ofEpochSecond(seconds, rs.getInt(2)));
        });
  }

  /**
   * One query on the partial index {@code pending_key} ({@code (queue_id, group_id, order_key, off)
   * WHERE order_key <> ''}): for each distinct key, one index probe that reads the key's lowest
   * entry and stops ({@code LATERAL ... ORDER BY off LIMIT 1}), however many entries the key has.
   * No keys: no round trip. On a schema older than version 4 (read-only) no entry has a key: the
   * group is looked up and the answer is empty.
   */
  @Override
  public Map<String, PendingEntry> firstPendingByKey(
      String queue, String groupId, Collection<String> keys) {
    StoreChecks.checkOrderKeys(queue, groupId, keys);
    if (keys.isEmpty()) {
      return new HashMap<>();
    }
    Object[] distinct = new LinkedHashSet<>(keys).toArray();
    Map<String, PendingEntry> found = new HashMap<>();
    if (!orderKeys) {
      groupPending(queue, groupId, " AND false", "off", "", p -> 1); // the group must exist
      return found;
    }
    for (PendingEntry e :
        groupPending(
            queue,
            groupId,
            " AND off IN (SELECT f.off FROM unnest(?::text[]) AS k(wanted) CROSS JOIN LATERAL"
                + " (SELECT off FROM "
                + s
                + ".pending WHERE queue_id = g.queue_id AND group_id = g.group_id"
                + " AND order_key = k.wanted AND order_key <> '' ORDER BY off LIMIT 1) AS f)",
            "off",
            "",
            p -> {
              p.setArray(1, "text", distinct);
              return 2;
            })) {
      found.put(e.orderKey(), e);
    }
    return found;
  }

  /**
   * One statement: locks the group's row, finds the lowest entry of each distinct key (the {@code
   * pending_key} index) — only if the group has a blocked entry at all, one probe of the {@code
   * pending_due} index — and makes those that are blocked visible at {@code at}, setting {@code
   * updatedAt} as {@link #updatePending} of each in turn would (to the {@code claimedAt} of the
   * last released, in the order of {@code keys}). The released entries come back in that order, as
   * the memory and file stores return them.
   */
  @Override
  public List<PendingEntry> releaseBlocked(
      String queue, String groupId, Collection<String> keys, Instant at) {
    StoreChecks.checkOrderKeys(queue, groupId, keys);
    Objects.requireNonNull(at, "at");
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    if (keys.isEmpty()) {
      return new ArrayList<>();
    }
    if (!orderKeys) { // a schema without keys has no keyed entry, so none is blocked behind one
      return ConsumerGroupStore.super.releaseBlocked(queue, groupId, keys, at);
    }
    Object[] distinct = new LinkedHashSet<>(keys).toArray();
    return db.query(
        queue,
        Db.Mode.WRITE,
        lockedGroup("")
            + ","
            + " f AS (SELECT k.i, e.off FROM g CROSS JOIN unnest(?::text[]) WITH ORDINALITY"
            + " AS k(wanted, i) CROSS JOIN LATERAL (SELECT off, consumer_id, visible_s, visible_n"
            + " FROM "
            + s
            + ".pending WHERE queue_id = g.queue_id AND group_id = g.group_id"
            + " AND order_key = k.wanted AND order_key <> '' ORDER BY off LIMIT 1) AS e"
            + " WHERE EXISTS (SELECT 1 FROM "
            + s
            + ".pending b WHERE b.queue_id = g.queue_id AND b.group_id = g.group_id"
            + " AND (b.visible_s, b.visible_n) = "
            + NEVER_VISIBLE
            + " AND b.consumer_id = '') AND e.consumer_id = ''"
            + " AND (e.visible_s, e.visible_n) = "
            + NEVER_VISIBLE
            + "), c AS (UPDATE "
            + s
            + ".pending p SET visible_s = ?, visible_n = ? FROM g, f"
            + " WHERE p.queue_id = g.queue_id AND p.group_id = g.group_id AND p.off = f.off"
            + " RETURNING f.i, p.off, p.consumer_id, p.claimed_s, p.claimed_n, p.delivery_count,"
            + " p.first_s, p.first_n, p.visible_s, p.visible_n, p.order_key),"
            + " t AS (UPDATE "
            + s
            + ".groups x SET (updated_s, updated_n) = (SELECT c.claimed_s, c.claimed_n FROM c"
            + " ORDER BY c.i DESC LIMIT 1) FROM g WHERE x.queue_id = g.queue_id"
            + " AND x.group_id = g.group_id AND EXISTS (SELECT 1 FROM c) RETURNING 1)"
            + " SELECT (SELECT count(*) FROM g), c.* FROM (SELECT 1) AS one LEFT JOIN c ON true"
            + " ORDER BY c.i",
        p -> {
          checkGroupName(queue, groupId);
          p.setString(1, queue).setString(2, groupId);
          p.setArray(3, "text", distinct);
          p.setInstant(4, at);
        },
        rs -> {
          rs.next();
          if (rs.getLong(1) == 0) {
            throw new GroupNotFoundException(queue, groupId);
          }
          return joinedEntries(rs, 2, 3);
        });
  }

  /**
   * One statement: the cursor update (which locks the group row) and one multi-row upsert of the
   * entries from arrays ({@code unnest}); an entry listed twice is written as its last listing.
   */
  @Override
  public void claimPending(
      String queue, String groupId, List<PendingEntry> entries, long cursor, Instant now) {
    StoreChecks.checkClaim(entries, now);
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    Map<Long, PendingEntry> last = new LinkedHashMap<>();
    for (PendingEntry e : entries) {
      last.put(e.offset(), e); // as one upsert after another: the last one wins
    }
    int n = last.size();
    Long[] off = new Long[n];
    String[] holder = new String[n];
    Long[] claimedS = new Long[n];
    Integer[] claimedN = new Integer[n];
    Integer[] count = new Integer[n];
    Long[] firstS = new Long[n];
    Integer[] firstN = new Integer[n];
    Long[] visibleS = new Long[n];
    Integer[] visibleN = new Integer[n];
    String[] key = new String[n];
    int i = 0;
    for (PendingEntry e : last.values()) {
      off[i] = e.offset();
      holder[i] = e.consumerId();
      claimedS[i] = e.claimedAt().getEpochSecond();
      claimedN[i] = e.claimedAt().getNano();
      count[i] = e.deliveryCount();
      firstS[i] = e.firstClaimedAt().getEpochSecond();
      firstN[i] = e.firstClaimedAt().getNano();
      visibleS[i] = e.visibleAt().getEpochSecond();
      visibleN[i] = e.visibleAt().getNano();
      key[i++] = e.orderKey();
    }
    // sent with the section's next statement or its commit: a claim's last change costs no round
    // trip of its own
    db.writeDeferred(
        queue,
        "WITH g AS (UPDATE "
            + s
            + ".groups g SET cur = ?, updated_s = ?, updated_n = ? FROM "
            + s
            + ".queues q WHERE q.id = g.queue_id AND q.name = ? AND g.group_id = ?"
            + " RETURNING g.queue_id, g.group_id),"
            + " i AS (INSERT INTO "
            + s
            + ".pending (queue_id, group_id, "
            + PENDING_COLUMNS
            + ") SELECT g.queue_id, g.group_id, e.* FROM g, unnest(?::bigint[], ?::text[],"
            + " ?::bigint[], ?::int[], ?::int[], ?::bigint[], ?::int[], ?::bigint[], ?::int[],"
            + " ?::text[]) AS e ON CONFLICT (queue_id, group_id, off) DO UPDATE SET"
            + " consumer_id = EXCLUDED.consumer_id, claimed_s = EXCLUDED.claimed_s,"
            + " claimed_n = EXCLUDED.claimed_n, delivery_count = EXCLUDED.delivery_count,"
            + " first_s = EXCLUDED.first_s, first_n = EXCLUDED.first_n,"
            + " visible_s = EXCLUDED.visible_s, visible_n = EXCLUDED.visible_n,"
            + " order_key = EXCLUDED.order_key)"
            + " SELECT count(*) FROM g",
        p -> {
          checkGroupName(queue, groupId);
          p.setLong(1, cursor);
          p.setInstant(2, now);
          p.setString(4, queue).setString(5, groupId);
          p.setArray(6, "bigint", off).setArray(7, "text", holder);
          p.setArray(8, "bigint", claimedS).setArray(9, "int4", claimedN);
          p.setArray(10, "int4", count);
          p.setArray(11, "bigint", firstS).setArray(12, "int4", firstN);
          p.setArray(13, "bigint", visibleS).setArray(14, "int4", visibleN);
          p.setArray(15, "text", key);
        },
        rs -> {
          if (!rs.next() || rs.getLong(1) == 0) {
            throw new GroupNotFoundException(queue, groupId); // nothing was written
          }
          return null;
        });
  }

  /**
   * One statement: locks the group, deletes the entry only if {@code consumerId} holds it with
   * {@code deliveryCount}, and raises the committed offset (and the cursor with it) to the lowest
   * other pending offset or the cursor.
   */
  @Override
  public long acknowledgePending(
      String queue,
      String groupId,
      String consumerId,
      long offset,
      int deliveryCount,
      Instant now) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    Objects.requireNonNull(consumerId, "consumerId");
    Objects.requireNonNull(now, "now");
    return db.queryAfterRowLock(
        queue,
        groupId,
        groupRowLock(),
        lockedGroup(", g.cur, g.committed")
            + ","
            + " d AS (DELETE FROM "
            + s
            + ".pending p USING g WHERE p.queue_id = g.queue_id"
            + " AND p.group_id = g.group_id AND p.off = ? AND p.consumer_id = ?"
            + " AND p.delivery_count = ? RETURNING p.off),"
            + " t AS (SELECT g.queue_id, g.group_id, g.committed, GREATEST(g.committed,"
            + " COALESCE((SELECT min(p.off) FROM "
            + s
            + ".pending p WHERE p.queue_id = g.queue_id AND p.group_id = g.group_id"
            + " AND p.off <> ?), g.cur)) AS target FROM g WHERE EXISTS (SELECT 1 FROM d)),"
            + " u AS (UPDATE "
            + s
            + ".groups x SET committed = t.target, cur = GREATEST(x.cur, t.target),"
            + " updated_s = ?, updated_n = ? FROM t WHERE x.queue_id = t.queue_id"
            + " AND x.group_id = t.group_id AND t.target > t.committed RETURNING 1)"
            + " SELECT (SELECT count(*) FROM g), (SELECT count(*) FROM d),"
            + " (SELECT target FROM t), (SELECT count(*) FROM u)",
        p -> {
          p.setString(1, queue).setString(2, groupId);
          p.setLong(3, offset).setString(4, consumerId).setInt(5, deliveryCount);
          p.setLong(6, offset);
          p.setInstant(7, now);
        },
        rs -> {
          rs.next();
          if (rs.getLong(1) == 0) {
            throw new GroupNotFoundException(queue, groupId);
          }
          if (rs.getLong(2) == 0) {
            throw new PendingEntryNotFoundException(queue, groupId, consumerId, offset);
          }
          return rs.getLong(3);
        });
  }

  /**
   * One statement for the whole batch, fenced as {@link #acknowledgePending} is: locks the group
   * row, deletes each listed entry only if {@code consumerId} holds it with the listed delivery
   * count, and raises the committed offset once (the cursor with it) to the lowest entry still
   * pending, or the cursor when none is — as the memory and file stores' {@code GroupTable} does.
   */
  @Override
  public long acknowledgeAllPending(
      String queue,
      String groupId,
      String consumerId,
      long[] offsets,
      int[] deliveryCounts,
      boolean[] removed,
      Instant now) {
    StoreChecks.checkAcknowledgeAll(
        queue, groupId, consumerId, offsets, deliveryCounts, removed, now);
    int n = offsets.length;
    Long[] off = new Long[n];
    Integer[] count = new Integer[n];
    for (int i = 0; i < n; i++) {
      off[i] = offsets[i];
      count[i] = deliveryCounts[i];
    }
    return db.queryAfterRowLock(
        queue,
        groupId,
        groupRowLock(),
        lockedGroup(", g.cur, g.committed")
            + ","
            + " d AS (DELETE FROM "
            + s
            + ".pending p USING g, (SELECT DISTINCT * FROM unnest(?::bigint[], ?::int[])) AS w(off,"
            + " cnt) WHERE p.queue_id = g.queue_id AND p.group_id = g.group_id AND p.off = w.off"
            + " AND p.consumer_id = ? AND p.delivery_count = w.cnt RETURNING p.off,"
            + " p.delivery_count),"
            + " t AS (SELECT g.queue_id, g.group_id, g.committed, GREATEST(g.committed,"
            + " COALESCE((SELECT p.off FROM "
            + s
            + ".pending p WHERE p.queue_id = g.queue_id AND p.group_id = g.group_id"
            + " AND NOT EXISTS (SELECT 1 FROM d WHERE d.off = p.off) ORDER BY p.off LIMIT 1),"
            + " g.cur)) AS target FROM g WHERE EXISTS (SELECT 1 FROM d)),"
            + " u AS (UPDATE "
            + s
            + ".groups x SET committed = t.target, cur = GREATEST(x.cur, t.target),"
            + " updated_s = ?, updated_n = ? FROM t WHERE x.queue_id = t.queue_id"
            + " AND x.group_id = t.group_id AND t.target > t.committed RETURNING 1)"
            + " SELECT (SELECT count(*) FROM g), COALESCE((SELECT target FROM t),"
            + " (SELECT committed FROM g)), d.off, d.delivery_count"
            + " FROM (SELECT 1) AS one LEFT JOIN d ON true",
        p -> {
          checkGroupName(queue, groupId);
          p.setString(1, queue).setString(2, groupId);
          p.setArray(3, "bigint", off).setArray(4, "int4", count);
          p.setString(5, consumerId);
          p.setInstant(6, now);
        },
        rs -> {
          rs.next();
          if (rs.getLong(1) == 0) {
            throw new GroupNotFoundException(queue, groupId);
          }
          long committed = rs.getLong(2);
          Map<Long, Integer> gone = new HashMap<>(); // offset -> delivery count it was removed at
          do {
            long o = rs.getLong(3);
            if (!rs.wasNull()) {
              gone.put(o, rs.getInt(4));
            }
          } while (rs.next());
          for (int i = 0; i < n; i++) {
            // the first listing of a removed entry with its count is the one that removed it
            Integer c = gone.get(offsets[i]);
            removed[i] = c != null && c == deliveryCounts[i];
            if (removed[i]) {
              gone.remove(offsets[i]);
            }
          }
          return committed;
        });
  }

  /**
   * False: the engine runs this store's claims and acks in the group's section. {@link #claimDue}
   * and the one-statement acks are each atomic by themselves (row locks), so an engine may run them
   * outside it; on a two-core machine that path measured slower at every member count (each message
   * costs one more row write: read ahead, claim, delete), so it is not the default.
   */
  @Override
  public boolean concurrentClaims() {
    return false;
  }

  /**
   * One statement on the index {@code pending_due}, the group's row not locked: selects the
   * claimable entries earliest first with {@code FOR UPDATE SKIP LOCKED} (entries another call is
   * claiming, acking or changing are passed over, not waited for), moves them to the claimer and
   * returns them as they were. Committed without waiting for the WAL flush ({@link Db#queryLazy}),
   * as every claim is ({@link #atomicallyLazy}): a claim a crash loses is a redelivery.
   */
  @Override
  public List<PendingEntry> claimDue(
      String queue,
      String groupId,
      String consumerId,
      Instant now,
      Duration visibility,
      int limit) {
    StoreChecks.checkClaimDue(queue, groupId, consumerId, now, visibility, limit);
    Instant visibleAt = now.plus(visibility);
    return db.queryLazy(
        queue,
        group("")
            + ", c AS (SELECT p.queue_id AS qid, p.group_id AS gid, "
            + PENDING_COLUMNS
            + " FROM "
            + s
            + ".pending p, g WHERE p.queue_id = g.queue_id AND p.group_id = g.group_id"
            + " AND (p.visible_s, p.visible_n) <= (?, ?) ORDER BY p.visible_s, p.visible_n, p.off"
            + " LIMIT ? FOR UPDATE OF p SKIP LOCKED),"
            + " u AS (UPDATE "
            + s
            + ".pending p SET consumer_id = ?, claimed_s = ?, claimed_n = ?,"
            + " delivery_count = p.delivery_count + 1,"
            + " first_s = CASE WHEN p.consumer_id = '' THEN ? ELSE p.first_s END,"
            + " first_n = CASE WHEN p.consumer_id = '' THEN ? ELSE p.first_n END,"
            + " visible_s = ?, visible_n = ? FROM c WHERE p.queue_id = c.qid"
            + " AND p.group_id = c.gid AND p.off = c.off RETURNING 1)"
            + " SELECT (SELECT count(*) FROM g), "
            + prefixed("c.", PENDING_COLUMNS)
            + " FROM (SELECT 1) AS one LEFT JOIN c ON true"
            + " ORDER BY c.visible_s, c.visible_n, c.off",
        p -> {
          checkGroupName(queue, groupId);
          p.setString(1, queue).setString(2, groupId);
          p.setInstant(3, now);
          p.setInt(5, limit);
          p.setString(6, consumerId);
          p.setInstant(7, now);
          p.setLong(9, now.getEpochSecond());
          p.setInt(10, now.getNano());
          p.setInstant(11, visibleAt);
        },
        rs -> {
          rs.next();
          if (rs.getLong(1) == 0) {
            throw new GroupNotFoundException(queue, groupId);
          }
          return joinedEntries(rs, 2, 2);
        });
  }

  /** {@code columns}, a comma-separated list, each prefixed with {@code prefix}. */
  private static String prefixed(String prefix, String columns) {
    return prefix + columns.replace(", ", ", " + prefix);
  }

  /**
   * The opening of a statement on a group that does not lock it: the CTE {@code g}, the group's key
   * with {@code columns}; its two parameters are the queue name and the group id. An unknown queue
   * or group leaves {@code g} empty.
   */
  private String group(String columns) {
    return "WITH g AS (SELECT g.queue_id, g.group_id"
        + columns
        + " FROM "
        + s
        + ".groups g JOIN "
        + s
        + ".queues q ON q.id = g.queue_id WHERE q.name = ? AND g.group_id = ?)";
  }

  @Override
  public List<PendingEntry> getPending(String queue, String groupId, String consumerId) {
    Objects.requireNonNull(consumerId, "consumerId");
    return groupPending(
        queue,
        groupId,
        " AND consumer_id = ?",
        "off",
        "",
        p -> {
          p.setString(1, consumerId);
          return 2;
        });
  }

  @Override
  public List<PendingEntry> getAllPending(String queue, String groupId) {
    return groupPending(queue, groupId, "", "off", "", p -> 1);
  }

  @Override
  public void updateCursor(String queue, String groupId, long cursor, Instant now) {
    Objects.requireNonNull(now, "now");
    db.write(queue, c -> setCursor(c, queue, groupId, cursor, now, false));
  }

  @Override
  public void setPaused(String queue, String groupId, boolean paused, Instant now) {
    Objects.requireNonNull(now, "now");
    db.write(
        queue,
        c -> {
          long qid = groupQueueId(c, queue, groupId, true);
          try (PreparedStatement ps =
              c.prepareStatement(
                  "UPDATE "
                      + s
                      + ".groups SET paused = ?, updated_s = ?, updated_n = ?"
                      + " WHERE queue_id = ? AND group_id = ?")) {
            ps.setBoolean(1, paused);
            Db.setInstant(ps, 2, now);
            ps.setLong(4, qid);
            ps.setString(5, groupId);
            ps.executeUpdate();
          }
          return null;
        });
  }

  @Override
  public void updateCommitted(String queue, String groupId, long committed, Instant now) {
    Objects.requireNonNull(now, "now");
    db.write(queue, c -> setCursor(c, queue, groupId, committed, now, true));
  }

  /**
   * Sets the cursor ({@code committedToo} false) or the committed offset, raising the cursor when
   * it is beyond it ({@code committedToo} true); {@code updatedAt = now}. Returns the queue id.
   */
  private long setCursor(
      Connection c, String queue, String groupId, long value, Instant now, boolean committed)
      throws SQLException {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    String set = committed ? "committed = ?, cur = GREATEST(g.cur, ?::bigint)" : "cur = ?";
    try (PreparedStatement ps =
        c.prepareStatement(
            "UPDATE "
                + s
                + ".groups g SET "
                + set
                + ", updated_s = ?, updated_n = ? FROM "
                + s
                + ".queues q WHERE q.id = g.queue_id AND q.name = ? AND g.group_id = ?"
                + " RETURNING g.queue_id")) {
      int i = 1;
      ps.setLong(i++, value);
      if (committed) {
        ps.setLong(i++, value);
      }
      i = Db.setInstant(ps, i, now);
      ps.setString(i++, queue);
      ps.setString(i, groupId);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new GroupNotFoundException(queue, groupId);
        }
        return rs.getLong(1);
      }
    }
  }

  @Override
  public void registerConsumer(String queue, String groupId, ConsumerInfo consumer) {
    Objects.requireNonNull(consumer, "consumer");
    changeWith(
        queue,
        groupId,
        "INSERT INTO "
            + s
            + ".consumers (queue_id, group_id, consumer_id, client_id, registered_s,"
            + " registered_n, heartbeat_s, heartbeat_n) SELECT g.queue_id, g.group_id, ?, ?, ?, ?,"
            + " ?, ? FROM g ON CONFLICT (queue_id, group_id, consumer_id) DO UPDATE SET"
            + " client_id = EXCLUDED.client_id, registered_s = EXCLUDED.registered_s,"
            + " registered_n = EXCLUDED.registered_n, heartbeat_s = EXCLUDED.heartbeat_s,"
            + " heartbeat_n = EXCLUDED.heartbeat_n RETURNING 1",
        consumer.lastHeartbeat(),
        p -> {
          p.setString(3, consumer.id()).setString(4, consumer.clientId());
          p.setInstant(5, consumer.registeredAt());
          p.setInstant(7, consumer.lastHeartbeat());
          return 9;
        },
        rs -> null);
  }

  /** Removes the member and keeps its pending entries for others to steal. */
  @Override
  public void unregisterConsumer(String queue, String groupId, String consumerId) {
    Objects.requireNonNull(consumerId, "consumerId");
    changeGroup(
        queue,
        groupId,
        (c, qid) -> {
          Db.update(
              c,
              "DELETE FROM "
                  + s
                  + ".consumers WHERE queue_id = ? AND group_id = ? AND consumer_id = ?",
              ps -> {
                ps.setLong(1, qid);
                ps.setString(2, groupId);
                ps.setString(3, consumerId);
              });
        });
  }

  @Override
  public List<ConsumerInfo> listConsumers(String queue, String groupId) {
    return db.read(
        queue,
        c -> {
          long qid = groupQueueId(c, queue, groupId, false);
          return List.copyOf(consumers(c, qid, groupId).getOrDefault(groupId, Map.of()).values());
        });
  }

  @Override
  public String toString() {
    return description;
  }

  // ---- helpers -------------------------------------------------------------------------------

  /**
   * For a binder of {@link Db#query} (which checks the store and the queue name first): an id no
   * group can have (BEHAVIOUR S-NAMES) is not found, without a query; see {@link Db}.
   */
  private static void checkGroupName(String queue, String groupId) {
    if (!Names.isValid(groupId)) {
      throw new GroupNotFoundException(queue, groupId);
    }
  }

  /** Binds the parameters of a condition from index 1; returns the next index. */
  @FunctionalInterface
  private interface Condition {
    int bind(Db.Params p) throws SQLException;
  }

  /**
   * One statement: the group's pending entries meeting {@code where} (parameters bound by {@code
   * condition}), in {@code order} (a column list of {@link #readColumns}, optionally with a {@code
   * LIMIT ?} bound by {@code condition} too); {@link GroupNotFoundException} when the group (or its
   * queue) does not exist.
   */
  private List<PendingEntry> groupPending(
      String queue, String groupId, String where, String order, String limit, Condition condition) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    return db.query(
        queue,
        Db.Mode.READ,
        "SELECT p.* FROM "
            + s
            + ".queues q JOIN "
            + s
            + ".groups g ON g.queue_id = q.id LEFT JOIN LATERAL (SELECT "
            + readColumns
            + " FROM "
            + s
            + ".pending WHERE queue_id = g.queue_id AND group_id = g.group_id"
            + where
            + " ORDER BY "
            + order
            + limit
            + ") p ON true WHERE q.name = ? AND g.group_id = ? ORDER BY "
            + order
                .replace("visible_s", "p.visible_s")
                .replace("visible_n", "p.visible_n")
                .replace("off", "p.off"),
        p -> {
          checkGroupName(queue, groupId);
          int i = condition.bind(p);
          p.setString(i, queue).setString(i + 1, groupId);
        },
        rs -> {
          if (!rs.next()) {
            throw new GroupNotFoundException(queue, groupId);
          }
          return joinedEntries(rs, 1, 1);
        });
  }

  /**
   * One statement changing the group: locks its row ({@code g}), runs {@code change} (a
   * data-modifying statement over {@code g}, named {@code c}; its parameters, from index 3 on,
   * bound by {@code condition}) and, when {@code c} returned a row, sets {@code updatedAt} to
   * {@code touchAt}. {@code rows} reads the one row {@code (count of g, c's columns...)}, with
   * {@code c}'s columns null when it returned none; {@link GroupNotFoundException} when the group
   * (or its queue) does not exist.
   */
  private <T> T changeWith(
      String queue,
      String groupId,
      String change,
      Instant touchAt,
      Condition condition,
      Db.Rows<T> rows) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    return db.query(
        queue,
        Db.Mode.WRITE,
        lockedGroup("")
            + ", c AS ("
            + change
            + "), t AS (UPDATE "
            + s
            + ".groups x SET updated_s = ?, updated_n = ? FROM g WHERE x.queue_id = g.queue_id"
            + " AND x.group_id = g.group_id AND EXISTS (SELECT 1 FROM c) RETURNING 1)"
            + " SELECT (SELECT count(*) FROM g), c.* FROM (SELECT 1) AS one LEFT JOIN c ON true",
        p -> {
          checkGroupName(queue, groupId);
          p.setString(1, queue).setString(2, groupId);
          int i = condition.bind(p);
          p.setInstant(i, touchAt);
        },
        rs -> {
          rs.next();
          if (rs.getLong(1) == 0) {
            throw new GroupNotFoundException(queue, groupId);
          }
          return rows.read(rs);
        });
  }

  @FunctionalInterface
  private interface GroupWork {
    void run(Connection c, long queueId) throws SQLException;
  }

  /**
   * One transaction (or the bound one) that first locks the group's row ({@link
   * GroupNotFoundException} when absent), then runs {@code work} with the queue's row id.
   */
  private void changeGroup(String queue, String groupId, GroupWork work) {
    db.write(
        queue,
        c -> {
          work.run(c, groupQueueId(c, queue, groupId, true));
          return null;
        });
  }

  /** The queue's row id; {@link QueueNotFoundException} if absent. */
  private long queueId(Connection c, String queue, boolean keyShare) throws SQLException {
    Long id = queueIdOrNull(c, queue, keyShare);
    if (id == null) {
      throw new QueueNotFoundException(queue);
    }
    return id;
  }

  private Long queueIdOrNull(Connection c, String queue, boolean keyShare) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT id FROM "
                + s
                + ".queues WHERE name = ?"
                + (keyShare ? " FOR KEY SHARE" : ""))) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : null;
      }
    }
  }

  /**
   * The queue id of an existing group, locking the group row when {@code lock}; {@link
   * GroupNotFoundException} when the group (or its queue) does not exist.
   */
  private long groupQueueId(Connection c, String queue, String groupId, boolean lock)
      throws SQLException {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    if (!Names.isValid(groupId)) { // no such group can exist (BEHAVIOUR S-NAMES); see Db
      throw new GroupNotFoundException(queue, groupId);
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT g.queue_id FROM "
                + s
                + ".groups g JOIN "
                + s
                + ".queues q ON q.id = g.queue_id WHERE q.name = ? AND g.group_id = ?"
                + (lock ? " FOR UPDATE OF g" : ""))) {
      ps.setString(1, queue);
      ps.setString(2, groupId);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new GroupNotFoundException(queue, groupId);
        }
        return rs.getLong(1);
      }
    }
  }

  private void touch(Connection c, long qid, String groupId, Instant at) throws SQLException {
    Db.update(
        c,
        "UPDATE "
            + s
            + ".groups SET updated_s = ?, updated_n = ? WHERE queue_id = ? AND group_id = ?",
        ps -> {
          Db.setInstant(ps, 1, at);
          ps.setLong(3, qid);
          ps.setString(4, groupId);
        });
  }

  private void deleteRows(Connection c, String table, long qid, String groupId)
      throws SQLException {
    Db.update(
        c,
        "DELETE FROM " + s + "." + table + " WHERE queue_id = ? AND group_id = ?",
        ps -> {
          ps.setLong(1, qid);
          ps.setString(2, groupId);
        });
  }

  private void bindGroup(PreparedStatement ps, long qid, ConsumerGroupState g) throws SQLException {
    ps.setLong(1, qid);
    ps.setString(2, g.id());
    ps.setString(3, g.pattern());
    ps.setString(4, g.mode().name());
    ps.setBoolean(5, g.autoCommit());
    ps.setLong(6, g.cursor());
    ps.setLong(7, g.committed());
    Db.setInstant(ps, 8, g.createdAt());
    Db.setInstant(ps, 10, g.updatedAt());
    ps.setBoolean(12, g.paused());
  }

  private void upsertPending(Connection c, long qid, String groupId, List<PendingEntry> entries)
      throws SQLException {
    if (entries.isEmpty()) {
      return;
    }
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO "
                + s
                + ".pending (queue_id, group_id, "
                + PENDING_COLUMNS
                + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                + " ON CONFLICT (queue_id, group_id, off) DO UPDATE SET"
                + " consumer_id = EXCLUDED.consumer_id, claimed_s = EXCLUDED.claimed_s,"
                + " claimed_n = EXCLUDED.claimed_n, delivery_count = EXCLUDED.delivery_count,"
                + " first_s = EXCLUDED.first_s, first_n = EXCLUDED.first_n,"
                + " visible_s = EXCLUDED.visible_s, visible_n = EXCLUDED.visible_n,"
                + " order_key = EXCLUDED.order_key")) {
      for (PendingEntry e : entries) {
        ps.setLong(1, qid);
        ps.setString(2, groupId);
        ps.setLong(3, e.offset());
        ps.setString(4, e.consumerId());
        Db.setInstant(ps, 5, e.claimedAt());
        ps.setInt(7, e.deliveryCount());
        Db.setInstant(ps, 8, e.firstClaimedAt());
        Db.setInstant(ps, 10, e.visibleAt());
        ps.setString(12, e.orderKey());
        if (entries.size() == 1) {
          ps.executeUpdate();
        } else {
          ps.addBatch();
        }
      }
      if (entries.size() > 1) {
        ps.executeBatch();
      }
    }
  }

  private void insertConsumers(
      Connection c, long qid, String groupId, Iterable<ConsumerInfo> members) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO "
                + s
                + ".consumers (queue_id, group_id, consumer_id, client_id, registered_s,"
                + " registered_n, heartbeat_s, heartbeat_n) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) {
      boolean any = false;
      for (ConsumerInfo m : members) {
        bindConsumer(ps, qid, groupId, m);
        ps.addBatch();
        any = true;
      }
      if (any) {
        ps.executeBatch();
      }
    }
  }

  private static void bindConsumer(PreparedStatement ps, long qid, String groupId, ConsumerInfo m)
      throws SQLException {
    ps.setLong(1, qid);
    ps.setString(2, groupId);
    ps.setString(3, m.id());
    ps.setString(4, m.clientId());
    Db.setInstant(ps, 5, m.registeredAt());
    Db.setInstant(ps, 7, m.lastHeartbeat());
  }

  /** The entry in the columns from {@code i} on, as {@link #readColumns} lists them. */
  /**
   * The entries of a result that joins the group's row to its matching entries (a group without any
   * still gives one row): from the current row on, every row whose column {@code probe} is not null
   * holds an entry from column {@code first} on.
   */
  private static List<PendingEntry> joinedEntries(ResultSet rs, int probe, int first)
      throws SQLException {
    List<PendingEntry> out = new ArrayList<>();
    do {
      rs.getLong(probe);
      if (!rs.wasNull()) {
        out.add(pendingEntry(rs, first));
      }
    } while (rs.next());
    return out;
  }

  private static PendingEntry pendingEntry(ResultSet rs, int i) throws SQLException {
    return new PendingEntry(
        rs.getLong(i),
        rs.getString(i + 1),
        Db.getInstant(rs, i + 2),
        rs.getInt(i + 4),
        Db.getInstant(rs, i + 5),
        Db.getInstant(rs, i + 7),
        rs.getString(i + 9));
  }

  /** Members by group id (of one group when {@code groupId} is non-null). */
  private Map<String, Map<String, ConsumerInfo>> consumers(Connection c, long qid, String groupId)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT group_id, consumer_id, client_id, registered_s, registered_n, heartbeat_s,"
                + " heartbeat_n FROM "
                + s
                + ".consumers WHERE queue_id = ?"
                + (groupId == null ? "" : " AND group_id = ?"))) {
      ps.setLong(1, qid);
      if (groupId != null) {
        ps.setString(2, groupId);
      }
      try (ResultSet rs = ps.executeQuery()) {
        Map<String, Map<String, ConsumerInfo>> out = new HashMap<>();
        while (rs.next()) {
          ConsumerInfo m =
              new ConsumerInfo(
                  rs.getString(2), rs.getString(3), Db.getInstant(rs, 4), Db.getInstant(rs, 6));
          out.computeIfAbsent(rs.getString(1), k -> new HashMap<>()).put(m.id(), m);
        }
        return out;
      }
    }
  }

  /** Full states of the queue's groups (one group when {@code groupId} is non-null). */
  private List<ConsumerGroupState> load(Connection c, String queue, long qid, String groupId)
      throws SQLException {
    return load(c, queue, qid, groupId, true);
  }

  /** The groups (one when {@code groupId} is non-null); without pending rows unless asked. */
  private List<ConsumerGroupState> load(
      Connection c, String queue, long qid, String groupId, boolean pendingRows)
      throws SQLException {
    String only = groupId == null ? "" : " AND group_id = ?";
    Map<String, Object[]> rows = new LinkedHashMap<>();
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT "
                + GROUP_COLUMNS
                + ", "
                + pausedColumn
                + " FROM "
                + s
                + ".groups g WHERE queue_id = ?"
                + only)) {
      ps.setLong(1, qid);
      if (groupId != null) {
        ps.setString(2, groupId);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.put(
              rs.getString(1),
              new Object[] {
                rs.getString(2),
                GroupMode.valueOf(rs.getString(3)),
                rs.getBoolean(4),
                rs.getLong(5),
                rs.getLong(6),
                Db.getInstant(rs, 7),
                Db.getInstant(rs, 9),
                rs.getBoolean(11)
              });
        }
      }
    }
    if (rows.isEmpty()) {
      return List.of();
    }
    Map<String, List<PendingEntry>> pending = new HashMap<>();
    if (pendingRows) {
      readPending(c, qid, groupId, only, pending);
    }
    Map<String, Map<String, ConsumerInfo>> members = consumers(c, qid, groupId);
    List<ConsumerGroupState> out = new ArrayList<>(rows.size());
    for (Map.Entry<String, Object[]> e : rows.entrySet()) {
      Object[] r = e.getValue();
      out.add(
          new ConsumerGroupState(
              queue,
              e.getKey(),
              (String) r[0],
              (GroupMode) r[1],
              (Boolean) r[2],
              (Long) r[3],
              (Long) r[4],
              pending.getOrDefault(e.getKey(), List.of()),
              members.getOrDefault(e.getKey(), Map.of()),
              (Instant) r[5],
              (Instant) r[6],
              (Boolean) r[7]));
    }
    return List.copyOf(out);
  }

  private void readPending(
      Connection c, long qid, String groupId, String only, Map<String, List<PendingEntry>> pending)
      throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT group_id, "
                + readColumns
                + " FROM "
                + s
                + ".pending WHERE queue_id = ?"
                + only
                + " ORDER BY group_id, off")) {
      ps.setLong(1, qid);
      if (groupId != null) {
        ps.setString(2, groupId);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          pending.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(pendingEntry(rs, 2));
        }
      }
    }
  }
}
