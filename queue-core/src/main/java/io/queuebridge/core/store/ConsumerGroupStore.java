package io.queuebridge.core.store;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.errors.ConsumerGroupExistsException;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.PendingEntryNotFoundException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.store.support.StoreChecks;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Persistent consumer-group state: cursors, committed offsets, pending entry lists (PEL) and
 * memberships.
 *
 * <p><b>Shape.</b> Five primitives ({@link #createGroup}, {@link #findGroup}, {@link #updateGroup},
 * {@link #deleteGroup}, {@link #listGroups}) and conveniences built on them as {@code default}
 * methods. A store may override a convenience to do it in one step (a database row update, a log
 * record); it must keep the documented behaviour.
 *
 * <p><b>Threads.</b> Implementations are thread-safe for concurrent calls. The default methods
 * read, change and write back a whole group, so two of them racing on <em>one</em> group can lose
 * an update: callers serialise mutations of a group (the consumer manager holds one lock for all
 * group operations). A store shared by several processes makes such a sequence atomic across all of
 * them through {@link #atomically}.
 *
 * <p><b>Durability.</b> A persistent store makes every change survive a process kill when the call
 * returns; whether it also survives a machine crash is the store's documented choice. A change lost
 * in a crash may only cause a redelivery (at-least-once), never a lost message: a cursor or
 * committed offset may roll back, a pending entry may reappear.
 *
 * <p><b>Values.</b> States are immutable snapshots; instants are as given by the caller's clock.
 */
public interface ConsumerGroupStore {

  /**
   * Runs {@code body}, a read-decide-write sequence on one group, atomically with respect to every
   * other {@code atomically} call on the same {@code (queue, groupId)} — in this process and, for a
   * store shared by several processes (a database), in all of them — and returns its result.
   *
   * <p>The body runs exactly once, on the calling thread. If it throws, the exception propagates
   * unchanged; a transactional store then discards the body's changes, others keep whatever the
   * body did before throwing. The default just calls {@code body.get()}: stores used by one process
   * rely on the caller's own lock (the consumer manager's). A shared store runs the body in one
   * transaction holding a per-group lock, and the store calls the body makes on the calling thread
   * join that transaction; its changes become visible (and, for a persistent store, durable as the
   * other methods are) when {@code atomically} returns.
   *
   * <p>Blocks while another holder of the same group's lock runs. Nested calls for another group
   * take that group's lock too; callers should not nest them (two processes nesting in opposite
   * orders can deadlock, which a database reports as a failure).
   *
   * @throws NullPointerException if an argument is null
   * @throws io.queuebridge.core.errors.QueueStoreException if the store fails to lock or commit
   *     (the body's changes are then not applied by a transactional store)
   */
  default <T> T atomically(String queue, String groupId, Supplier<T> body) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    Objects.requireNonNull(body, "body");
    return body.get();
  }

  /**
   * {@link #atomically}, for a body whose changes may be lost in a crash without harm because they
   * all roll back together and only move work forward that is redone after the crash: the engine's
   * claims in queue mode (the cursor, the entries recorded and moved to the claimer, its
   * membership) and its read ahead. A lost claim is a redelivery: the message was handed out but
   * not acknowledged, and at-least-once delivery already allows that. The engine settles in such a
   * section too, and calls {@link #awaitDurable} before it tells the caller that the settlement is
   * done: a settlement lost before then is one its caller never saw. A database may commit such a
   * body without waiting for its log to reach the disk; everything a later durable change depends
   * on (an ack of a claimed message) is on disk when that change is, since the log is written in
   * order. A body that appends to a queue (a dead letter) must be committed durably after all: a
   * reader may hand the message on as soon as it sees it. Visibility to other callers is as {@code
   * atomically}'s. The default is {@code atomically}.
   */
  default <T> T atomicallyLazy(String queue, String groupId, Supplier<T> body) {
    return atomically(queue, groupId, body);
  }

  /**
   * {@link #atomicallyLazy} for a body that makes exactly one store call, {@link
   * #acknowledgePending} or {@link #acknowledgeAllPending}: the engine's ack of deliveries without
   * an ordering key that one member holds. A database may send the group's lock, the call's
   * statement and the commit in one round trip, so that the group's section lasts only as long as
   * the statement runs. The body must make no other store call (a store may refuse one with an
   * {@link IllegalStateException}). The default is {@code atomicallyLazy}.
   */
  default <T> T atomicallyLazyAck(String queue, String groupId, Supplier<T> body) {
    return atomicallyLazy(queue, groupId, body);
  }

  /**
   * Waits until every change that a section ({@link #atomicallyLazy}) of any instance of this store
   * committed before this call began is as durable as {@link #atomically} makes its changes, and
   * returns whether it had anything to wait for. The engine settles in a lazy section and calls
   * this once it has released the group's lock and section: the next member's section then does not
   * wait for this one's write to the disk, and the waits of settlements made at the same time are
   * shared. Inside {@link #atomically} on the calling thread it does nothing (the outer section's
   * commit decides). The default does nothing and returns false: a store whose lazy sections are
   * durable when they end.
   *
   * @throws io.queuebridge.core.errors.QueueStoreException if the store fails; what those sections
   *     committed may then be lost in a crash, as after any failed commit
   */
  default boolean awaitDurable() {
    return false;
  }

  /**
   * Creates a group.
   *
   * @throws ConsumerGroupExistsException if it exists (callers treat this as a lost race and
   *     re-read)
   * @throws QueueNotFoundException if the queue does not exist
   */
  void createGroup(ConsumerGroupState group);

  /**
   * The group's current state, or empty if there is none.
   *
   * @throws QueueNotFoundException if the queue does not exist
   */
  Optional<ConsumerGroupState> findGroup(String queue, String groupId);

  /**
   * Replaces a group's full state.
   *
   * @throws GroupNotFoundException if the group does not exist
   */
  void updateGroup(ConsumerGroupState group);

  /** Deletes a group; idempotent (an unknown group or queue is not an error). */
  void deleteGroup(String queue, String groupId);

  /**
   * Every group of the queue, in no particular order; empty when none.
   *
   * @throws QueueNotFoundException if the queue does not exist
   */
  List<ConsumerGroupState> listGroups(String queue);

  /**
   * The group's current state.
   *
   * @throws GroupNotFoundException if the group does not exist
   */
  default ConsumerGroupState getGroup(String queue, String groupId) {
    return findGroup(queue, groupId).orElseThrow(() -> new GroupNotFoundException(queue, groupId));
  }

  /**
   * Adds a pending entry (replacing any entry at the same offset).
   *
   * @throws GroupNotFoundException if the group does not exist
   */
  default void addPending(String queue, String groupId, PendingEntry entry) {
    ConsumerGroupState g = getGroup(queue, groupId);
    List<PendingEntry> next = new ArrayList<>(g.pending().size() + 1);
    for (PendingEntry e : g.pending()) {
      if (e.offset() != entry.offset()) {
        next.add(e);
      }
    }
    next.add(entry);
    updateGroup(g.withPending(next, entry.claimedAt()));
  }

  /**
   * Removes the entry at {@code offset} held by {@code consumerId}.
   *
   * @throws PendingEntryNotFoundException unless that consumer holds that offset
   * @throws GroupNotFoundException if the group does not exist
   */
  default void removePending(String queue, String groupId, String consumerId, long offset) {
    ConsumerGroupState g = getGroup(queue, groupId);
    PendingEntry e =
        g.pendingAt(offset)
            .filter(p -> p.consumerId().equals(consumerId))
            .orElseThrow(
                () -> new PendingEntryNotFoundException(queue, groupId, consumerId, offset));
    updateGroup(g.mapPending(e.offset(), p -> null, g.updatedAt()));
  }

  /**
   * Replaces the entry at {@code entry.offset()} (same holder or not): renewals, nacks with a retry
   * time.
   *
   * @throws PendingEntryNotFoundException if no entry exists at that offset
   * @throws GroupNotFoundException if the group does not exist
   */
  default void updatePending(String queue, String groupId, PendingEntry entry) {
    ConsumerGroupState g = getGroup(queue, groupId);
    if (g.pendingAt(entry.offset()).isEmpty()) {
      throw new PendingEntryNotFoundException(queue, groupId, entry.consumerId(), entry.offset());
    }
    updateGroup(g.mapPending(entry.offset(), p -> entry, entry.claimedAt()));
  }

  /**
   * Moves the entry at {@code offset} from {@code from} to {@code to}: owner = to, claimedAt = now,
   * deliveryCount + 1, visible again at now + visibility.
   *
   * @return the moved entry
   * @throws PendingEntryNotFoundException unless {@code from} holds that offset
   * @throws GroupNotFoundException if the group does not exist
   */
  default PendingEntry transferPending(
      String queue,
      String groupId,
      long offset,
      String from,
      String to,
      Instant now,
      Duration visibility) {
    ConsumerGroupState g = getGroup(queue, groupId);
    PendingEntry e =
        g.pendingAt(offset)
            .filter(p -> p.consumerId().equals(from))
            .orElseThrow(() -> new PendingEntryNotFoundException(queue, groupId, from, offset));
    PendingEntry moved = e.transferredTo(to, now, visibility);
    updateGroup(g.mapPending(offset, p -> moved, now));
    return moved;
  }

  /**
   * The pending entry at {@code offset}, whoever holds it, or empty. A store may answer without
   * building the whole group (the engine's nack and reject read one entry).
   *
   * @throws GroupNotFoundException if the group does not exist
   */
  default Optional<PendingEntry> findPending(String queue, String groupId, long offset) {
    return getGroup(queue, groupId).pendingAt(offset);
  }

  /**
   * The group without its pending entries, with their count, the count of {@linkplain
   * PendingEntry#isScheduled() scheduled} ones and the highest pending offset: what a queue-mode
   * claim reads of a group before it claims from the cursor ({@link GroupOverview}). A store should
   * answer without building the pending entry list (the memory and file stores keep the counts; the
   * PostgreSQL store counts in the database), so a claim's cost does not grow with it. The default
   * builds the whole group and counts.
   *
   * @throws GroupNotFoundException if the group does not exist
   */
  default GroupOverview overview(String queue, String groupId) {
    return GroupOverview.of(getGroup(queue, groupId));
  }

  /**
   * {@link #overview(String, String)} and, when {@code fromCursor} is positive, what {@link
   * QueueStore#readBatch readBatch(queue, cursor, fromCursor)} of the same storage returns for the
   * group's cursor ({@link GroupOverview#fromCursor()}): a claim's first read, which a database can
   * answer in the overview's round trip. The default reads no messages (the claim then reads them
   * itself).
   *
   * @throws GroupNotFoundException if the group does not exist
   * @throws IllegalArgumentException if {@code fromCursor} is negative
   */
  default GroupOverview overview(String queue, String groupId, int fromCursor) {
    if (fromCursor < 0) {
      throw new IllegalArgumentException(
          "fromCursor must be >= 0 (0 reads no messages), got " + fromCursor);
    }
    return overview(queue, groupId);
  }

  /**
   * The pending entries claimable at {@code now} — {@code visibleAt} at or before it: redeliveries
   * whose visibility timeout or retry time passed, and {@linkplain PendingEntry#isScheduled()
   * scheduled} messages now due (BEHAVIOUR Q-DELAY) — in {@link PendingEntry#BY_VISIBILITY} order
   * (earliest first), starting after {@code after} in that order (from the first when {@code after}
   * is null), at most {@code limit}. A caller pages through them by passing the last entry of one
   * answer as the next call's {@code after}. The engine's work stealing calls it on every claim
   * that the cursor does not fill, so a store should answer from an index by {@code visibleAt}
   * without reading every entry (the memory and file stores keep one; the PostgreSQL store queries
   * one). The default reads the whole group, filters and sorts.
   *
   * @param limit at most this many entries; at least 1
   * @throws IllegalArgumentException if {@code limit < 1}
   * @throws GroupNotFoundException if the group does not exist
   */
  default List<PendingEntry> duePending(
      String queue, String groupId, Instant now, PendingEntry after, int limit) {
    StoreChecks.checkDuePending(queue, groupId, now, limit);
    List<PendingEntry> due = new ArrayList<>();
    for (PendingEntry e : getGroup(queue, groupId).pending()) {
      if (e.isVisible(now) && (after == null || PendingEntry.BY_VISIBILITY.compare(e, after) > 0)) {
        due.add(e);
      }
    }
    due.sort(PendingEntry.BY_VISIBILITY);
    return due.size() > limit ? List.copyOf(due.subList(0, limit)) : due;
  }

  /**
   * Whether {@link #claimDue}, {@link #acknowledgePending} and {@link #acknowledgeAllPending} are
   * each atomic by themselves against every other call on the group, from any thread and any
   * process sharing the store, so the engine runs a queue-mode group's claims from the PEL and its
   * acks outside {@link #atomically}: members of one group then claim and settle in parallel, and
   * only reading from the cursor (and the rarer changes: nacks, rejects, dead letters, renewals,
   * membership, resets) takes the group's section. False by default: the engine then runs every
   * claim and settlement in the section, and the default methods rely on it.
   */
  default boolean concurrentClaims() {
    return false;
  }

  /**
   * Claims for {@code consumerId} up to {@code limit} pending entries claimable at {@code now} —
   * those {@link #duePending} would return: {@code visibleAt} at or before {@code now}, blocked
   * entries never — earliest first, and replaces each with {@link PendingEntry#claimedBy
   * entry.claimedBy(consumerId, now, visibility)} in the same atomic step: a scheduled entry
   * becomes a first delivery, a held one (its visibility passed) moves to the claimer. Returns the
   * claimed entries <em>as they were before</em> the claim, in claim order; the caller derives what
   * is stored now with {@code claimedBy}. Empty when nothing is claimable.
   *
   * <p>A store whose {@link #concurrentClaims()} is true makes concurrent calls on one group hand
   * each entry to exactly one caller: an entry another call is claiming is skipped, not waited for
   * (a database's {@code FOR UPDATE SKIP LOCKED}), so a call may return fewer than {@code limit}
   * while another claims. The default pages through {@link #duePending} and records the claims with
   * {@link #claimPending}; it relies on the caller's lock.
   *
   * @param limit at most this many entries; at least 1
   * @throws IllegalArgumentException if {@code limit < 1}, {@code consumerId} is empty or {@code
   *     visibility} is negative
   * @throws GroupNotFoundException if the group does not exist
   */
  default List<PendingEntry> claimDue(
      String queue,
      String groupId,
      String consumerId,
      Instant now,
      Duration visibility,
      int limit) {
    StoreChecks.checkClaimDue(queue, groupId, consumerId, now, visibility, limit);
    List<PendingEntry> due = duePending(queue, groupId, now, null, limit);
    if (due.isEmpty()) {
      return due;
    }
    List<PendingEntry> claimed = new ArrayList<>(due.size());
    for (PendingEntry e : due) {
      claimed.add(e.claimedBy(consumerId, now, visibility));
    }
    claimPending(queue, groupId, claimed, overview(queue, groupId).group().cursor(), now);
    return List.copyOf(due);
  }

  /**
   * The earliest {@code visibleAt} strictly after {@code after} among the pending entries of the
   * queue's queue-mode groups that are not {@linkplain PendingEntry#isBlocked() blocked}: when the
   * next redelivery, retry or scheduled message of the queue becomes claimable (the delivery engine
   * arms its wake-up timer for it, BEHAVIOUR Q-DEL); empty when no such entry exists. Stream-mode
   * groups are not looked at. The engine asks each time a wake-up fires, so a store should answer
   * from its index by {@code visibleAt} without reading every entry (the memory and file stores ask
   * each group's due index, the PostgreSQL store one query on its due index). The default reads
   * every group.
   *
   * @throws QueueNotFoundException if the queue does not exist
   */
  default Optional<Instant> nextVisible(String queue, Instant after) {
    Objects.requireNonNull(after, "after");
    Instant next = null;
    for (ConsumerGroupState g : listGroups(queue)) {
      if (g.mode() != GroupMode.QUEUE) {
        continue;
      }
      for (PendingEntry e : g.pending()) {
        Instant v = e.visibleAt();
        if (!e.isBlocked() && v.isAfter(after) && (next == null || v.isBefore(next))) {
          next = v;
        }
      }
    }
    return Optional.ofNullable(next);
  }

  /**
   * For each key among {@code keys} that some pending entry of the group carries as its {@linkplain
   * PendingEntry#orderKey() ordering key} (BEHAVIOUR Q-ORDER), the entry with the lowest offset of
   * those carrying it; a key no entry carries has no mapping. A claim from the cursor of an ordered
   * queue asks once per batch of messages it reads (a message whose key has an entry is blocked),
   * and a settlement once per batch it settles (a key's lowest entry, if blocked, is made visible).
   * A store should answer from an index by key without reading every entry (the memory and file
   * stores keep one; the PostgreSQL store queries one). The default reads the whole group.
   *
   * @param keys ordering keys, none empty (duplicates allowed); when there are none the answer is
   *     an empty map and the group is not looked up
   * @return a new mutable map the caller may change
   * @throws IllegalArgumentException if a key is empty
   * @throws GroupNotFoundException if the group does not exist
   */
  default Map<String, PendingEntry> firstPendingByKey(
      String queue, String groupId, Collection<String> keys) {
    StoreChecks.checkOrderKeys(queue, groupId, keys);
    Map<String, PendingEntry> found = new HashMap<>();
    if (keys.isEmpty()) {
      return found;
    }
    Set<String> wanted = Set.copyOf(keys);
    for (PendingEntry e : getGroup(queue, groupId).pending()) { // sorted by offset
      if (wanted.contains(e.orderKey())) {
        found.putIfAbsent(e.orderKey(), e);
      }
    }
    return found;
  }

  /**
   * Releases ordering keys (BEHAVIOUR Q-ORDER): for each key among {@code keys} whose lowest-offset
   * entry is {@linkplain PendingEntry#isBlocked() blocked}, replaces that entry with {@code
   * entry.withVisibleAt(at)}, as {@link #updatePending} would; every other key is left as it is.
   * The engine calls it once per settled batch, with the keys of the entries that left the group.
   * The default makes one {@link #firstPendingByKey} call and one {@link #updatePending} per
   * released entry; a store overriding it should return at once, without looking at any key, when
   * the group has no blocked entry (the memory and file stores count them).
   *
   * @param keys ordering keys, none empty (duplicates allowed); when there are none nothing is
   *     looked up
   * @param at when the released entries become visible
   * @return the entries released, as they are now stored; empty when no key's lowest entry was
   *     blocked
   * @throws IllegalArgumentException if a key is empty
   * @throws GroupNotFoundException if the group does not exist and {@code keys} is not empty
   */
  default List<PendingEntry> releaseBlocked(
      String queue, String groupId, Collection<String> keys, Instant at) {
    Objects.requireNonNull(at, "at");
    List<PendingEntry> released = new ArrayList<>();
    for (PendingEntry next : firstPendingByKey(queue, groupId, keys).values()) {
      if (next.isBlocked()) {
        PendingEntry visible = next.withVisibleAt(at);
        updatePending(queue, groupId, visible);
        released.add(visible);
      }
    }
    return released;
  }

  /**
   * Records a claim of several messages: adds {@code entries} (each replacing any entry at its
   * offset, as {@link #addPending}) and then sets the cursor to {@code cursor} (as {@link
   * #updateCursor} at {@code now}). The engine calls it once per claimed batch instead of one call
   * per message. The default makes exactly those calls, one after the other; a store overriding it
   * may apply them as one change (and should, for speed), with the same result.
   *
   * @param entries the new entries; may be empty (then only the cursor moves)
   * @throws GroupNotFoundException if the group does not exist
   */
  default void claimPending(
      String queue, String groupId, List<PendingEntry> entries, long cursor, Instant now) {
    for (PendingEntry e : entries) {
      addPending(queue, groupId, e);
    }
    updateCursor(queue, groupId, cursor, now);
  }

  /**
   * The acknowledgement step in one call: removes the entry at {@code offset} if {@code consumerId}
   * holds it with {@code deliveryCount} deliveries (a fence against settling an entry that was
   * stolen or redelivered since), then raises the committed offset to the lowest offset still
   * pending, or to the cursor when nothing is, at {@code now} (never lowers it; when it does not
   * move, {@code updatedAt} is left as {@link #removePending} leaves it). The engine uses it for
   * acks, rejects and every other removal. The default reads the group, then calls {@link
   * #removePending} and, when the committed offset moves, {@link #updateCommitted}; a store
   * overriding it may apply both as one change, with the same result.
   *
   * @return the committed offset after the call
   * @throws PendingEntryNotFoundException unless that consumer holds that offset with that count
   *     (nothing changes)
   * @throws GroupNotFoundException if the group does not exist
   */
  default long acknowledgePending(
      String queue,
      String groupId,
      String consumerId,
      long offset,
      int deliveryCount,
      Instant now) {
    ConsumerGroupState g = getGroup(queue, groupId);
    g.pendingAt(offset)
        .filter(e -> e.consumerId().equals(consumerId) && e.deliveryCount() == deliveryCount)
        .orElseThrow(() -> new PendingEntryNotFoundException(queue, groupId, consumerId, offset));
    removePending(queue, groupId, consumerId, offset);
    long target = committedAfterRemoving(g, offset);
    if (target > g.committed()) {
      updateCommitted(queue, groupId, target, now);
      return target;
    }
    return g.committed();
  }

  /**
   * {@link #acknowledgePending} for several entries {@code consumerId} holds in one group: for each
   * {@code i} in order, the entry at {@code offsets[i]} is removed if {@code consumerId} holds it
   * with {@code deliveryCounts[i]} deliveries, and {@code removed[i]} is set to whether it was; a
   * refused entry changes nothing and does not stop the others. The committed offset is then raised
   * as {@link #acknowledgePending} raises it, at {@code now}: to the lowest offset still pending,
   * or to the cursor when none is (never lowered). While every pending offset lies below the cursor
   * — always, as the engine uses a group: claims add entries below the cursor they advance, and an
   * offset reset drops the whole PEL — raising it once after the removals and raising it after
   * each, as that many {@link #acknowledgePending} calls would, end at the same offset; with
   * entries at or above the cursor (written through this SPI) the memory, file and PostgreSQL
   * stores raise it once, and the default after each. The engine's batch acknowledgement ({@code
   * GroupCoordinator.ackAll}) calls it once per holder. The default makes one {@link
   * #acknowledgePending} call per offset; a store overriding it may apply the batch as one change
   * (and should, for speed), with the same result.
   *
   * @param removed filled in by the call; same length as {@code offsets}
   * @return the committed offset after the call
   * @throws IllegalArgumentException if the three arrays differ in length (nothing changes)
   * @throws GroupNotFoundException if the group does not exist
   */
  default long acknowledgeAllPending(
      String queue,
      String groupId,
      String consumerId,
      long[] offsets,
      int[] deliveryCounts,
      boolean[] removed,
      Instant now) {
    StoreChecks.checkAcknowledgeAll(
        queue, groupId, consumerId, offsets, deliveryCounts, removed, now);
    long committed = -1;
    for (int i = 0; i < offsets.length; i++) {
      try {
        committed =
            acknowledgePending(queue, groupId, consumerId, offsets[i], deliveryCounts[i], now);
        removed[i] = true;
      } catch (PendingEntryNotFoundException refused) {
        removed[i] = false;
      }
    }
    return committed >= 0 ? committed : getGroup(queue, groupId).committed();
  }

  /**
   * Where the committed offset of {@code g} should be once the entry at {@code offset} is gone: the
   * lowest other pending offset, or the cursor when no other entry is pending. Never below the
   * current committed offset.
   */
  static long committedAfterRemoving(ConsumerGroupState g, long offset) {
    long target = g.cursor();
    for (PendingEntry p : g.pending()) {
      if (p.offset() != offset) {
        target = p.offset(); // pending is sorted: the lowest other offset
        break;
      }
    }
    return Math.max(target, g.committed());
  }

  /** The entries held by one consumer, by offset; empty when none. */
  default List<PendingEntry> getPending(String queue, String groupId, String consumerId) {
    return getGroup(queue, groupId).pendingOf(consumerId);
  }

  /** Every pending entry of the group, by offset; empty when none. */
  default List<PendingEntry> getAllPending(String queue, String groupId) {
    return getGroup(queue, groupId).pending();
  }

  /** Sets the cursor (next offset to read). @throws GroupNotFoundException if absent */
  default void updateCursor(String queue, String groupId, long cursor, Instant now) {
    updateGroup(getGroup(queue, groupId).withCursor(cursor, now));
  }

  /**
   * Sets the committed offset; a committed offset beyond the cursor raises the cursor too.
   *
   * @throws GroupNotFoundException if absent
   */
  default void updateCommitted(String queue, String groupId, long committed, Instant now) {
    ConsumerGroupState g = getGroup(queue, groupId).withCommitted(committed, now);
    if (committed > g.cursor()) {
      g = g.withCursor(committed, now);
    }
    updateGroup(g);
  }

  /**
   * Pauses ({@code paused}) or resumes the group's delivery: {@link ConsumerGroupState#paused()}
   * answers it from then on, for every caller of the store, and after the store is reopened. The
   * engine hands out nothing from a paused group; the store only keeps the flag. Setting the flag
   * the group already has still records {@code now} as its {@code updatedAt}.
   *
   * @throws GroupNotFoundException if the group does not exist
   */
  default void setPaused(String queue, String groupId, boolean paused, Instant now) {
    Objects.requireNonNull(now, "now");
    updateGroup(getGroup(queue, groupId).withPaused(paused, now));
  }

  /**
   * Adds or refreshes a member (re-registering refreshes its timestamps).
   *
   * @throws GroupNotFoundException if the group does not exist
   */
  default void registerConsumer(String queue, String groupId, ConsumerInfo consumer) {
    ConsumerGroupState g = getGroup(queue, groupId);
    Map<String, ConsumerInfo> next = new HashMap<>(g.consumers());
    next.put(consumer.id(), consumer);
    updateGroup(g.withConsumers(next, consumer.lastHeartbeat()));
  }

  /**
   * Removes a member but keeps its pending entries, so others can steal them after the visibility
   * timeout. Unknown members are ignored.
   *
   * @throws GroupNotFoundException if the group does not exist
   */
  default void unregisterConsumer(String queue, String groupId, String consumerId) {
    ConsumerGroupState g = getGroup(queue, groupId);
    if (!g.consumers().containsKey(consumerId)) {
      return;
    }
    Map<String, ConsumerInfo> next = new HashMap<>(g.consumers());
    next.remove(consumerId);
    updateGroup(g.withConsumers(next, g.updatedAt()));
  }

  /** The group's members; empty when none. @throws GroupNotFoundException if absent */
  default List<ConsumerInfo> listConsumers(String queue, String groupId) {
    return List.copyOf(getGroup(queue, groupId).consumers().values());
  }
}
