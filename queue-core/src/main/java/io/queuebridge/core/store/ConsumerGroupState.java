package io.queuebridge.core.store;

import io.queuebridge.core.config.GroupMode;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * A snapshot of one consumer group's state. Immutable; stores hand out snapshots and all changes go
 * through {@link ConsumerGroupStore} calls.
 *
 * @param queue the queue the group reads
 * @param id the effective group id ({@code group} or {@code group@pattern})
 * @param pattern the routing-key filter; empty = all
 * @param mode queue or stream mode
 * @param autoCommit whether acknowledging commits (stream mode)
 * @param cursor the next offset to read
 * @param committed the safe truncation point / checkpoint
 * @param pending unsettled claims, one per offset, sorted by offset
 * @param consumers members by id
 * @param createdAt when the group was created
 * @param updatedAt when it last changed
 * @param paused whether the group's delivery is paused: claims and stream reads of a paused group
 *     hand out nothing, while what its members already hold can still be settled
 */
public record ConsumerGroupState(
    String queue,
    String id,
    String pattern,
    GroupMode mode,
    boolean autoCommit,
    long cursor,
    long committed,
    List<PendingEntry> pending,
    Map<String, ConsumerInfo> consumers,
    Instant createdAt,
    Instant updatedAt,
    boolean paused) {

  private static final Comparator<PendingEntry> BY_OFFSET =
      Comparator.comparingLong(PendingEntry::offset);

  public ConsumerGroupState {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(id, "id");
    pattern = Objects.requireNonNullElse(pattern, "");
    Objects.requireNonNull(mode, "mode");
    pending = sortedByOffset(pending);
    consumers = Map.copyOf(consumers);
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(updatedAt, "updatedAt");
  }

  /** A group that is not paused, as every group was before pausing existed. */
  public ConsumerGroupState(
      String queue,
      String id,
      String pattern,
      GroupMode mode,
      boolean autoCommit,
      long cursor,
      long committed,
      List<PendingEntry> pending,
      Map<String, ConsumerInfo> consumers,
      Instant createdAt,
      Instant updatedAt) {
    this(
        queue,
        id,
        pattern,
        mode,
        autoCommit,
        cursor,
        committed,
        pending,
        consumers,
        createdAt,
        updatedAt,
        false);
  }

  /** An unmodifiable copy sorted by offset; sorts only when the input is out of order. */
  private static List<PendingEntry> sortedByOffset(List<PendingEntry> entries) {
    List<PendingEntry> copy = List.copyOf(entries);
    for (int i = 1; i < copy.size(); i++) {
      if (copy.get(i - 1).offset() > copy.get(i).offset()) {
        return copy.stream().sorted(BY_OFFSET).toList();
      }
    }
    return copy;
  }

  /** A new, empty group: cursor = committed = 0 (not at the head), no members, nothing pending. */
  public static ConsumerGroupState create(
      String queue, String id, String pattern, GroupMode mode, boolean autoCommit, Instant now) {
    return new ConsumerGroupState(
        queue, id, pattern, mode, autoCommit, 0, 0, List.of(), Map.of(), now, now);
  }

  /** The pending entry for {@code offset}, if any member holds it. */
  public Optional<PendingEntry> pendingAt(long offset) {
    for (PendingEntry e : pending) {
      if (e.offset() == offset) {
        return Optional.of(e);
      }
    }
    return Optional.empty();
  }

  /** The entries held by {@code consumerId}, by offset. */
  public List<PendingEntry> pendingOf(String consumerId) {
    return pending.stream().filter(e -> e.consumerId().equals(consumerId)).toList();
  }

  public ConsumerGroupState withCursor(long newCursor, Instant now) {
    return new ConsumerGroupState(
        queue,
        id,
        pattern,
        mode,
        autoCommit,
        newCursor,
        committed,
        pending,
        consumers,
        createdAt,
        now,
        paused);
  }

  public ConsumerGroupState withCommitted(long newCommitted, Instant now) {
    return new ConsumerGroupState(
        queue,
        id,
        pattern,
        mode,
        autoCommit,
        cursor,
        newCommitted,
        pending,
        consumers,
        createdAt,
        now,
        paused);
  }

  public ConsumerGroupState withMode(GroupMode newMode, boolean newAutoCommit, Instant now) {
    return new ConsumerGroupState(
        queue,
        id,
        pattern,
        newMode,
        newAutoCommit,
        cursor,
        committed,
        pending,
        consumers,
        createdAt,
        now,
        paused);
  }

  public ConsumerGroupState withPending(List<PendingEntry> newPending, Instant now) {
    return new ConsumerGroupState(
        queue,
        id,
        pattern,
        mode,
        autoCommit,
        cursor,
        committed,
        newPending,
        consumers,
        createdAt,
        now,
        paused);
  }

  public ConsumerGroupState withConsumers(Map<String, ConsumerInfo> newConsumers, Instant now) {
    return new ConsumerGroupState(
        queue,
        id,
        pattern,
        mode,
        autoCommit,
        cursor,
        committed,
        pending,
        newConsumers,
        createdAt,
        now,
        paused);
  }

  /** This state with its delivery paused or resumed. */
  public ConsumerGroupState withPaused(boolean newPaused, Instant now) {
    return new ConsumerGroupState(
        queue,
        id,
        pattern,
        mode,
        autoCommit,
        cursor,
        committed,
        pending,
        consumers,
        createdAt,
        now,
        newPaused);
  }

  /** This state with the entry at {@code offset} replaced by {@code change} (null removes it). */
  public ConsumerGroupState mapPending(
      long offset, UnaryOperator<PendingEntry> change, Instant now) {
    List<PendingEntry> next = new java.util.ArrayList<>(pending.size());
    for (PendingEntry e : pending) {
      if (e.offset() == offset) {
        PendingEntry changed = change.apply(e);
        if (changed != null) {
          next.add(changed);
        }
      } else {
        next.add(e);
      }
    }
    return withPending(next, now);
  }
}
