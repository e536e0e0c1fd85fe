package io.queuebridge.core;

import io.queuebridge.core.config.Names;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueMessageTooLargeException;
import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.MessageState;
import io.queuebridge.core.message.PublishRequest;
import java.time.Clock;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * How a publish request becomes the message a queue stores (BEHAVIOUR Q-MSG, Q-PUB): the request is
 * normalised once ({@link #normalise}), checked against each target's size limit ({@link
 * #checkSize}, BEHAVIOUR L-LIMITS) and stamped per target ({@link #stamp}). Used by every publish
 * path. Stateless apart from the process-wide id sequence; thread-safe.
 */
final class MessageStamping {
  /** Process-wide message id sequence (BEHAVIOUR Q-MSG): not unique across restarts. */
  private static final AtomicLong MESSAGE_IDS = new AtomicLong();

  private MessageStamping() {}

  /**
   * The request as an un-appended message with normalised properties: reserved names removed,
   * {@code x-client-id} added when the request has a client id, {@code x-dedup-id} when it has a
   * deduplication id (BEHAVIOUR Q-DEDUP), {@code x-deliver-at} when it asks for a due time after
   * {@code clock}'s now (a delay is added to that now; BEHAVIOUR Q-DELAY). Key, value and headers
   * are shared with the immutable request; {@link #stamp} copies them per target.
   */
  static Message normalise(PublishRequest request, Clock clock) {
    checkStrings(request);
    Map<String, String> user = request.properties();
    Instant due = null;
    if (request.isDelayed()) {
      Instant now = clock.instant();
      due = request.deliverAt() != null ? request.deliverAt() : plus(now, request.delay());
      if (!due.isAfter(now)) {
        due = null; // due already: an ordinary publish
      }
    }
    if (request.clientId().isEmpty()
        && request.deduplicationId().isEmpty()
        && due == null
        && !request.hasReservedProperty()) {
      return request.asMessage(); // nothing to change; the request's message is immutable
    }
    Map<String, String> props = new LinkedHashMap<>(Math.max(4, user.size() * 2));
    for (Map.Entry<String, String> e : user.entrySet()) {
      if (!MessageProperties.isReserved(e.getKey())) {
        props.put(e.getKey(), e.getValue());
      }
    }
    if (!request.clientId().isEmpty()) {
      props.put(MessageProperties.CLIENT_ID, request.clientId());
    }
    if (!request.deduplicationId().isEmpty()) {
      props.put(MessageProperties.DEDUP_ID, request.deduplicationId());
    }
    if (due != null) {
      props.put(MessageProperties.DELIVER_AT, due.toString());
    }
    Message m = request.asMessage();
    return m.toBuilder().topic(request.topic()).properties(props).buildOwned();
  }

  /**
   * Refuses the strings of a message that no store could write as UTF-8 and read back unchanged:
   * header names, property names and values and the client id with an unpaired surrogate (BEHAVIOUR
   * Q-MSG). Anything else, NUL and control characters included, is kept as given.
   *
   * @throws io.queuebridge.core.errors.InvalidConfigException naming the string and the index
   */
  static void checkStrings(PublishRequest request) {
    List<Header> headers = request.headers();
    for (int i = 0; i < headers.size(); i++) {
      Names.checkUtf8("header name", headers.get(i).key());
    }
    Map<String, String> properties = request.properties();
    if (!properties.isEmpty()) {
      properties.forEach( // not the entry set, which wraps each entry of an unmodifiable map
          (k, v) -> {
            Names.checkUtf8("property name", k);
            Names.checkUtf8("property value", v);
          });
    }
    Names.checkUtf8("clientId", request.clientId());
  }

  /** {@code now + delay}, or {@link Instant#MAX} when that is beyond what an instant holds. */
  private static Instant plus(Instant now, java.time.Duration delay) {
    try {
      return now.plus(delay);
    } catch (ArithmeticException | java.time.DateTimeException tooFar) {
      return Instant.MAX; // refused by checkDelay with the queue's limit
    }
  }

  /**
   * Refuses a message due further ahead of {@code now} than the queue's {@code maxDelay}, or due
   * after it expires (BEHAVIOUR Q-DELAY), with an {@link InvalidConfigException} naming {@code
   * deliverAt}, the time and the limit.
   */
  static void checkDelay(Message base, QueueConfig queue, Instant now) {
    Instant due = base.deliverAt();
    if (due == null || !due.isAfter(now)) {
      return;
    }
    java.time.Duration max = queue.maxDelay();
    if (due.isAfter(now.plus(max))) {
      throw new InvalidConfigException(
          "deliverAt",
          due,
          "at most maxDelay ("
              + max
              + ") after the publish at "
              + now
              + " for queue "
              + queue.name());
    }
    java.time.Duration ttl = queue.messageTtl();
    if (!ttl.isZero() && !ttl.isNegative() && due.isAfter(now.plus(ttl))) {
      throw new InvalidConfigException(
          "deliverAt",
          due,
          "no later than the message's expiry, messageTtl ("
              + ttl
              + ") after the publish at "
              + now
              + " for queue "
              + queue.name());
    }
  }

  /**
   * One target's message: fresh id, the request's bytes, state queued, created now, TTL applied.
   * Refuses a due time the queue does not accept ({@link #checkDelay}).
   */
  static Message stamp(Message base, QueueConfig queue, Instant now) {
    if (!base.properties().isEmpty()) {
      checkDelay(base, queue, now);
    }
    Message.Builder b =
        base.toBuilder()
            .id(Long.toString(MESSAGE_IDS.incrementAndGet()))
            .offset(Message.NO_OFFSET)
            .state(MessageState.QUEUED)
            .createdAt(now)
            .expiresAt(
                queue.messageTtl().isZero() || queue.messageTtl().isNegative()
                    ? null
                    : now.plus(queue.messageTtl()));
    // The request already copied the caller's arrays when it was built and a Message never
    // exposes them for writing, so every target can share them.
    return b.buildOwned();
  }

  /**
   * Refuses a message over the queue's maximum size (BEHAVIOUR L-LIMITS) with {@link
   * QueueMessageTooLargeException}.
   */
  static void checkSize(QueueConfig queue, long size) {
    if (queue.maxMessageSize() <= 0 || size > queue.maxMessageSize()) {
      throw new QueueMessageTooLargeException(queue.name(), queue.maxMessageSize(), size);
    }
  }
}
