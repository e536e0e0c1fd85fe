package io.queuebridge.core.store.file;

import io.queuebridge.core.config.Names;
import io.queuebridge.core.errors.ConsumerGroupExistsException;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.GroupOverview;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.support.StoreChecks;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The consumer-group half of {@link FileStorage}: one {@link GroupLog} per group.
 *
 * <p>Every convenience of {@link ConsumerGroupStore} but {@code acknowledgeAllPending} (whose
 * default makes one {@link #acknowledgePending} per entry) is overridden to log just the change
 * (one small record, one {@code write}) instead of reading and rewriting the whole group; each
 * keeps the documented behaviour and the same {@code updatedAt} choice as the default it replaces,
 * and is atomic per group.
 *
 * <p><b>Durability.</b> A change survives a process kill when the call returns. It survives a
 * machine crash on return with {@code group.sync=always} (or {@code sync.interval.ms=0}); with the
 * default {@code group.sync=interval} the last interval's changes may be lost in a machine crash,
 * which only ever rolls a group back to an earlier state (redelivery, never loss). Creating and
 * deleting a group is durable on return.
 *
 * <p><b>Errors.</b> A missing group on an existing queue is a {@link GroupNotFoundException}; a
 * missing queue is a {@link io.queuebridge.core.errors.QueueNotFoundException} for every method but
 * {@link #deleteGroup}, which is idempotent. Group ids are checked against the file-name rules of
 * {@link Names} when a group is created ({@link
 * io.queuebridge.core.errors.InvalidConfigException}).
 *
 * <p><b>Shared with the other stores</b>: the argument checks of more than one argument ({@link
 * StoreChecks}) and the group rules ({@link io.queuebridge.core.store.support.GroupTable}, behind
 * each {@link GroupLog}). Not shared: the method-by-method forwarding, which looks like the memory
 * store's but is not the same code. Here a method checks its arguments and hands the call to the
 * group's log, which checks, writes a record and applies it under the log's lock; the memory
 * store's method is itself the atomic step (check and apply on the table under the group's
 * monitor). A common base would need a public per-group interface as wide as {@link
 * ConsumerGroupStore} to remove nothing but one-line lookups.
 *
 * <p>Thread-safe.
 */
final class FileGroupStore implements ConsumerGroupStore {
  private final FileStorage storage;

  FileGroupStore(FileStorage storage) {
    this.storage = storage;
  }

  @Override
  public void createGroup(ConsumerGroupState group) {
    Objects.requireNonNull(group, "group");
    FileStorage.QueueEntry q = storage.entry(group.queue());
    String encoded = Names.encode("group id", group.id());
    synchronized (q) {
      storage.entry(group.queue());
      if (q.groups.containsKey(group.id())) {
        throw new ConsumerGroupExistsException(group.queue(), group.id());
      }
      try {
        GroupLog log =
            GroupLog.create(
                group,
                q.groupsDir().resolve(encoded + GroupLog.SUFFIX),
                storage.io,
                storage.groupSyncAlways());
        q.groups.put(group.id(), log);
      } catch (IOException e) {
        throw new QueueStoreException(
            group.queue(),
            "creating consumer group "
                + group.id()
                + " of queue "
                + group.queue()
                + " failed: "
                + e,
            e);
      }
    }
  }

  @Override
  public Optional<ConsumerGroupState> findGroup(String queue, String groupId) {
    Objects.requireNonNull(groupId, "groupId");
    GroupLog g = storage.entry(queue).groups.get(groupId);
    return g == null ? Optional.empty() : Optional.of(g.state());
  }

  @Override
  public ConsumerGroupState getGroup(String queue, String groupId) {
    return group(queue, groupId).state();
  }

  @Override
  public void updateGroup(ConsumerGroupState group) {
    Objects.requireNonNull(group, "group");
    group(group.queue(), group.id()).replace(group);
  }

  @Override
  public void deleteGroup(String queue, String groupId) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    storage.checkOpen();
    FileStorage.QueueEntry q = storage.queues.get(queue);
    if (q == null) {
      return;
    }
    synchronized (q) {
      GroupLog g = q.groups.remove(groupId);
      if (g != null) {
        try {
          g.delete();
        } catch (IOException e) {
          throw new QueueStoreException(
              queue,
              "deleting consumer group " + groupId + " of queue " + queue + " failed: " + e,
              e);
        }
      }
    }
  }

  @Override
  public List<ConsumerGroupState> listGroups(String queue) {
    List<ConsumerGroupState> out = new ArrayList<>();
    for (GroupLog g : storage.entry(queue).groups.values()) {
      try {
        out.add(g.state());
      } catch (GroupNotFoundException e) {
        // deleted meanwhile
      }
    }
    return out;
  }

  @Override
  public void addPending(String queue, String groupId, PendingEntry entry) {
    Objects.requireNonNull(entry, "entry");
    group(queue, groupId).addPending(entry);
  }

  @Override
  public void removePending(String queue, String groupId, String consumerId, long offset) {
    Objects.requireNonNull(consumerId, "consumerId");
    group(queue, groupId).removePending(consumerId, offset);
  }

  @Override
  public void updatePending(String queue, String groupId, PendingEntry entry) {
    Objects.requireNonNull(entry, "entry");
    group(queue, groupId).updatePending(entry);
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
    return group(queue, groupId).transferPending(offset, from, to, now, visibility);
  }

  /** O(log n): one lookup, no snapshot of the group. */
  @Override
  public Optional<PendingEntry> findPending(String queue, String groupId, long offset) {
    return group(queue, groupId).pendingAt(offset);
  }

  /** From the group's table, in O(1). */
  @Override
  public GroupOverview overview(String queue, String groupId) {
    return group(queue, groupId).overview();
  }

  /** From the group's due index (O(log n + limit)). */
  @Override
  public List<PendingEntry> duePending(
      String queue, String groupId, Instant now, PendingEntry after, int limit) {
    StoreChecks.checkDuePending(queue, groupId, now, limit);
    return group(queue, groupId).duePending(now, after, limit);
  }

  /**
   * From each group's due index: one probe, which passes over only the entries already visible at
   * {@code after} (due and not yet claimed again), never over the later ones.
   */
  @Override
  public Optional<Instant> nextVisible(String queue, Instant after) {
    Objects.requireNonNull(after, "after");
    Instant next = null;
    for (GroupLog g : storage.entry(queue).groups.values()) {
      Instant v;
      try {
        v = g.nextVisible(after);
      } catch (GroupNotFoundException e) {
        continue; // deleted meanwhile
      }
      if (v != null && (next == null || v.isBefore(next))) {
        next = v;
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
    return group(queue, groupId).firstPendingByKey(keys);
  }

  /** Nothing is looked up or written when the group has no blocked entry. */
  @Override
  public List<PendingEntry> releaseBlocked(
      String queue, String groupId, Collection<String> keys, Instant at) {
    StoreChecks.checkOrderKeys(queue, groupId, keys);
    Objects.requireNonNull(at, "at");
    if (keys.isEmpty()) {
      return new ArrayList<>();
    }
    return group(queue, groupId).releaseBlocked(keys, at);
  }

  /** One record for the whole claim (entries and cursor), so a crash keeps all of it or none. */
  @Override
  public void claimPending(
      String queue, String groupId, List<PendingEntry> entries, long cursor, Instant now) {
    Objects.requireNonNull(entries, "entries");
    Objects.requireNonNull(now, "now");
    group(queue, groupId).claim(List.copyOf(entries), cursor, now);
  }

  /** One record for the removal and the commit, so a crash keeps both or neither. */
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
    return group(queue, groupId).acknowledge(consumerId, offset, deliveryCount, now);
  }

  @Override
  public List<PendingEntry> getPending(String queue, String groupId, String consumerId) {
    Objects.requireNonNull(consumerId, "consumerId");
    return group(queue, groupId).pendingOf(consumerId);
  }

  @Override
  public List<PendingEntry> getAllPending(String queue, String groupId) {
    return group(queue, groupId).allPending();
  }

  @Override
  public void updateCursor(String queue, String groupId, long cursor, Instant now) {
    Objects.requireNonNull(now, "now");
    group(queue, groupId).updateCursor(cursor, now);
  }

  @Override
  public void setPaused(String queue, String groupId, boolean paused, Instant now) {
    Objects.requireNonNull(now, "now");
    group(queue, groupId).setPaused(paused, now);
  }

  @Override
  public void updateCommitted(String queue, String groupId, long committed, Instant now) {
    Objects.requireNonNull(now, "now");
    group(queue, groupId).updateCommitted(committed, now);
  }

  @Override
  public void registerConsumer(String queue, String groupId, ConsumerInfo consumer) {
    Objects.requireNonNull(consumer, "consumer");
    group(queue, groupId).registerConsumer(consumer);
  }

  @Override
  public void unregisterConsumer(String queue, String groupId, String consumerId) {
    Objects.requireNonNull(consumerId, "consumerId");
    group(queue, groupId).unregisterConsumer(consumerId);
  }

  @Override
  public List<ConsumerInfo> listConsumers(String queue, String groupId) {
    return group(queue, groupId).consumerList();
  }

  @Override
  public String toString() {
    return storage.description();
  }

  private GroupLog group(String queue, String groupId) {
    Objects.requireNonNull(groupId, "groupId");
    GroupLog g = storage.entry(queue).groups.get(groupId);
    if (g == null) {
      throw new GroupNotFoundException(queue, groupId);
    }
    return g;
  }
}
