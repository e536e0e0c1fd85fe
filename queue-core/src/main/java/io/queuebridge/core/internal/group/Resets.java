package io.queuebridge.core.internal.group;

import io.queuebridge.core.errors.GroupHasMembersException;
import io.queuebridge.core.group.OffsetReset;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Operator moves of group positions: an offset reset of one group, and moving every group of a
 * purged queue past what was removed. Runs under the coordinator's lock, inside the group's
 * section.
 */
final class Resets {
  private final QueueStore queues;
  private final ConsumerGroupStore groups;
  private final MetricsRecorder metrics;

  Resets(QueueStore queues, ConsumerGroupStore groups, MetricsRecorder metrics) {
    this.queues = queues;
    this.groups = groups;
    this.metrics = metrics;
  }

  /** What resetting {@code group} to {@code requested} would do; changes nothing. */
  OffsetReset plan(String queue, String group, long requested) {
    ConsumerGroupState g = groups.getGroup(queue, group);
    long head = queues.head(queue);
    long tail = queues.tail(queue);
    long offset = Math.max(head, Math.min(tail, requested));
    return new OffsetReset(
        queue,
        g.id(),
        g.cursor(),
        g.committed(),
        requested,
        offset,
        g.pending().size(),
        List.copyOf(g.consumers().keySet()).stream().sorted().toList(),
        false);
  }

  /**
   * Sets the cursor and the committed offset to the planned offset and drops every pending claim (a
   * claim kept below a cursor moved back would be handed out twice).
   */
  OffsetReset reset(String queue, String group, long requested, boolean force, Instant now) {
    OffsetReset plan = plan(queue, group, requested);
    if (!force && !plan.members().isEmpty()) {
      throw new GroupHasMembersException(queue, group, plan.members());
    }
    ConsumerGroupState g = groups.getGroup(queue, group);
    groups.updateGroup(
        g.withPending(List.of(), now)
            .withCursor(plan.offset(), now)
            .withCommitted(plan.offset(), now));
    metrics.pelChanged(-g.pending().size());
    return new OffsetReset(
        plan.queue(),
        plan.group(),
        plan.previousCursor(),
        plan.previousCommitted(),
        plan.requested(),
        plan.offset(),
        plan.droppedPending(),
        plan.members(),
        true);
  }

  /**
   * After the queue lost every message below {@code head}: moves one group's cursor and committed
   * offset up to it and drops its pending claims below it. Returns how many claims were dropped.
   */
  int movePast(ConsumerGroupState g, long head, Instant now) {
    List<PendingEntry> kept = new ArrayList<>(g.pending().size());
    for (PendingEntry e : g.pending()) {
      if (e.offset() >= head) {
        kept.add(e);
      }
    }
    int dropped = g.pending().size() - kept.size();
    if (dropped == 0 && g.cursor() >= head && g.committed() >= head) {
      return 0;
    }
    groups.updateGroup(
        g.withPending(releaseOrphans(kept, now), now)
            .withCursor(Math.max(g.cursor(), head), now)
            .withCommitted(Math.max(g.committed(), head), now));
    metrics.pelChanged(-dropped);
    return dropped;
  }

  /**
   * {@code kept} (by offset) with, for each ordering key whose only entries left are blocked (the
   * entry they waited for was dropped), the lowest of them visible at {@code now} (BEHAVIOUR
   * Q-ORDER): nothing else would release them.
   */
  static List<PendingEntry> releaseOrphans(List<PendingEntry> kept, Instant now) {
    Set<String> free = new HashSet<>(); // keys with an entry that is not blocked
    for (PendingEntry e : kept) {
      if (e.hasOrderKey() && !e.isBlocked()) {
        free.add(e.orderKey());
      }
    }
    List<PendingEntry> out = new ArrayList<>(kept.size());
    for (PendingEntry e : kept) {
      out.add(e.isBlocked() && free.add(e.orderKey()) ? e.withVisibleAt(now) : e);
    }
    return out;
  }
}
