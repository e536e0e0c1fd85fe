package io.queuebridge.core.store.support;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.errors.PendingEntryNotFoundException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.GroupOverview;
import io.queuebridge.core.store.PendingEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Support for store implementers: one consumer group as mutable state, with the rules of {@link
 * ConsumerGroupStore}'s fine-grained operations, so that stores agree on what each one changes and
 * refuses. The memory store keeps its groups as tables, the file store keeps one behind each
 * group's log and replays the log into it. The fields of {@link ConsumerGroupState}, with the
 * pending entries sorted by offset in a structure where a claim, an ack or a transfer changes one
 * entry in O(log n) (O(1) amortised at either end) instead of copying the whole pending list.
 * {@link #snapshot()} builds the immutable state on the first read after a change and keeps it
 * until the next.
 *
 * <p>Every change is split in two: a <em>check</em> that reads the table, throws the documented
 * error if the change is refused and computes its effect ({@link #held}, {@link #checkPending},
 * {@link #transfer}, {@link #acknowledgement}), and an <em>apply</em> step that makes it ({@link
 * #putPending}, {@link #removePending}, {@link #claim}, {@link #apply(Ack)}, ...). A store that
 * must record the change first (a log) runs the check, writes, then applies; so a refused or failed
 * call changes nothing.
 *
 * <p>Not thread-safe: the owner guards each table with one lock around every read and change.
 */
public final class GroupTable {
  private final String queue;
  private final String id;
  private final PendingLog pending = new PendingLog();
  private String pattern;
  private GroupMode mode;
  private boolean autoCommit;
  private long cursor;
  private long committed;
  private Map<String, ConsumerInfo> consumers;
  private Instant createdAt;
  private Instant updatedAt;
  private boolean paused;
  private ConsumerGroupState snapshot;
  private ConsumerGroupState header;

  /** A table holding {@code state} (which is also its first snapshot). */
  public GroupTable(ConsumerGroupState state) {
    this.queue = state.queue();
    this.id = state.id();
    set(state);
  }

  /**
   * The effect of an acknowledgement: see {@link #acknowledgement}.
   *
   * @param offset the entry removed
   * @param committed the committed offset afterwards
   * @param cursor the cursor afterwards
   * @param updatedAt the group's {@code updatedAt} afterwards
   */
  public record Ack(long offset, long committed, long cursor, Instant updatedAt) {}

  /** The group's queue. */
  public String queue() {
    return queue;
  }

  /** The group's id. */
  public String id() {
    return id;
  }

  /** The next offset to deliver. */
  public long cursor() {
    return cursor;
  }

  /** When the group last changed (as the SPI's operations define it). */
  public Instant updatedAt() {
    return updatedAt;
  }

  /** Pending entries. */
  public int pendingCount() {
    return pending.size();
  }

  // ---------------------------------------------------------------- reads

  /** The current state as an immutable snapshot (cached until the next change). */
  public ConsumerGroupState snapshot() {
    ConsumerGroupState s = snapshot;
    if (s == null) {
      s = state(List.of(pending.toArray()));
      snapshot = s;
    }
    return s;
  }

  /** The state with {@code entries} as its pending entries. */
  private ConsumerGroupState state(List<PendingEntry> entries) {
    return new ConsumerGroupState(
        queue,
        id,
        pattern,
        mode,
        autoCommit,
        cursor,
        committed,
        entries,
        consumers,
        createdAt,
        updatedAt,
        paused);
  }

  /**
   * {@link ConsumerGroupStore#overview}: the state without its pending entries (cached until the
   * next change) and their counts, in O(1) whatever the number of entries.
   */
  public GroupOverview overview() {
    ConsumerGroupState h = header;
    if (h == null) {
      h = state(List.of());
      header = h;
    }
    return new GroupOverview(
        h,
        pending.size(),
        pending.scheduledCount(),
        pending.highestOffset(),
        pending.blockedCount());
  }

  /** The entry at {@code offset}, if any member holds it. */
  public Optional<PendingEntry> pendingAt(long offset) {
    return Optional.ofNullable(pending.get(offset));
  }

  /** The entries held by {@code consumerId}, by offset. */
  public List<PendingEntry> pendingOf(String consumerId) {
    List<PendingEntry> out = new ArrayList<>();
    for (PendingEntry e : pending.toArray()) {
      if (e.consumerId().equals(consumerId)) {
        out.add(e);
      }
    }
    return List.copyOf(out);
  }

  /**
   * {@link ConsumerGroupStore#duePending}: the entries claimable at {@code now} after {@code
   * after}, by {@link PendingEntry#BY_VISIBILITY}, at most {@code limit}; O(log n + limit).
   */
  public List<PendingEntry> duePending(Instant now, PendingEntry after, int limit) {
    return pending.due(now, after, limit);
  }

  /**
   * {@link ConsumerGroupStore#claimDue}: up to {@code limit} entries claimable at {@code now},
   * earliest first, each replaced by {@link PendingEntry#claimedBy} for {@code consumerId}; returns
   * them as they were before. The cursor is not moved.
   */
  public List<PendingEntry> claimDue(
      String consumerId, Instant now, Duration visibility, int limit) {
    List<PendingEntry> due = pending.due(now, null, limit);
    if (due.isEmpty()) {
      return List.of();
    }
    for (PendingEntry e : due) {
      pending.put(e.claimedBy(consumerId, now, visibility));
    }
    updatedAt = now;
    snapshot = null;
    header = null;
    return due;
  }

  /**
   * This group's part of {@link ConsumerGroupStore#nextVisible}: the earliest {@code visibleAt}
   * after {@code after} of an entry that is not blocked, from the due index (blocked entries are
   * not in it); null when there is none or the group is not in queue mode.
   */
  public Instant nextVisible(Instant after) {
    if (mode != GroupMode.QUEUE) {
      return null;
    }
    // after every entry visible at or before `after`, whatever its offset
    PendingEntry past = PendingEntry.scheduled(Long.MAX_VALUE, after, after);
    List<PendingEntry> next = pending.due(PendingEntry.NEVER, past, 1);
    return next.isEmpty() ? null : next.get(0).visibleAt();
  }

  /** {@link ConsumerGroupStore#firstPendingByKey}: O(1) per key. */
  public Map<String, PendingEntry> firstPendingByKey(Collection<String> keys) {
    Map<String, PendingEntry> found = new HashMap<>();
    for (String k : keys) {
      PendingEntry e = pending.firstWithKey(k);
      if (e != null) {
        found.put(k, e);
      }
    }
    return found;
  }

  /**
   * What {@link ConsumerGroupStore#releaseBlocked} changes, not applied: for each key whose lowest
   * entry is blocked, that entry made visible at {@code at}; at once empty when no entry is
   * blocked.
   */
  public List<PendingEntry> releasable(Collection<String> keys, Instant at) {
    if (pending.blockedCount() == 0) {
      return List.of();
    }
    List<PendingEntry> out = new ArrayList<>();
    Set<String> seen = keys.size() > 1 ? new HashSet<>() : null;
    for (String k : keys) {
      PendingEntry e = pending.firstWithKey(k);
      if (e != null && e.isBlocked() && (seen == null || seen.add(k))) {
        out.add(e.withVisibleAt(at));
      }
    }
    return out;
  }

  /** Every pending entry, by offset. */
  public List<PendingEntry> allPending() {
    return List.of(pending.toArray());
  }

  /** The members, in no particular order. */
  public List<ConsumerInfo> consumerList() {
    return List.copyOf(consumers.values());
  }

  /** Whether {@code consumerId} is a member. */
  public boolean hasConsumer(String consumerId) {
    return consumers.containsKey(consumerId);
  }

  // ---------------------------------------------------------------- checks

  /**
   * The entry {@code consumerId} holds at {@code offset} (for {@code removePending}).
   *
   * @throws PendingEntryNotFoundException if no entry is there or another member holds it
   */
  public PendingEntry held(String consumerId, long offset) {
    PendingEntry e = pending.get(offset);
    if (e == null || !e.consumerId().equals(consumerId)) {
      throw new PendingEntryNotFoundException(queue, id, consumerId, offset);
    }
    return e;
  }

  /**
   * Checks that an entry exists at {@code e}'s offset (for {@code updatePending}).
   *
   * @throws PendingEntryNotFoundException if there is none
   */
  public void checkPending(PendingEntry e) {
    if (pending.get(e.offset()) == null) {
      throw new PendingEntryNotFoundException(queue, id, e.consumerId(), e.offset());
    }
  }

  /**
   * The entry at {@code offset} moved from {@code from} to {@code to} (for {@code
   * transferPending}): claimed now by {@code to}, delivery count + 1, first claim kept, visible
   * again after {@code visibility}. Not applied: {@link #putPending} it with {@code updatedAt =
   * now}.
   *
   * @throws PendingEntryNotFoundException if {@code from} does not hold {@code offset}
   */
  public PendingEntry transfer(
      long offset, String from, String to, Instant now, Duration visibility) {
    return held(from, offset).transferredTo(to, now, visibility);
  }

  /**
   * The effect of acknowledging the entry {@code consumerId} holds at {@code offset} with {@code
   * deliveryCount} (for {@code acknowledgePending}): the entry removed, and the committed offset
   * raised to the lowest offset still pending (or the cursor when nothing else is), the cursor with
   * it; {@code updatedAt = now} only if the committed offset moves. Not applied: see {@link
   * #apply(Ack)}.
   *
   * @throws PendingEntryNotFoundException if the entry is not there, held by another member or was
   *     redelivered meanwhile (another delivery count)
   */
  public Ack acknowledgement(String consumerId, long offset, int deliveryCount, Instant now) {
    PendingEntry e = pending.get(offset);
    if (e == null || !e.consumerId().equals(consumerId) || e.deliveryCount() != deliveryCount) {
      throw new PendingEntryNotFoundException(queue, id, consumerId, offset);
    }
    return ack(offset, pending.lowestExcept(offset), now); // the first or the second live entry
  }

  /**
   * {@link #acknowledgement} and {@link #apply(Ack)} in one step, with one search for the entry
   * (in-order acks hit the head at once), for a store that records nothing in between.
   *
   * @return the committed offset afterwards
   * @throws PendingEntryNotFoundException as {@link #acknowledgement} (nothing changes)
   */
  public long acknowledge(String consumerId, long offset, int deliveryCount, Instant now) {
    if (pending.removeHeld(offset, consumerId, deliveryCount) == null) {
      throw new PendingEntryNotFoundException(queue, id, consumerId, offset);
    }
    Ack a = ack(offset, pending.first(), now);
    raise(a);
    return a.committed();
  }

  /**
   * {@link ConsumerGroupStore#acknowledgeAllPending}: each entry {@code consumerId} holds at {@code
   * offsets[i]} with {@code deliveryCounts[i]} deliveries is removed ({@code removed[i]} says
   * whether), then the committed offset is raised once, as after the last of that many {@link
   * #acknowledge} calls. The arrays have one length (the caller checks).
   *
   * @return the committed offset afterwards
   */
  public long acknowledgeAll(
      String consumerId, long[] offsets, int[] deliveryCounts, boolean[] removed, Instant now) {
    long last = -1;
    for (int i = 0; i < offsets.length; i++) {
      removed[i] = pending.removeHeld(offsets[i], consumerId, deliveryCounts[i]) != null;
      if (removed[i]) {
        last = offsets[i];
      }
    }
    if (last >= 0) {
      raise(ack(last, pending.first(), now));
    }
    return committed;
  }

  /** The acknowledgement of {@code offset} when {@code lowestOther} is the lowest other entry. */
  private Ack ack(long offset, PendingEntry lowestOther, Instant now) {
    long target = Math.max(lowestOther == null ? cursor : lowestOther.offset(), committed);
    boolean moves = target > committed;
    return new Ack(
        offset, target, moves ? Math.max(cursor, target) : cursor, moves ? now : updatedAt);
  }

  // ---------------------------------------------------------------- changes

  /** Replaces the whole state with {@code state} (which is also the new snapshot). */
  public void set(ConsumerGroupState state) {
    pattern = state.pattern();
    mode = state.mode();
    autoCommit = state.autoCommit();
    cursor = state.cursor();
    committed = state.committed();
    pending.reset(state.pending());
    consumers = state.consumers();
    createdAt = state.createdAt();
    updatedAt = state.updatedAt();
    paused = state.paused();
    snapshot = state;
    header = null;
  }

  /** Whether the group's delivery is paused. */
  public boolean paused() {
    return paused;
  }

  /** Pauses or resumes the group's delivery. */
  public void setPaused(boolean newPaused, Instant now) {
    paused = newPaused;
    updatedAt = now;
    snapshot = null;
    header = null;
  }

  /** Adds or replaces the entry at {@code e}'s offset (for add, update and transfer). */
  public void putPending(PendingEntry e, Instant now) {
    pending.put(e);
    updatedAt = now;
    snapshot = null;
    header = null;
  }

  /** Removes the entry at {@code offset}, if any (check first with {@link #held}). */
  public void removePending(long offset, Instant now) {
    pending.remove(offset);
    updatedAt = now;
    snapshot = null;
    header = null;
  }

  /** Adds every entry, then sets the cursor (for {@code claimPending}). */
  public void claim(List<PendingEntry> entries, long newCursor, Instant now) {
    for (PendingEntry e : entries) {
      pending.put(e);
    }
    cursor = newCursor;
    updatedAt = now;
    snapshot = null;
    header = null;
  }

  /** Applies an {@link #acknowledgement}. */
  public void apply(Ack ack) {
    pending.remove(ack.offset());
    raise(ack);
  }

  private void raise(Ack ack) {
    committed = ack.committed();
    cursor = ack.cursor();
    updatedAt = ack.updatedAt();
    snapshot = null;
    header = null;
  }

  /** Sets the cursor (for {@code updateCursor}). */
  public void setCursor(long newCursor, Instant now) {
    cursor = newCursor;
    updatedAt = now;
    snapshot = null;
    header = null;
  }

  /** Sets the committed offset and the cursor (callers raise the cursor to at least committed). */
  public void setCommitted(long newCommitted, long newCursor, Instant now) {
    committed = newCommitted;
    cursor = newCursor;
    updatedAt = now;
    snapshot = null;
    header = null;
  }

  /** Adds or replaces a member. */
  public void putConsumer(ConsumerInfo consumer, Instant now) {
    Map<String, ConsumerInfo> next = new HashMap<>(consumers);
    next.put(consumer.id(), consumer);
    consumers = Map.copyOf(next);
    updatedAt = now;
    snapshot = null;
    header = null;
  }

  /** Removes a member (its pending entries stay, for others to steal). */
  public void removeConsumer(String consumerId, Instant now) {
    if (!consumers.containsKey(consumerId)) {
      return;
    }
    Map<String, ConsumerInfo> next = new HashMap<>(consumers);
    next.remove(consumerId);
    consumers = Map.copyOf(next);
    updatedAt = now;
    snapshot = null;
    header = null;
  }
}
