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
import java.util.function.UnaryOperator;

/**
 * The consumer-group half of {@link MemoryStorage} (SEMANTICS B §2.3).
 *
 * <p>Groups are immutable {@link ConsumerGroupState} snapshots kept per queue in a concurrent map.
 * Every convenience of {@link ConsumerGroupStore} is overridden to read, change and write its group
 * in one atomic {@link java.util.concurrent.ConcurrentMap#compute} step, so two of them racing on
 * one group never lose an update (the interface's defaults could). Each keeps the documented
 * behaviour and the same {@code updatedAt} choice as the default it replaces.
 *
 * <p><b>Errors.</b> A missing group on an existing queue is a {@link GroupNotFoundException} (one
 * kind for every method, SEMANTICS B §2.3); a missing queue is a {@link QueueNotFoundException} for
 * every method but {@link #deleteGroup}, which is idempotent. Deleting a queue deletes its groups.
 *
 * <p>Thread-safe; never blocks beyond the map's per-key lock.
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
    if (q.groups.putIfAbsent(group.id(), group) != null) {
      throw new ConsumerGroupExistsException(group.queue(), group.id());
    }
  }

  @Override
  public Optional<ConsumerGroupState> findGroup(String queue, String groupId) {
    Objects.requireNonNull(groupId, "groupId");
    return Optional.ofNullable(storage.queue(queue).groups.get(groupId));
  }

  @Override
  public ConsumerGroupState getGroup(String queue, String groupId) {
    return findGroup(queue, groupId).orElseThrow(() -> new GroupNotFoundException(queue, groupId));
  }

  @Override
  public void updateGroup(ConsumerGroupState group) {
    Objects.requireNonNull(group, "group");
    mutate(group.queue(), group.id(), g -> group);
  }

  @Override
  public void deleteGroup(String queue, String groupId) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    storage.checkOpen();
    MemoryQueue q = storage.queues.get(queue);
    if (q != null) {
      q.groups.remove(groupId);
    }
  }

  @Override
  public List<ConsumerGroupState> listGroups(String queue) {
    return List.copyOf(storage.queue(queue).groups.values());
  }

  @Override
  public void addPending(String queue, String groupId, PendingEntry entry) {
    Objects.requireNonNull(entry, "entry");
    mutate(
        queue,
        groupId,
        g -> {
          List<PendingEntry> next = new ArrayList<>(g.pending().size() + 1);
          for (PendingEntry e : g.pending()) {
            if (e.offset() != entry.offset()) {
              next.add(e);
            }
          }
          next.add(entry);
          return g.withPending(next, entry.claimedAt());
        });
  }

  @Override
  public void removePending(String queue, String groupId, String consumerId, long offset) {
    Objects.requireNonNull(consumerId, "consumerId");
    mutate(
        queue,
        groupId,
        g -> {
          g.pendingAt(offset)
              .filter(p -> p.consumerId().equals(consumerId))
              .orElseThrow(
                  () -> new PendingEntryNotFoundException(queue, groupId, consumerId, offset));
          return g.mapPending(offset, p -> null, g.updatedAt());
        });
  }

  @Override
  public void updatePending(String queue, String groupId, PendingEntry entry) {
    Objects.requireNonNull(entry, "entry");
    mutate(
        queue,
        groupId,
        g -> {
          if (g.pendingAt(entry.offset()).isEmpty()) {
            throw new PendingEntryNotFoundException(
                queue, groupId, entry.consumerId(), entry.offset());
          }
          return g.mapPending(entry.offset(), p -> entry, entry.claimedAt());
        });
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
    PendingEntry[] moved = new PendingEntry[1];
    mutate(
        queue,
        groupId,
        g -> {
          PendingEntry e =
              g.pendingAt(offset)
                  .filter(p -> p.consumerId().equals(from))
                  .orElseThrow(
                      () -> new PendingEntryNotFoundException(queue, groupId, from, offset));
          moved[0] =
              new PendingEntry(
                  offset, to, now, e.deliveryCount() + 1, e.firstClaimedAt(), now.plus(visibility));
          return g.mapPending(offset, p -> moved[0], now);
        });
    return moved[0];
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
    mutate(queue, groupId, g -> g.withCursor(cursor, now));
  }

  @Override
  public void updateCommitted(String queue, String groupId, long committed, Instant now) {
    Objects.requireNonNull(now, "now");
    mutate(
        queue,
        groupId,
        g -> {
          ConsumerGroupState next = g.withCommitted(committed, now);
          return committed > next.cursor() ? next.withCursor(committed, now) : next;
        });
  }

  @Override
  public void registerConsumer(String queue, String groupId, ConsumerInfo consumer) {
    Objects.requireNonNull(consumer, "consumer");
    mutate(
        queue,
        groupId,
        g -> {
          Map<String, ConsumerInfo> next = new HashMap<>(g.consumers());
          next.put(consumer.id(), consumer);
          return g.withConsumers(next, consumer.lastHeartbeat());
        });
  }

  /** Removes the member and keeps its pending entries for others to steal. */
  @Override
  public void unregisterConsumer(String queue, String groupId, String consumerId) {
    Objects.requireNonNull(consumerId, "consumerId");
    mutate(
        queue,
        groupId,
        g -> {
          if (!g.consumers().containsKey(consumerId)) {
            return g;
          }
          Map<String, ConsumerInfo> next = new HashMap<>(g.consumers());
          next.remove(consumerId);
          return g.withConsumers(next, g.updatedAt());
        });
  }

  @Override
  public List<ConsumerInfo> listConsumers(String queue, String groupId) {
    return List.copyOf(getGroup(queue, groupId).consumers().values());
  }

  @Override
  public String toString() {
    return storage.description();
  }

  /**
   * Replaces the group with {@code change(group)} atomically; exceptions thrown by {@code change}
   * leave it unchanged.
   */
  private void mutate(String queue, String groupId, UnaryOperator<ConsumerGroupState> change) {
    Objects.requireNonNull(groupId, "groupId");
    MemoryQueue q = storage.queue(queue);
    q.groups.compute(
        groupId,
        (id, g) -> {
          if (g == null) {
            throw new GroupNotFoundException(queue, groupId);
          }
          return change.apply(g);
        });
  }
}
