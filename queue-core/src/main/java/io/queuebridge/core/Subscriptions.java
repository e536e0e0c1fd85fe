package io.queuebridge.core;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.delivery.ConsumeOptions;
import io.queuebridge.core.delivery.DeliveryHandler;
import io.queuebridge.core.delivery.Subscription;
import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.errors.QueueNotStreamException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.internal.delivery.DeliveryEngine;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.DurableQueueStore;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer side of the manager (BEHAVIOUR Q-SUB, Q-HEARTBEAT, Q-DEL): group membership for pull
 * consumers (subscribe, unsubscribe, heartbeat, waiting for an append) and push subscriptions
 * registered with the {@link DeliveryEngine}. Uses {@link QueueAdministration} to read, create or
 * convert the subscribed queue, the {@link GroupCoordinator} for membership, and the {@link
 * DeliveryHook} to schedule delivery after a join or a leave.
 *
 * <p>Thread-safe: it holds no state of its own; the group engine serialises group mutations.
 */
final class Subscriptions {
  // Logs under the facade's name, which is what operators configure.
  private static final Logger LOG = LoggerFactory.getLogger(QueueManager.class);

  private final LifecycleState state;
  private final DurableQueueStore queues;
  private final QueueAdministration administration;
  private final GroupCoordinator consumerGroups;
  private final DeliveryEngine delivery;
  private final DeliveryHook deliveryHook;

  Subscriptions(
      LifecycleState state,
      DurableQueueStore queues,
      QueueAdministration administration,
      GroupCoordinator consumerGroups,
      DeliveryEngine delivery,
      DeliveryHook deliveryHook) {
    this.state = state;
    this.queues = queues;
    this.administration = administration;
    this.consumerGroups = consumerGroups;
    this.delivery = delivery;
    this.deliveryHook = deliveryHook;
  }

  /** {@link QueueManager#subscribe(String, String, String, String, CursorOption)}. */
  ConsumerGroupState subscribe(
      String queue, String pattern, String clientId, String groupId, CursorOption cursor) {
    state.ensureUsable();
    Objects.requireNonNull(queue, "queue");
    GroupMode mode = cursor == null ? GroupMode.QUEUE : cursor.effectiveMode();
    QueueConfig q;
    try {
      q = administration.getOrCreate(queue, QueueAdministration.autoQueueFilter(queue));
    } catch (QueueException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new QueueStoreException(queue, "failed to resolve queue for subscription: " + e, e);
    }
    if (mode == GroupMode.STREAM && !q.isStream()) {
      try {
        administration.update(q.toBuilder().type(QueueType.STREAM).build());
        LOG.info("Converted queue {} to a stream for stream subscriber {}", queue, clientId);
      } catch (RuntimeException e) {
        LOG.warn(
            "Cannot convert queue {} to a stream for stream subscriber {}; joining anyway",
            queue,
            clientId,
            e);
      }
    }
    return join(queue, pattern, clientId, groupId, cursor);
  }

  /** {@link QueueManager#subscribeExisting(String, String, String, String, CursorOption)}. */
  ConsumerGroupState subscribeExisting(
      String queue, String pattern, String clientId, String groupId, CursorOption cursor) {
    state.ensureUsable();
    QueueConfig q = administration.get(Objects.requireNonNull(queue, "queue"));
    if (cursor != null && cursor.effectiveMode() == GroupMode.STREAM && !q.isStream()) {
      throw new QueueNotStreamException(queue);
    }
    return join(queue, pattern, clientId, groupId, cursor);
  }

  private ConsumerGroupState join(
      String queue, String pattern, String clientId, String groupId, CursorOption cursor) {
    ConsumerGroupState g;
    try {
      g = consumerGroups.join(queue, pattern, groupId, clientId, cursor);
    } catch (IllegalArgumentException e) {
      throw e;
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(queue, "join a group of queue " + queue, e);
    }
    deliveryHook.schedule(queue);
    return g;
  }

  /** {@link QueueManager#unsubscribe}. */
  boolean unsubscribe(String queue, String pattern, String clientId, String groupId) {
    state.ensureUsable();
    Objects.requireNonNull(queue, "queue");
    boolean was;
    try {
      was = consumerGroups.leave(queue, pattern, groupId, clientId);
    } catch (IllegalArgumentException e) {
      throw e;
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(queue, "leave a group of queue " + queue, e);
    }
    deliveryHook.schedule(queue);
    return was;
  }

  /** {@link QueueManager#heartbeat}. */
  int heartbeat(String clientId) {
    state.ensureUsable();
    try {
      return consumerGroups.heartbeat(clientId);
    } catch (RuntimeException e) {
      throw StoreErrors.wrap("", "refresh the heartbeats of client " + clientId, e);
    }
  }

  /** {@link QueueManager#consume}. */
  Subscription consume(
      String queue,
      String groupId,
      String consumerId,
      DeliveryHandler handler,
      ConsumeOptions options) {
    state.ensureUsable();
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(handler, "handler");
    Objects.requireNonNull(options, "options");
    if (consumerId == null || consumerId.isEmpty()) {
      throw new IllegalArgumentException("consumerId must be non-empty, got " + consumerId);
    }
    String base =
        groupId == null || groupId.isEmpty()
            ? GroupCoordinator.defaultGroupId(consumerId, options.mode())
            : groupId;
    String effective = GroupCoordinator.effectiveGroupId(base, options.pattern());
    // <= 0: the queue's batchSize, else the manager's deliveryBatchSize, read at the first pass
    int batch = options.batchSize();
    return delivery.register(
        queue,
        effective,
        consumerId,
        () ->
            options.createQueue()
                ? subscribe(queue, options.pattern(), consumerId, base, options.cursor())
                : subscribeExisting(queue, options.pattern(), consumerId, base, options.cursor()),
        handler,
        batch);
  }

  /** {@link QueueManager#awaitAppend}. */
  boolean awaitAppend(String queue, long offset, Duration timeout) throws InterruptedException {
    state.ensureUsable();
    Objects.requireNonNull(timeout, "timeout");
    try {
      return queues.awaitAppend(Objects.requireNonNull(queue, "queue"), offset, timeout);
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(queue, "wait for an append to queue " + queue, e);
    }
  }
}
