package io.queuebridge.core;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.ProtectedQueueMutationException;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.store.DurableQueueStore;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.Lock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Queue administration (BEHAVIOUR M-ADMIN): creating, updating, deleting and reading queue
 * configurations, and the ephemeral queues created on demand for publishers and subscribers. Uses
 * the store's queue log, the {@link ContractRegistry} to keep protected queues to their contracts,
 * and the {@link DeliveryHook} to tell push delivery about created and deleted queues.
 *
 * <p>Thread-safe. Creates, updates and deletes hold the registry's {@link
 * ContractRegistry#mutationLock() read side} across the contract check and the store write; the
 * delivery hook is told after the lock is released.
 */
final class QueueAdministration {
  // Logs under the facade's name, which is what operators configure.
  private static final Logger LOG = LoggerFactory.getLogger(QueueManager.class);

  /** The topic root whose first level names a queue: {@code $queue/<name>/...}. */
  static final String AUTO_QUEUE_ROOT = "$queue/";

  private final LifecycleState state;
  private final DurableQueueStore queues;
  private final ContractRegistry registry;
  private final DeliveryHook deliveryHook;
  private final ConsumerGroups groups;

  QueueAdministration(
      LifecycleState state,
      DurableQueueStore queues,
      ContractRegistry registry,
      DeliveryHook deliveryHook,
      ConsumerGroups groups) {
    this.state = state;
    this.queues = queues;
    this.registry = registry;
    this.deliveryHook = deliveryHook;
    this.groups = groups;
  }

  /**
   * Refuses {@code action} on a protected queue: one with a contract in this manager, or stored as
   * reserved (the shape every protected stream has, also when no contract is declared here, as in a
   * manager an operator tool opens).
   *
   * @param refusal what is refused, as a sentence ({@code a protected queue cannot be purged})
   * @throws ProtectedQueueMutationException if the queue is protected
   */
  void refuseIfProtected(QueueConfig stored, String refusal) {
    if (stored.reserved() || registry.contractOf(stored.name()) != null) {
      throw new ProtectedQueueMutationException(
          stored.name(), refusal + " (its protected contract owns it)");
    }
  }

  /** {@link QueueManager#deleteConsumerGroup}. */
  void deleteGroup(String queue, String group) {
    state.ensureUsable();
    Objects.requireNonNull(group, "group");
    refuseIfProtected(get(queue), "the groups of a protected queue cannot be deleted");
    if (groups.group(queue, group).isEmpty()) {
      throw new GroupNotFoundException(queue, group);
    }
    groups.deleteGroup(queue, group);
    LOG.info("deleted consumer group {} of queue {}", group, queue);
  }

  /** {@link QueueManager#purgeQueue}. */
  long purge(String name) {
    state.ensureUsable();
    Objects.requireNonNull(name, "name");
    Lock guard = registry.mutationLock();
    guard.lock();
    try {
      QueueConfig stored = get(name);
      refuseIfProtected(stored, "a protected queue cannot be purged");
      try {
        long before = queues.count(name);
        queues.truncate(name, queues.tail(name));
        long head = queues.head(name);
        int dropped = groups.movePast(name, head);
        long removed = before - queues.count(name);
        LOG.info(
            "purged queue {}: {} messages removed, {} pending claims dropped, head now {}",
            name,
            removed,
            dropped,
            head);
        return removed;
      } catch (RuntimeException e) {
        throw StoreErrors.wrap(name, "purge queue " + name, e);
      }
    } finally {
      guard.unlock();
    }
  }

  /** The filter of the queue created on demand for {@code name}: {@code $queue/<name>/#}. */
  static String autoQueueFilter(String name) {
    return AUTO_QUEUE_ROOT + name + "/#";
  }

  /** {@link QueueManager#createQueue}. */
  void create(QueueConfig queue) {
    state.ensureUsable();
    writeChecked(queue, "create queue", () -> queues.createQueue(queue));
    deliveryHook.schedule(queue.name());
  }

  /** {@link QueueManager#updateQueue}. */
  void update(QueueConfig queue) {
    state.ensureUsable();
    writeChecked(
        queue,
        "update queue",
        () -> {
          queues.getQueue(queue.name());
          queues.updateQueue(queue);
        });
  }

  /**
   * Validates {@code queue}, then runs the store {@code write} holding the registry's {@link
   * ContractRegistry#mutationLock() read side} across the contract check and the write.
   */
  private void writeChecked(QueueConfig queue, String action, Runnable write) {
    Objects.requireNonNull(queue, "queue").validate();
    Lock guard = registry.mutationLock();
    guard.lock();
    try {
      registry.checkMutation(queue);
      try {
        write.run();
      } catch (RuntimeException e) {
        throw StoreErrors.wrap(queue.name(), action + " " + queue.name(), e);
      }
    } finally {
      guard.unlock();
    }
  }

  /** {@link QueueManager#deleteQueue}. */
  void delete(String name) {
    state.ensureUsable();
    Objects.requireNonNull(name, "name");
    Lock guard = registry.mutationLock();
    guard.lock();
    try {
      registry.checkDeletable(name);
      try {
        queues.getQueue(name);
        queues.deleteQueue(name);
      } catch (RuntimeException e) {
        throw StoreErrors.wrap(name, "delete queue " + name, e);
      }
    } finally {
      guard.unlock();
    }
    deliveryHook.unschedule(name);
  }

  /** {@link QueueManager#getQueue}. */
  QueueConfig get(String name) {
    state.ensureUsable();
    try {
      return queues.getQueue(Objects.requireNonNull(name, "name"));
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(name, "get queue " + name, e);
    }
  }

  /** {@link QueueManager#listQueues}. */
  List<QueueConfig> list() {
    state.ensureUsable();
    try {
      return queues.listQueues();
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(null, "list queues", e);
    }
  }

  /** {@link QueueManager#getOrCreateQueue}. */
  QueueConfig getOrCreate(String name, String... topics) {
    state.ensureUsable();
    Objects.requireNonNull(name, "name");
    try {
      return queues.getQueue(name);
    } catch (QueueNotFoundException absent) {
      try {
        create(QueueConfig.ephemeral(name).topics(List.of(topics)).build());
      } catch (QueueAlreadyExistsException raced) {
        LOG.debug("Queue {} was created concurrently; re-reading it", name);
      }
      return get(name);
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(name, "get queue " + name, e);
    }
  }
}
