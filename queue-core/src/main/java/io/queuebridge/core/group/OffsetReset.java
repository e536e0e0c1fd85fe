package io.queuebridge.core.group;

import java.util.List;
import java.util.Objects;

/**
 * What an offset reset of one consumer group does, or did: the group's position before, the offset
 * asked for and the one it moves to (the request clamped to the queue's readable range, as Kafka's
 * {@code kafka-consumer-groups --reset-offsets} clamps), the pending claims it drops and the
 * members it found.
 *
 * @param queue the queue
 * @param group the effective group id
 * @param previousCursor the group's cursor before the reset
 * @param previousCommitted the group's committed offset before the reset
 * @param requested the offset asked for
 * @param offset the new cursor and committed offset: {@code requested} clamped to {@code [head,
 *     tail]}
 * @param droppedPending the pending claims the reset drops (their messages are delivered again if
 *     they are at or after {@code offset})
 * @param members the group's members at the time (their open deliveries can no longer be settled)
 * @param executed false for a plan ({@link ConsumerGroups#planOffsetReset}), true once applied
 */
public record OffsetReset(
    String queue,
    String group,
    long previousCursor,
    long previousCommitted,
    long requested,
    long offset,
    int droppedPending,
    List<String> members,
    boolean executed) {

  public OffsetReset {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(group, "group");
    members = List.copyOf(members);
  }

  /** Whether the requested offset was outside the readable range and was clamped. */
  public boolean clamped() {
    return requested != offset;
  }
}
