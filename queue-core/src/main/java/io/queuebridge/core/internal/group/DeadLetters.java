package io.queuebridge.core.internal.group;

import static io.queuebridge.core.message.MessageProperties.DLQ_DELIVERY_COUNT;
import static io.queuebridge.core.message.MessageProperties.DLQ_FIRST_DELIVERED_AT;
import static io.queuebridge.core.message.MessageProperties.DLQ_GROUP;
import static io.queuebridge.core.message.MessageProperties.DLQ_LAST_DELIVERED_AT;
import static io.queuebridge.core.message.MessageProperties.DLQ_MOVED_AT;
import static io.queuebridge.core.message.MessageProperties.DLQ_ORIGINAL_ID;
import static io.queuebridge.core.message.MessageProperties.DLQ_ORIGINAL_OFFSET;
import static io.queuebridge.core.message.MessageProperties.DLQ_ORIGINAL_QUEUE;
import static io.queuebridge.core.message.MessageProperties.DLQ_ORIGINAL_TOPIC;
import static io.queuebridge.core.message.MessageProperties.DLQ_REASON;

import io.queuebridge.core.config.DlqConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.group.GroupSettings;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageState;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStore;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Giving up on a message (BEHAVIOUR Q-RETRY, Q-DLQ): when a pending entry may not be delivered
 * again, and the move of a given-up message to its queue's dead-letter queue (created on first
 * use), or its drop when the queue has no DLQ. The format of a dead letter is described on {@link
 * GroupCoordinator}.
 *
 * <p>Holds no state. {@link #exhausted} and {@link #deadLetter} expect the coordinator's lock held,
 * inside the store section of the group giving the message up; {@link #deadLetterQueue} needs no
 * lock. Calls the queue store and the metrics only.
 */
final class DeadLetters {
  private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);

  private final QueueStore queues;
  private final GroupSettings settings;
  private final MetricsRecorder metrics;

  DeadLetters(QueueStore queues, GroupSettings settings, MetricsRecorder metrics) {
    this.queues = queues;
    this.settings = settings;
    this.metrics = metrics;
  }

  /** The DLQ of a queue: its configured {@code dlq.topic}, else {@code dlqTopicPrefix + name}. */
  String deadLetterQueue(QueueConfig config) {
    String topic = config.dlq().topic();
    return topic.isEmpty() ? settings.dlqTopicPrefix() + config.name() : topic;
  }

  /**
   * Why an entry may not be delivered again, or null if it may: the delivery count reached {@code
   * maxDeliveryCount}, the next delivery would exceed the retry policy's {@code maxRetries}, or its
   * {@code totalTimeout} passed since the first delivery.
   */
  String exhausted(QueueConfig config, PendingEntry e, Instant now) {
    int count = e.deliveryCount();
    if (count >= settings.maxDeliveryCount()) {
      return "max delivery count " + settings.maxDeliveryCount() + " reached";
    }
    RetryPolicy policy = config.retryPolicy();
    if (count > policy.maxRetries()) {
      return "retries exhausted: " + policy.maxRetries() + " allowed after the first delivery";
    }
    Duration total = policy.totalTimeout();
    if (total.compareTo(Duration.ZERO) > 0 && !now.isBefore(e.firstClaimedAt().plus(total))) {
      return "retry total timeout " + total + " passed since the first delivery";
    }
    return null;
  }

  /**
   * Appends a copy of {@code original} to the queue's DLQ, or drops it (counted as discarded) when
   * the queue's DLQ is disabled. Does not touch the pending entry: the caller removes it once this
   * returns.
   *
   * @throws io.queuebridge.core.errors.QueueException if the dead letter cannot be written
   */
  void deadLetter(
      QueueConfig config,
      String group,
      PendingEntry e,
      Message original,
      String reason,
      Instant now) {
    if (!config.dlq().enabled()) {
      LOG.debug(
          "offset {} of group {} on queue {} given up ({}); no dead-letter queue, dropped",
          e.offset(),
          group,
          config.name(),
          reason);
      metrics.discarded.increment();
      return;
    }
    String dlq = deadLetterQueue(config);
    ensureDeadLetterQueue(dlq);
    Map<String, String> props = new LinkedHashMap<>(original.properties());
    props.put(DLQ_ORIGINAL_QUEUE, config.name());
    props.put(DLQ_ORIGINAL_TOPIC, original.topic());
    props.put(DLQ_GROUP, group);
    props.put(DLQ_DELIVERY_COUNT, Integer.toString(e.deliveryCount()));
    props.put(DLQ_REASON, reason);
    props.put(DLQ_MOVED_AT, DateTimeFormatter.ISO_INSTANT.format(now));
    props.put(DLQ_FIRST_DELIVERED_AT, DateTimeFormatter.ISO_INSTANT.format(e.firstClaimedAt()));
    props.put(DLQ_LAST_DELIVERED_AT, DateTimeFormatter.ISO_INSTANT.format(e.claimedAt()));
    if (original.id().isEmpty()) {
      props.remove(DLQ_ORIGINAL_ID);
    } else {
      props.put(DLQ_ORIGINAL_ID, original.id());
    }
    props.put(DLQ_ORIGINAL_OFFSET, Long.toString(original.offset()));
    Message dead =
        original.toBuilder()
            .id(UUID.randomUUID().toString())
            .offset(Message.NO_OFFSET)
            .topic(dlq)
            .state(MessageState.DLQ)
            .createdAt(now)
            .expiresAt(null)
            .properties(props)
            .buildOwned(); // the stored message's arrays are immutable: share, don't copy
    queues.append(dlq, dead);
    metrics.dlqMoves.increment();
    LOG.debug(
        "dead-lettered offset {} of queue {} (group {}) to {}: {}",
        e.offset(),
        config.name(),
        group,
        dlq,
        reason);
  }

  private void ensureDeadLetterQueue(String name) {
    try {
      queues.getQueue(name);
      return;
    } catch (QueueNotFoundException absent) {
      // create it below
    }
    try {
      queues.createQueue(
          QueueConfig.durable(name)
              .topics(name + "/#")
              .dlq(DlqConfig.DISABLED)
              .messageTtl(Duration.ZERO)
              .build());
    } catch (QueueAlreadyExistsException lostRace) {
      // someone else made it
    }
  }
}
