package io.queuebridge.core;

import io.queuebridge.core.config.AckDurability;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.DurableSyncUnsupportedException;
import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.errors.QueueFullException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.AppendResult;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.topic.TopicFilters;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The strict publish path (BEHAVIOUR Q-PUB, Q-ACK): resolves a request's target queues (forced
 * targets, topic matches, or a queue created on demand through {@link QueueAdministration}) and
 * appends to each with the queue's limits and acknowledgement policy ({@link #appendTo}, which
 * topic capture reuses on its workers). Uses the store's queue log and the {@link DeliveryHook}.
 *
 * <p>Thread-safe: it holds no state that changes after construction and no lock of its own (a queue
 * created on demand goes through {@link QueueAdministration} and the registry's lock).
 */
final class PublishRouter {
  // Logs under the facade's name, which is what operators configure.
  private static final Logger LOG = LoggerFactory.getLogger(QueueManager.class);

  private final LifecycleState state;
  private final Storage storage;
  private final DurableQueueStore queues;
  private final QueueAdministration administration;
  private final Clock clock;
  private final DeliveryHook deliveryHook;
  private final AckDurability defaultAckDurability;
  private final Deduplication dedup;

  /**
   * A router acknowledging with {@code ackDurability} by default; if that is {@code FSYNC} but the
   * store cannot make an append durable, logs a warning and uses {@code BUFFERED}.
   */
  PublishRouter(
      LifecycleState state,
      Storage storage,
      DurableQueueStore queues,
      QueueAdministration administration,
      Clock clock,
      DeliveryHook deliveryHook,
      AckDurability ackDurability,
      Deduplication dedup) {
    this.state = state;
    this.dedup = dedup;
    this.storage = storage;
    this.queues = queues;
    this.administration = administration;
    this.clock = clock;
    this.deliveryHook = deliveryHook;
    if (ackDurability == AckDurability.FSYNC && !queues.supportsDurableSync()) {
      LOG.warn(
          "Ack durability fsync requested but store {} cannot make an append durable;"
              + " acknowledging buffered",
          storage.description());
      this.defaultAckDurability = AckDurability.BUFFERED;
    } else {
      this.defaultAckDurability = ackDurability;
    }
  }

  /** {@link QueueManager#publish}. */
  void publish(PublishRequest request) throws InterruptedException {
    state.ensureUsable();
    Objects.requireNonNull(request, "request");
    TopicFilters.validateTopicName(request.topic());
    Message base = MessageStamping.normalise(request, clock);
    List<QueueConfig> targets = resolveTargets(request);
    QueueException failure = null;
    for (QueueConfig target : targets) {
      try {
        appendTo(target, base);
      } catch (InterruptedException e) {
        if (failure != null) {
          e.addSuppressed(failure);
        }
        throw e;
      } catch (RuntimeException e) {
        QueueException wrapped =
            StoreErrors.wrap(target.name(), "append to queue " + target.name(), e);
        if (failure == null) {
          failure = wrapped;
        } else {
          failure.addSuppressed(wrapped);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** {@link QueueManager#publishTo}. */
  long publishTo(String queue, PublishRequest request) throws InterruptedException {
    state.ensureUsable();
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(request, "request");
    TopicFilters.validateTopicName(request.topic());
    Message base = MessageStamping.normalise(request, clock);
    QueueConfig target = administration.get(queue);
    try {
      return appendTo(target, base);
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(queue, "append to queue " + queue, e);
    }
  }

  /** {@link QueueManager#findMatchingQueues}. */
  List<String> findMatchingQueues(String topic) {
    state.ensureUsable();
    return queues.findMatchingQueues(topic);
  }

  private List<QueueConfig> resolveTargets(PublishRequest request) {
    String forced = request.properties().get(MessageProperties.FORWARD_TARGETS);
    if (forced != null) {
      List<QueueConfig> targets = new ArrayList<>();
      for (String name : parseTargets(forced)) {
        try {
          targets.add(queues.getQueue(name));
        } catch (QueueNotFoundException e) {
          LOG.warn("Publish to {} names unknown target queue {}; skipped", request.topic(), name);
        } catch (RuntimeException e) {
          throw StoreErrors.wrap(name, "get target queue " + name, e);
        }
      }
      return targets;
    }
    List<String> names = findMatching(request.topic());
    if (!names.isEmpty()) {
      return loadMatched(names, request.topic());
    }
    String topic = request.topic();
    String name = topic;
    String filter = topic;
    String root = QueueAdministration.AUTO_QUEUE_ROOT;
    if (topic.startsWith(root)) {
      int end = topic.indexOf('/', root.length());
      String first = topic.substring(root.length(), end < 0 ? topic.length() : end);
      if (!first.isEmpty()) {
        name = first;
        filter = QueueAdministration.autoQueueFilter(first);
      }
    }
    QueueConfig created = administration.getOrCreate(name, filter);
    List<QueueConfig> targets = loadMatched(findMatching(topic), topic);
    return targets.isEmpty() ? List.of(created) : targets;
  }

  /** Comma-separated names, trimmed, empties dropped, duplicates removed, order kept. */
  static Set<String> parseTargets(String list) {
    Set<String> names = new LinkedHashSet<>();
    for (String part : list.split(",", -1)) {
      String name = part.trim();
      if (!name.isEmpty()) {
        names.add(name);
      }
    }
    return names;
  }

  private List<String> findMatching(String topic) {
    try {
      return queues.findMatchingQueues(topic);
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(null, "find queues matching topic " + topic, e);
    }
  }

  private List<QueueConfig> loadMatched(List<String> names, String topic) {
    List<QueueConfig> targets = new ArrayList<>(names.size());
    for (String name : names) {
      try {
        targets.add(queues.getQueue(name));
      } catch (RuntimeException e) {
        LOG.warn(
            "Queue {} matches topic {} but its config cannot be read; skipped", name, topic, e);
      }
    }
    return targets;
  }

  /**
   * The per-target append of publish and capture: limits, then the acknowledgement policy
   * (BEHAVIOUR Q-PUB, L-LIMITS, Q-ACK); a message with a deduplication id to a queue whose window
   * is on goes through the store's deduplicated append (BEHAVIOUR Q-DEDUP) and answers the first
   * offset for a duplicate.
   */
  long appendTo(QueueConfig target, Message base) throws InterruptedException {
    String name = target.name();
    MessageStamping.checkSize(target, base.size());
    if (!target.isStream()) {
      long depth = queues.count(name);
      if (depth >= target.maxDepth()) {
        // A retry of a publish the queue already stored is a duplicate, not a new message: it
        // answers the first offset even when the queue is full (BEHAVIOUR Q-DEDUP).
        OptionalLong first = dedup.rememberedOffset(queues, target, base, clock.instant());
        if (first.isPresent()) {
          return first.getAsLong();
        }
        throw new QueueFullException(name, depth, target.maxDepth());
      }
    }
    Instant now = clock.instant();
    Message message = MessageStamping.stamp(base, target, now);
    boolean sync = effectiveAckDurability(target) == AckDurability.FSYNC && target.durable();
    if (sync && !queues.supportsDurableSync()) {
      throw new DurableSyncUnsupportedException(name, storage.description());
    }
    if (Deduplication.applies(target, message)) {
      AppendResult result = dedup.append(queues, target, message, now, sync);
      if (!result.duplicate()) {
        deliveryHook.schedule(name);
      }
      return result.offset();
    }
    long offset = sync ? queues.appendAndSync(name, message) : queues.append(name, message);
    deliveryHook.schedule(name);
    return offset;
  }

  /**
   * BEHAVIOUR Q-ACK: the queue's override unless {@code DEFAULT} ({@code FSYNC} forced to {@code
   * BUFFERED} when the store cannot sync), else the manager's default (downgraded at construction
   * when the store could not sync then).
   */
  AckDurability effectiveAckDurability(QueueConfig queue) {
    AckDurability override = queue.ackDurability();
    if (override == AckDurability.DEFAULT) {
      return defaultAckDurability;
    }
    if (override == AckDurability.FSYNC && !queues.supportsDurableSync()) {
      return AckDurability.BUFFERED;
    }
    return override;
  }
}
