package io.queuebridge.core.group;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.errors.DeliveryAlreadySettledException;
import io.queuebridge.core.errors.MessageNotPendingException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One message handed to one consumer of a group, with its settle-once handle (BEHAVIOUR Q-SETTLE).
 *
 * <p><b>Settle once.</b> {@link #ack()}, {@link #nack()}, {@link #nack(Duration)} and {@link
 * #reject(String)} follow the job API's rules (BEHAVIOUR J-SETTLE): the delivery moves from
 * unsettled to settling to settled; a settlement while it is settling or settled throws {@link
 * DeliveryAlreadySettledException}; a settlement that fails (the store failed, the message is no
 * longer held by this delivery) returns it to unsettled and throws.
 *
 * <p><b>Fencing.</b> In queue mode a settlement applies only while the group's pending entry is
 * still the one this delivery created: same consumer and same delivery count. Once the entry was
 * stolen or redelivered (after the visibility timeout or a nack), this stale handle's settlements
 * throw {@link MessageNotPendingException} and change nothing, so a slow consumer can never settle
 * the delivery another consumer is working on. There is no settling of an arbitrary pending offset
 * by any member, and no ack by bare message id across groups: handles replace both.
 *
 * <p><b>Meaning per mode.</b> Queue mode: ack removes the entry and advances the committed offset;
 * nack makes the message claimable again, by any member including this one, after the queue's retry
 * backoff or the given delay, and dead-letters it instead once its retries are exhausted; reject
 * dead-letters it with the reason (or drops it when the queue's DLQ is disabled). Stream mode: ack
 * checkpoints ({@code committed = max(committed, offset + 1)}) when the group auto-commits and does
 * nothing otherwise; nack does nothing (replay is by seeking the cursor); reject moves the cursor
 * and the committed offset past the message.
 *
 * <p><b>Batches.</b> {@link ConsumerGroups#ackAll} acknowledges many deliveries of one group in one
 * locked section, under the same settle-once and fencing rules.
 *
 * <p>Thread-safe. Settlements do store I/O under the group's lock. Implementations are made by the
 * consumer-group engine only; applications do not implement this interface.
 */
public interface GroupDelivery {
  /** The queue the message was claimed from; never null. */
  String queue();

  /** The effective group id; never null. */
  String group();

  /** The member the message was handed to; never null. */
  String consumerId();

  /** The group's mode; never null. */
  GroupMode mode();

  /** The message's offset in the queue. */
  long offset();

  /** Deliveries of this message to the group so far, this one included; always 1 in stream mode. */
  int deliveryCount();

  /**
   * The stored message, as published: its properties are the publisher's (and, on a dead letter,
   * the engine's {@code x-dlq-*} provenance), without the delivery stamps; immutable, never null.
   */
  Message message();

  /**
   * When this delivery was made: the claim (or the steal, or the redelivery after a nack) in queue
   * mode, the read in stream mode. Renewals do not change it. Never null.
   */
  Instant deliveredAt();

  /**
   * When the group first delivered the message: the first claim in queue mode, so that {@code
   * deliveredAt() - firstDeliveredAt()} is how long the message has been retried; equal to {@link
   * #deliveredAt()} in stream mode (every read is a first delivery). Never null.
   */
  Instant firstDeliveredAt();

  /**
   * The properties the queue stamps on this delivery (BEHAVIOUR Q-MSG), by their {@link
   * MessageProperties} names: {@code x-message-id} ({@code <queue>:<offset>}), {@code x-group-id},
   * {@code x-queue}, {@code x-offset} and {@code x-source-topic} (the stored topic) always; in
   * stream mode also {@code x-stream-offset} and, when the message has a creation time, {@code
   * x-stream-timestamp} (epoch milliseconds); and, when the queue names a {@link
   * io.queuebridge.core.config.QueueConfig#primaryGroup() primary group}, {@code x-work-group},
   * {@code x-work-committed-offset} (that group's committed offset when this delivery was read; 0
   * while the group does not exist) and {@code x-work-acked} ({@code true} when this offset is
   * below it). An unmodifiable map in that order, made on each call.
   */
  Map<String, String> deliveryProperties();

  /**
   * The message as a consumer that forwards it should see it: {@link #message()} with {@link
   * #deliveryProperties()} added to its properties (stamps win; a publisher cannot set reserved
   * names). Same key, value, headers and timestamps; made on each call, no bytes copied.
   */
  default Message stampedMessage() {
    Message m = message();
    Map<String, String> props = new LinkedHashMap<>(m.properties());
    props.putAll(deliveryProperties());
    return m.toBuilder().properties(props).buildOwned(); // the arrays are the stored message's
  }

  /** Whether a settlement of this delivery succeeded. */
  boolean isSettled();

  /**
   * Extends this delivery's claim (queue mode) to now plus the visibility timeout, so a long
   * handler keeps the message (the job driver renews while its handler runs). Changes nothing once
   * a settlement of this delivery started or succeeded, so a nack's delay is never pushed back; nor
   * when the claim was already stolen or redelivered (fenced like the settlements); nor in stream
   * mode.
   *
   * @return whether the claim was extended
   * @throws io.queuebridge.core.errors.QueueNotFoundException if the queue does not exist
   */
  boolean renew();

  /**
   * Acknowledges the message.
   *
   * @throws DeliveryAlreadySettledException if already settled or settling
   * @throws MessageNotPendingException if this delivery no longer holds the message (queue mode)
   */
  void ack();

  /**
   * Gives the message back for a retry after the queue's backoff for this attempt (queue mode), or
   * does nothing (stream mode).
   *
   * @throws DeliveryAlreadySettledException if already settled or settling
   * @throws MessageNotPendingException if this delivery no longer holds the message (queue mode)
   */
  void nack();

  /**
   * Gives the message back for a retry after {@code delay} (queue mode; zero = at once), or does
   * nothing (stream mode).
   *
   * @param delay how long the message stays invisible; must not be null or negative
   * @throws IllegalArgumentException if {@code delay} is negative (nothing changes)
   * @throws DeliveryAlreadySettledException if already settled or settling
   * @throws MessageNotPendingException if this delivery no longer holds the message (queue mode)
   */
  void nack(Duration delay);

  /**
   * Refuses the message for good: dead-letters it with {@code reason} (queue mode) or moves the
   * cursor past it (stream mode).
   *
   * @param reason why; recorded in the dead letter's reason property; null means empty
   * @throws DeliveryAlreadySettledException if already settled or settling
   * @throws MessageNotPendingException if this delivery no longer holds the message (queue mode)
   * @throws io.queuebridge.core.errors.QueueStoreException if the dead letter could not be written
   *     (the message stays pending and this delivery unsettled)
   */
  void reject(String reason);
}
