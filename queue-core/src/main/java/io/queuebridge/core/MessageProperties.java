package io.queuebridge.core;

import java.util.Map;
import java.util.Set;

/**
 * Names of the message properties the queue core reads or stamps (BEHAVIOUR Q-MSG). Reserved names
 * belong to the queue: a publisher's value for one of them is dropped at publish, and delivery
 * stamps them after copying user properties, so they can never be forged.
 */
public final class MessageProperties {
  private MessageProperties() {}

  /** The publishing client's id, added at publish when the request has one. */
  public static final String CLIENT_ID = "client_id";

  /** Delivery id {@code <queue>:<offset>}. Reserved. */
  public static final String MESSAGE_ID = "message-id";

  /** The consumer group a delivery belongs to. Reserved. */
  public static final String GROUP_ID = "group-id";

  /** The queue a delivery comes from. Reserved. */
  public static final String QUEUE = "queue";

  /** The offset of a delivery. Reserved. */
  public static final String OFFSET = "offset";

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

  /** Group id of a commit request. */
  public static final String COMMIT_GROUP_ID = "x-group-id";

  /** Offset of a commit request. */
  public static final String COMMIT_OFFSET = "x-offset";

  /** Reason of a reject. */
  public static final String REASON = "reason";

  /** On a dead letter: the queue the message was dead-lettered from. */
  public static final String DLQ_ORIGINAL_QUEUE = "_dlq_original_queue";

  /** On a dead letter: the topic the original message was published or captured on. */
  public static final String DLQ_ORIGINAL_TOPIC = "_dlq_original_topic";

  /** On a dead letter: the consumer group that gave the message up. */
  public static final String DLQ_GROUP = "_dlq_group";

  /** On a dead letter: how many times the group had delivered the message. */
  public static final String DLQ_DELIVERY_COUNT = "_dlq_delivery_count";

  /** On a dead letter: why it was dead-lettered (rejected with a reason, retries exhausted...). */
  public static final String DLQ_REASON = "_dlq_reason";

  /** On a dead letter: when it was moved, ISO-8601 UTC. */
  public static final String DLQ_MOVED_AT = "_dlq_moved_at";

  /** On a dead letter: the original message's delivery id ({@code <queue>:<offset>}). */
  public static final String DLQ_ORIGINAL_ID = "_dlq_original_id";

  /** On a dead letter: the original message's offset in its queue. */
  public static final String DLQ_ORIGINAL_OFFSET = "_dlq_original_offset";

  /** The dead-letter queue a redriven message came back from (set by a redrive). */
  public static final String REDRIVE_DLQ = "_redrive_dlq";

  /** The message's offset in that dead-letter queue (set by a redrive). */
  public static final String REDRIVE_DLQ_OFFSET = "_redrive_dlq_offset";

  /** When the redrive moved it, ISO-8601 (set by a redrive). */
  public static final String REDRIVEN_AT = "_redriven_at";

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
          FORWARD_TARGETS);

  /** Whether {@code name} is reserved for the queue. */
  public static boolean isReserved(String name) {
    return RESERVED.contains(name);
  }

  /** Whether some key of {@code properties} is reserved. */
  static boolean anyReserved(Map<String, String> properties) {
    if (properties.isEmpty()) {
      return false;
    }
    for (String key : properties.keySet()) {
      if (isReserved(key)) {
        return true;
      }
    }
    return false;
  }
}
