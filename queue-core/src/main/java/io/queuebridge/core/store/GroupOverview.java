package io.queuebridge.core.store;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Message;
import java.util.List;
import java.util.Objects;

/**
 * A consumer group without its pending entries, and what a queue-mode claim needs to know of them
 * ({@link ConsumerGroupStore#overview}): how many there are, how many of them are {@linkplain
 * PendingEntry#isScheduled() scheduled}, and the highest pending offset. A claim reads this instead
 * of the whole group, so its cost does not grow with the pending entry list.
 *
 * <p>A store that reads the queue's configuration in the same snapshot as the group (the PostgreSQL
 * store: in the same statement) may return it too, and the claim then does not read it with {@link
 * QueueStore#getQueue} (one round trip fewer per claim on a database).
 *
 * @param group the group's state with an empty {@link ConsumerGroupState#pending()} list
 * @param pending entries in the group's pending entry list, scheduled ones included
 * @param scheduled the scheduled entries among them
 * @param highestPendingOffset the highest offset of a pending entry; -1 when there is none
 * @param blocked the scheduled entries that are {@linkplain PendingEntry#isBlocked() blocked}
 *     behind their ordering key (BEHAVIOUR Q-ORDER)
 * @param queueConfig the configuration of the group's queue as {@link QueueStore#getQueue} would
 *     return it, read with the group; {@code null} when the store did not read it (the caller reads
 *     it itself)
 * @param fromCursor the messages {@link QueueStore#readBatch readBatch(queue, cursor, limit)}
 *     returns for the group's cursor, read with the group in the same round trip when asked for
 *     ({@link ConsumerGroupStore#overview(String, String, int)}); {@code null} when the store did
 *     not read them (the caller reads them itself)
 * @param fromCursorLimit the {@code limit} {@code fromCursor} was read with; 0 when it was not
 */
public record GroupOverview(
    ConsumerGroupState group,
    int pending,
    int scheduled,
    long highestPendingOffset,
    int blocked,
    QueueConfig queueConfig,
    List<Message> fromCursor,
    int fromCursorLimit) {

  public GroupOverview {
    fromCursor = fromCursor == null ? null : List.copyOf(fromCursor);
    if ((fromCursor == null) != (fromCursorLimit == 0) || fromCursorLimit < 0) {
      throw new IllegalArgumentException(
          "fromCursorLimit "
              + fromCursorLimit
              + (fromCursor == null ? " without messages" : " with messages")
              + ": expected 0 exactly when no messages were read, else their positive limit");
    }
    if (fromCursor != null && fromCursor.size() > fromCursorLimit) {
      throw new IllegalArgumentException(
          fromCursor.size()
              + " messages from the cursor read with limit "
              + fromCursorLimit
              + ": expected at most the limit");
    }
    Objects.requireNonNull(group, "group");
    if (queueConfig != null && !queueConfig.name().equals(group.queue())) {
      throw new IllegalArgumentException(
          "the overview of a group of queue "
              + group.queue()
              + " carries the configuration of queue "
              + queueConfig.name()
              + ": expected the group's own queue");
    }
    if (!group.pending().isEmpty()) {
      throw new IllegalArgumentException(
          "the overview's group state carries no pending entries; got " + group.pending().size());
    }
    if (pending < 0 || scheduled < 0 || scheduled > pending) {
      throw new IllegalArgumentException(
          "pending "
              + pending
              + " and scheduled "
              + scheduled
              + ": expected 0 <= scheduled <= pending");
    }
    if (blocked < 0 || blocked > scheduled) {
      throw new IllegalArgumentException(
          "blocked "
              + blocked
              + " of "
              + scheduled
              + " scheduled: expected 0 <= blocked <= scheduled");
    }
    if ((pending == 0) != (highestPendingOffset < 0)) {
      throw new IllegalArgumentException(
          "highestPendingOffset "
              + highestPendingOffset
              + " with "
              + pending
              + " pending: expected -1 exactly when nothing is pending");
    }
  }

  /** An overview without the queue's configuration. */
  public GroupOverview(
      ConsumerGroupState group,
      int pending,
      int scheduled,
      long highestPendingOffset,
      int blocked) {
    this(group, pending, scheduled, highestPendingOffset, blocked, null, null, 0);
  }

  /** An overview with the queue's configuration (or {@code null}), without messages. */
  public GroupOverview(
      ConsumerGroupState group,
      int pending,
      int scheduled,
      long highestPendingOffset,
      int blocked,
      QueueConfig queueConfig) {
    this(group, pending, scheduled, highestPendingOffset, blocked, queueConfig, null, 0);
  }

  /** This overview with the queue's configuration {@code config}, read in the same snapshot. */
  public GroupOverview withQueueConfig(QueueConfig config) {
    return new GroupOverview(
        group,
        pending,
        scheduled,
        highestPendingOffset,
        blocked,
        Objects.requireNonNull(config),
        fromCursor,
        fromCursorLimit);
  }

  /**
   * This overview with {@code messages}, what {@code readBatch(queue, cursor, limit)} returned for
   * the group's cursor, read in the same round trip.
   */
  public GroupOverview withFromCursor(List<Message> messages, int limit) {
    return new GroupOverview(
        group,
        pending,
        scheduled,
        highestPendingOffset,
        blocked,
        queueConfig,
        Objects.requireNonNull(messages, "messages"),
        limit);
  }

  /** The overview of {@code g}, computed from its pending entries. */
  public static GroupOverview of(ConsumerGroupState g) {
    List<PendingEntry> pending = g.pending();
    int scheduled = 0;
    int blocked = 0;
    for (PendingEntry e : pending) {
      if (e.isScheduled()) {
        scheduled++;
      }
      if (e.isBlocked()) {
        blocked++;
      }
    }
    long highest = pending.isEmpty() ? -1 : pending.get(pending.size() - 1).offset();
    return new GroupOverview(
        g.withPending(List.of(), g.updatedAt()), pending.size(), scheduled, highest, blocked);
  }

  /**
   * Scheduled entries that are not blocked: messages not due when read, or released by their key;
   * some may be claimable now.
   */
  public int waiting() {
    return scheduled - blocked;
  }

  /** Entries a member holds: the pending ones that are not scheduled. */
  public int held() {
    return pending - scheduled;
  }
}
