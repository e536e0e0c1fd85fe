package io.queuebridge.core.store.memory;

import io.queuebridge.core.config.Names;
import io.queuebridge.core.errors.ConsumerGroupExistsException;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.GroupOverview;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.support.GroupTable;
import io.queuebridge.core.store.support.StoreChecks;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The consumer-group half of {@link MemoryStorage}.
 *
 * <p><b>Layout.</b> Each group is a mutable {@link GroupTable} (shared with the file store: the
 * state and the rules of every change) kept per queue in a concurrent map ({@link GroupData}); a
 * claim, an ack or a transfer changes one entry in O(log n) (O(1) amortised at either end) instead
 * of copying the whole pending list. {@link #findGroup} and the other reads hand out an immutable
 * {@link ConsumerGroupState} snapshot, built on the first read after a change and cached until the
 * next.
 *
 * <p><b>Atomicity.</b> Every method, the conveniences and the bulk steps ({@link #claimPending},
 * {@link #acknowledgePending}, {@link #acknowledgeAllPending}) included, reads, checks and changes
 * its group under the group's monitor in one step, so two calls racing on one group never lose an
 * update (the interface's defaults could), and a failing call changes nothing. Each keeps the
 * documented behaviour and the same {@code updatedAt} choice as the default it replaces.
 *
 * <p><b>Errors.</b> A missing group on an existing queue is a {@link GroupNotFoundException} (one
 * kind for every method); a missing queue is a {@link QueueNotFoundException} for every method but
 * {@link #deleteGroup}, which is idempotent. Deleting a queue deletes its groups; a call that found
 * a group just before it was deleted reports it missing.
 *
 * <p><b>Shared with the other stores</b>: the group rules ({@link GroupTable}) and the argument
 * checks of more than one argument ({@link StoreChecks}). The method-by-method forwarding that
 * looks like the file store's is not shared: here each method is itself the atomic step on the
 * table, there it hands the call to the group's operation log (see the file store's group store).
 *
 * <p>Thread-safe; never blocks beyond one group's monitor.
 */
final class MemoryGroupStore implements ConsumerGroupStore {
  private final MemoryStorage storage;

  MemoryGroupStore(MemoryStorage storage) {
    this.storage = storage;
  }

  @Override
  public void createGroup(ConsumerGroupState group) {
    Objects.requireNonNull(group, "group");
    Names.encode("group id", group.id()); // BEHAVIOUR S-NAMES: the rules of every store
    MemoryQueue q = storage.queue(group.queue());
    if (q.groups.putIfAbsent(group.id(), new GroupData(group)) != null) {
      throw new ConsumerGroupExistsException(group.queue(), group.id());
    }
  }

  @Override
  public Optional<ConsumerGroupState> findGroup(String queue, String groupId) {
    Objects.requireNonNull(groupId, "groupId");
    GroupData d = storage.queue(queue).groups.get(groupId);
    if (d == null) {
      return Optional.empty();
    }
    synchronized (d) {
      return d.deleted ? Optional.empty() : Optional.of(d.table.snapshot());
    }
  }

  @Override
  public ConsumerGroupState getGroup(String queue, String groupId) {
    GroupData d = data(queue, groupId);
    synchronized (d) {
      return d.live().snapshot();
    }
  }

  @Override
  public void updateGroup(ConsumerGroupState group) {
    Objects.requireNonNull(group, "group");
    GroupData d = data(group.queue(), group.id());
    synchronized (d) {
      d.live().set(group);
    }
  }

  @Override
  public void deleteGroup(String queue, String groupId) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    storage.checkOpen();
    MemoryQueue q = storage.queues.get(queue);
    if (q == null) {
      return;
    }
    GroupData d = q.groups.remove(groupId);
    if (d != null) {
      synchronized (d) {
        d.deleted = true;
      }
    }
  }

  @Override
  public List<ConsumerGroupState> listGroups(String queue) {
    MemoryQueue q = storage.queue(queue);
    List<ConsumerGroupState> out = new ArrayList<>(q.groups.size());
    for (GroupData d : q.groups.values()) {
      synchronized (d) {
        if (!d.deleted) {
          out.add(d.table.snapshot());
        }
      }
    }
    return List.copyOf(out);
  }

  @Override
  public void addPending(String queue, String groupId, PendingEntry entry) {
    Objects.requireNonNull(entry, "entry");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.live().putPending(entry, entry.claimedAt());
    }
  }

  @Override
  public void removePending(String queue, String groupId, String consumerId, long offset) {
    Objects.requireNonNull(consumerId, "consumerId");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      GroupTable t = d.live();
      t.held(consumerId, offset);
      t.removePending(offset, t.updatedAt());
    }
  }

  @Override
  public void updatePending(String queue, String groupId, PendingEntry entry) {
    Objects.requireNonNull(entry, "entry");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      GroupTable t = d.live();
      t.checkPending(entry);
      t.putPending(entry, entry.claimedAt());
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
    GroupData d = data(queue, groupId);
    synchronized (d) {
      GroupTable t = d.live();
      PendingEntry moved = t.transfer(offset, from, to, now, visibility);
      t.putPending(moved, now);
      return moved;
    }
  }

  @Override
  public Optional<PendingEntry> findPending(String queue, String groupId, long offset) {
    GroupData d = data(queue, groupId);
    synchronized (d) {
      return d.live().pendingAt(offset);
    }
  }

  /** From the group's table, in O(1). */
  @Override
  public GroupOverview overview(String queue, String groupId) {
    GroupData d = data(queue, groupId);
    synchronized (d) {
      return d.live().overview();
    }
  }

  /** From the group's due index (O(log n + limit)). */
  @Override
  public List<PendingEntry> duePending(
      String queue, String groupId, Instant now, PendingEntry after, int limit) {
    StoreChecks.checkDuePending(queue, groupId, now, limit);
    GroupData d = data(queue, groupId);
    synchronized (d) {
      return d.live().duePending(now, after, limit);
    }
  }

  /**
   * From each group's due index: one probe, which passes over only the entries already visible at
   * {@code after} (due and not yet claimed again), never over the later ones.
   */
  @Override
  public Optional<Instant> nextVisible(String queue, Instant after) {
    Objects.requireNonNull(after, "after");
    MemoryQueue q = storage.queue(queue);
    Instant next = null;
    for (GroupData d : q.groups.values()) {
      synchronized (d) {
        if (!d.deleted) {
          Instant v = d.live().nextVisible(after);
          if (v != null && (next == null || v.isBefore(next))) {
            next = v;
          }
        }
      }
    }
    return Optional.ofNullable(next);
  }

  /** From the group's key index (O(1) per key). */
  @Override
  public Map<String, PendingEntry> firstPendingByKey(
      String queue, String groupId, Collection<String> keys) {
    StoreChecks.checkOrderKeys(queue, groupId, keys);
    if (keys.isEmpty()) {
      return new java.util.HashMap<>();
    }
    GroupData d = data(queue, groupId);
    synchronized (d) {
      return d.live().firstPendingByKey(keys);
    }
  }

  /** One section; nothing is looked up when the group has no blocked entry. */
  @Override
  public List<PendingEntry> releaseBlocked(
      String queue, String groupId, Collection<String> keys, Instant at) {
    StoreChecks.checkOrderKeys(queue, groupId, keys);
    Objects.requireNonNull(at, "at");
    if (keys.isEmpty()) {
      return new ArrayList<>();
    }
    GroupData d = data(queue, groupId);
    synchronized (d) {
      GroupTable t = d.live();
      List<PendingEntry> released = t.releasable(keys, at);
      for (PendingEntry e : released) {
        t.putPending(e, e.claimedAt()); // as updatePending
      }
      return released;
    }
  }

  /**
   * One change: the due entries moved to the claimer under the group's monitor, so concurrent
   * claims of one group never take the same entry.
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
    GroupData d = data(queue, groupId);
    synchronized (d) {
      return d.live().claimDue(consumerId, now, visibility, limit);
    }
  }

  /** One change: every entry added, then the cursor set; {@code updatedAt = now}. */
  @Override
  public void claimPending(
      String queue, String groupId, List<PendingEntry> entries, long cursor, Instant now) {
    StoreChecks.checkClaim(entries, now);
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.live().claim(entries, cursor, now);
    }
  }

  /** One change: the fenced removal and the committed offset (and cursor) raise. */
  @Override
  public long acknowledgePending(
      String queue,
      String groupId,
      String consumerId,
      long offset,
      int deliveryCount,
      Instant now) {
    Objects.requireNonNull(consumerId, "consumerId");
    Objects.requireNonNull(now, "now");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      return d.live().acknowledge(consumerId, offset, deliveryCount, now);
    }
  }

  /** One change: every fenced removal, then one committed offset (and cursor) raise. */
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
    GroupData d = data(queue, groupId);
    synchronized (d) {
      return d.live().acknowledgeAll(consumerId, offsets, deliveryCounts, removed, now);
    }
  }

  @Override
  public List<PendingEntry> getPending(String queue, String groupId, String consumerId) {
    Objects.requireNonNull(consumerId, "consumerId");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      return d.live().pendingOf(consumerId);
    }
  }

  @Override
  public List<PendingEntry> getAllPending(String queue, String groupId) {
    GroupData d = data(queue, groupId);
    synchronized (d) {
      return d.live().allPending();
    }
  }

  @Override
  public void updateCursor(String queue, String groupId, long cursor, Instant now) {
    Objects.requireNonNull(now, "now");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.live().setCursor(cursor, now);
    }
  }

  @Override
  public void setPaused(String queue, String groupId, boolean paused, Instant now) {
    Objects.requireNonNull(now, "now");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.live().setPaused(paused, now);
    }
  }

  @Override
  public void updateCommitted(String queue, String groupId, long committed, Instant now) {
    Objects.requireNonNull(now, "now");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      GroupTable t = d.live();
      t.setCommitted(committed, Math.max(t.cursor(), committed), now);
    }
  }

  @Override
  public void registerConsumer(String queue, String groupId, ConsumerInfo consumer) {
    Objects.requireNonNull(consumer, "consumer");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.live().putConsumer(consumer, consumer.lastHeartbeat());
    }
  }

  /** Removes the member and keeps its pending entries for others to steal. */
  @Override
  public void unregisterConsumer(String queue, String groupId, String consumerId) {
    Objects.requireNonNull(consumerId, "consumerId");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      GroupTable t = d.live();
      t.removeConsumer(consumerId, t.updatedAt());
    }
  }

  @Override
  public List<ConsumerInfo> listConsumers(String queue, String groupId) {
    GroupData d = data(queue, groupId);
    synchronized (d) {
      return d.live().consumerList();
    }
  }

  @Override
  public String toString() {
    return storage.description();
  }

  /**
   * The group's data (check {@link GroupData#deleted} under its monitor).
   *
   * @throws QueueNotFoundException if there is no such queue
   * @throws GroupNotFoundException if there is no such group
   */
  private GroupData data(String queue, String groupId) {
    Objects.requireNonNull(groupId, "groupId");
    GroupData d = storage.queue(queue).groups.get(groupId);
    if (d == null) {
      throw new GroupNotFoundException(queue, groupId);
    }
    return d;
  }
}
