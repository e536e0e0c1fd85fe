package io.queuebridge.core.message;

import io.queuebridge.core.QueueManager;
import java.util.Map;
import java.util.Set;

/**
 * Names of the message properties the queue core reads or stamps (BEHAVIOUR Q-MSG), all in one
 * style: {@code x-} and lower-case words joined by {@code -} ({@code x-dlq-original-queue}), as the
 * Kafka coordinates ({@link KafkaCoordinates}) are. Reserved names belong to the queue: a
 * publisher's value for one of them is dropped at publish, and delivery stamps them after copying
 * user properties, so they can never be forged.
 *
 * <p><b>Stored names of earlier releases.</b> Releases before this convention stored {@code
 * client_id} and the dead-letter provenance as {@code _dlq_original_queue} and so on. The
 * persistent stores read those under today's names ({@link #currentName}), so data written before
 * the change reads as if written now; nothing is rewritten on disk.
 */
public final class MessageProperties {
  private MessageProperties() {}

  /** The publishing client's id, added at publish when the request has one. */
  public static final String CLIENT_ID = "x-client-id";

  /**
   * The publish's deduplication id (BEHAVIOUR Q-DEDUP), stamped from {@link
   * PublishRequest#deduplicationId()} when the request has one; the stores find a queue's
   * remembered ids by it. Reserved: a publisher's raw property of this name is dropped.
   */
  public static final String DEDUP_ID = "x-dedup-id";

  /**
   * The message's due time (BEHAVIOUR Q-DELAY), ISO-8601 UTC, stamped at publish from {@link
   * PublishRequest#deliverAt()} when the request has a delay: a classic queue hands the message to
   * no consumer before it; stream readers see it as data. Reserved: a publisher sets it only
   * through the request's {@code deliverAt} or {@code delay}.
   */
  public static final String DELIVER_AT = "x-deliver-at";

  /** Delivery id {@code <queue>:<offset>}. Reserved. */
  public static final String MESSAGE_ID = "x-message-id";

  /** The consumer group a delivery belongs to. Reserved. */
  public static final String GROUP_ID = "x-group-id";

  /** The queue a delivery comes from. Reserved. */
  public static final String QUEUE = "x-queue";

  /** The offset of a delivery. Reserved. */
  public static final String OFFSET = "x-offset";

  /** The topic the message was published or captured on. Reserved. */
  public static final String SOURCE_TOPIC = "x-source-topic";

  /** A stream delivery's offset. Reserved. */
  public static final String STREAM_OFFSET = "x-stream-offset";

  /** A stream delivery's creation time in epoch milliseconds. Reserved. */
  public static final String STREAM_TIMESTAMP = "x-stream-timestamp";

  /** The primary group's committed offset on a stream delivery. Reserved. */
  public static final String WORK_COMMITTED_OFFSET = "x-work-committed-offset";

  /** Whether the primary group has committed past a stream delivery. Reserved. */
  public static final String WORK_ACKED = "x-work-acked";

  /** The primary group named on a stream delivery. Reserved. */
  public static final String WORK_GROUP = "x-work-group";

  /**
   * Comma-separated queue names a publish is addressed to instead of routing by topic. Read by
   * {@link QueueManager#publish} as the target list, then removed: it is never stored. Reserved.
   */
  public static final String FORWARD_TARGETS = "x-queue-forward-targets";

  /** On a dead letter: the queue the message was dead-lettered from. */
  public static final String DLQ_ORIGINAL_QUEUE = "x-dlq-original-queue";

  /** On a dead letter: the topic the original message was published or captured on. */
  public static final String DLQ_ORIGINAL_TOPIC = "x-dlq-original-topic";

  /** On a dead letter: the consumer group that gave the message up. */
  public static final String DLQ_GROUP = "x-dlq-group";

  /** On a dead letter: how many times the group had delivered the message. */
  public static final String DLQ_DELIVERY_COUNT = "x-dlq-delivery-count";

  /** On a dead letter: why it was dead-lettered (rejected with a reason, retries exhausted...). */
  public static final String DLQ_REASON = "x-dlq-reason";

  /** On a dead letter: when it was moved, ISO-8601 UTC. */
  public static final String DLQ_MOVED_AT = "x-dlq-moved-at";

  /** On a dead letter: when the group first delivered the message, ISO-8601 UTC. */
  public static final String DLQ_FIRST_DELIVERED_AT = "x-dlq-first-delivered-at";

  /** On a dead letter: when the group last delivered (claimed) it, ISO-8601 UTC. */
  public static final String DLQ_LAST_DELIVERED_AT = "x-dlq-last-delivered-at";

  /** On a dead letter: the original message's delivery id ({@code <queue>:<offset>}). */
  public static final String DLQ_ORIGINAL_ID = "x-dlq-original-id";

  /** On a dead letter: the original message's offset in its queue. */
  public static final String DLQ_ORIGINAL_OFFSET = "x-dlq-original-offset";

  /** The dead-letter queue a redriven message came back from (set by a redrive). */
  public static final String REDRIVE_DLQ = "x-redrive-dlq";

  /** The message's offset in that dead-letter queue (set by a redrive). */
  public static final String REDRIVE_DLQ_OFFSET = "x-redrive-dlq-offset";

  /** When the redrive moved it, ISO-8601 (set by a redrive). */
  public static final String REDRIVEN_AT = "x-redriven-at";

  /** Names stored by earlier releases, each with the name it reads as now. */
  public static final Map<String, String> LEGACY_STORED_NAMES =
      Map.ofEntries(
          Map.entry("client_id", CLIENT_ID),
          Map.entry("_dlq_original_queue", DLQ_ORIGINAL_QUEUE),
          Map.entry("_dlq_original_topic", DLQ_ORIGINAL_TOPIC),
          Map.entry("_dlq_group", DLQ_GROUP),
          Map.entry("_dlq_delivery_count", DLQ_DELIVERY_COUNT),
          Map.entry("_dlq_reason", DLQ_REASON),
          Map.entry("_dlq_moved_at", DLQ_MOVED_AT),
          Map.entry("_dlq_original_id", DLQ_ORIGINAL_ID),
          Map.entry("_dlq_original_offset", DLQ_ORIGINAL_OFFSET));

  /**
   * The name a stored property reads as: today's name for one an earlier release stored ({@link
   * #LEGACY_STORED_NAMES}), else {@code stored} itself. Cheap for every other name (one character
   * test), so that stores call it for every property they decode.
   */
  public static String currentName(String stored) {
    if (stored.isEmpty() || (stored.charAt(0) != '_' && stored.charAt(0) != 'c')) {
      return stored;
    }
    return LEGACY_STORED_NAMES.getOrDefault(stored, stored);
  }

  /** Every reserved name (BEHAVIOUR Q-MSG). */
  public static final Set<String> RESERVED =
      Set.of(
          MESSAGE_ID,
          GROUP_ID,
          QUEUE,
          OFFSET,
          SOURCE_TOPIC,
          STREAM_OFFSET,
          STREAM_TIMESTAMP,
          WORK_COMMITTED_OFFSET,
          WORK_ACKED,
          WORK_GROUP,
          FORWARD_TARGETS,
          DEDUP_ID,
          DELIVER_AT);

  /** Whether {@code name} is reserved for the queue. */
  public static boolean isReserved(String name) {
    return RESERVED.contains(name);
  }
}
