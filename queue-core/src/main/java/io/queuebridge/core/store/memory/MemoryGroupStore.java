package io.queuebridge.core.store.memory;

import io.queuebridge.core.ConsumerGroupExistsException;
import io.queuebridge.core.GroupNotFoundException;
import io.queuebridge.core.PendingEntryNotFoundException;
import io.queuebridge.core.QueueNotFoundException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.PendingEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The consumer-group half of {@link MemoryStorage} (SEMANTICS B §2.3).
 *
 * <p><b>Layout.</b> Each group is a mutable {@link GroupData} kept per queue in a concurrent map;
 * its pending entries live in a {@link PendingLog} sorted by offset, so a claim, an ack or a
 * transfer changes one entry in O(log n) (O(1) amortised at either end) instead of copying the
 * whole pending list. {@link #findGroup} and the other reads hand out an immutable {@link
 * ConsumerGroupState} snapshot, built on the first read after a change and cached until the next.
 *
 * <p><b>Atomicity.</b> Every method, the conveniences and the bulk steps ({@link #claimPending},
 * {@link #acknowledgePending}) included, reads, checks and changes its group under the group's
 * monitor in one step, so two calls racing on one group never lose an update (the interface's
 * defaults could), and a failing call changes nothing. Each keeps the documented behaviour and the
 * same {@code updatedAt} choice as the default it replaces.
 *
 * <p><b>Errors.</b> A missing group on an existing queue is a {@link GroupNotFoundException} (one
 * kind for every method, SEMANTICS B §2.3); a missing queue is a {@link QueueNotFoundException} for
 * every method but {@link #deleteGroup}, which is idempotent. Deleting a queue deletes its groups;
 * a call that found a group just before it was deleted reports it missing.
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
      return d.deleted ? Optional.empty() : Optional.of(d.snapshot());
    }
  }

  @Override
  public ConsumerGroupState getGroup(String queue, String groupId) {
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.checkLive();
      return d.snapshot();
    }
  }

  @Override
  public void updateGroup(ConsumerGroupState group) {
    Objects.requireNonNull(group, "group");
    GroupData d = data(group.queue(), group.id());
    synchronized (d) {
      d.checkLive();
      d.set(group);
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
          out.add(d.snapshot());
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
      d.checkLive();
      d.pending.put(entry);
      d.updatedAt = entry.claimedAt();
      d.changed();
    }
  }

  @Override
  public void removePending(String queue, String groupId, String consumerId, long offset) {
    Objects.requireNonNull(consumerId, "consumerId");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.checkLive();
      PendingEntry e = d.pending.get(offset);
      if (e == null || !e.consumerId().equals(consumerId)) {
        throw new PendingEntryNotFoundException(queue, groupId, consumerId, offset);
      }
      d.pending.remove(offset);
      d.changed();
    }
  }

  @Override
  public void updatePending(String queue, String groupId, PendingEntry entry) {
    Objects.requireNonNull(entry, "entry");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.checkLive();
      if (d.pending.get(entry.offset()) == null) {
        throw new PendingEntryNotFoundException(queue, groupId, entry.consumerId(), entry.offset());
      }
      d.pending.put(entry);
      d.updatedAt = entry.claimedAt();
      d.changed();
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
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    Objects.requireNonNull(now, "now");
    Objects.requireNonNull(visibility, "visibility");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.checkLive();
      PendingEntry e = d.pending.get(offset);
      if (e == null || !e.consumerId().equals(from)) {
        throw new PendingEntryNotFoundException(queue, groupId, from, offset);
      }
      PendingEntry moved =
          new PendingEntry(
              offset, to, now, e.deliveryCount() + 1, e.firstClaimedAt(), now.plus(visibility));
      d.pending.put(moved);
      d.updatedAt = now;
      d.changed();
      return moved;
    }
  }

  @Override
  public Optional<PendingEntry> findPending(String queue, String groupId, long offset) {
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.checkLive();
      return Optional.ofNullable(d.pending.get(offset));
    }
  }

  /** One change: every entry added, then the cursor set; {@code updatedAt = now}. */
  @Override
  public void claimPending(
      String queue, String groupId, List<PendingEntry> entries, long cursor, Instant now) {
    Objects.requireNonNull(entries, "entries");
    Objects.requireNonNull(now, "now");
    for (PendingEntry e : entries) {
      Objects.requireNonNull(e, "entry");
    }
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.checkLive();
      for (PendingEntry e : entries) {
        d.pending.put(e);
      }
      d.cursor = cursor;
      d.updatedAt = now;
      d.changed();
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
      d.checkLive();
      if (d.pending.removeHeld(offset, consumerId, deliveryCount) == null) {
        throw new PendingEntryNotFoundException(queue, groupId, consumerId, offset);
      }
      PendingEntry lowest = d.pending.first();
      long target = lowest == null ? d.cursor : lowest.offset();
      if (target > d.committed) {
        d.committed = target;
        if (target > d.cursor) {
          d.cursor = target;
        }
        d.updatedAt = now;
      }
      d.changed();
      return d.committed;
    }
  }

  @Override
  public List<PendingEntry> getPending(String queue, String groupId, String consumerId) {
    Objects.requireNonNull(consumerId, "consumerId");
    return getGroup(queue, groupId).pendingOf(consumerId);
  }

  @Override
  public List<PendingEntry> getAllPending(String queue, String groupId) {
    return getGroup(queue, groupId).pending();
  }

  @Override
  public void updateCursor(String queue, String groupId, long cursor, Instant now) {
    Objects.requireNonNull(now, "now");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.checkLive();
      d.cursor = cursor;
      d.updatedAt = now;
      d.changed();
    }
  }

  @Override
  public void updateCommitted(String queue, String groupId, long committed, Instant now) {
    Objects.requireNonNull(now, "now");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.checkLive();
      d.committed = committed;
      if (committed > d.cursor) {
        d.cursor = committed;
      }
      d.updatedAt = now;
      d.changed();
    }
  }

  @Override
  public void registerConsumer(String queue, String groupId, ConsumerInfo consumer) {
    Objects.requireNonNull(consumer, "consumer");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.checkLive();
      Map<String, ConsumerInfo> next = new HashMap<>(d.consumers);
      next.put(consumer.id(), consumer);
      d.consumers = Map.copyOf(next);
      d.updatedAt = consumer.lastHeartbeat();
      d.changed();
    }
  }

  /** Removes the member and keeps its pending entries for others to steal. */
  @Override
  public void unregisterConsumer(String queue, String groupId, String consumerId) {
    Objects.requireNonNull(consumerId, "consumerId");
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.checkLive();
      if (!d.consumers.containsKey(consumerId)) {
        return;
      }
      Map<String, ConsumerInfo> next = new HashMap<>(d.consumers);
      next.remove(consumerId);
      d.consumers = Map.copyOf(next);
      d.changed();
    }
  }

  @Override
  public List<ConsumerInfo> listConsumers(String queue, String groupId) {
    GroupData d = data(queue, groupId);
    synchronized (d) {
      d.checkLive();
      return List.copyOf(d.consumers.values());
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
