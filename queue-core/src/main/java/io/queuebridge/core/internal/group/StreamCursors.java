package io.queuebridge.core.internal.group;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.errors.CommitOffsetOnlyForStreamModeException;
import io.queuebridge.core.errors.InvalidOffsetException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.group.StreamBatch;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.QueueStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The cursors of stream-mode groups (BEHAVIOUR Q-CURSOR, Q-ACKN): peeks, which read from the cursor
 * without moving it, cursor and offset commits, the checkpoints of stream-mode acks and rejects,
 * and the auto-commit throttle (per process: the coordinator's only group state kept between
 * calls).
 *
 * <p>Every method expects the coordinator's lock held (it guards the throttle and the metrics); all
 * but {@link #forgetAutoCommit} also expect to run inside the group's store section. Calls the two
 * stores, {@link Members#touch} (a peek counts as a heartbeat) and the metrics; hands out {@link
 * ClaimedDelivery} handles of the coordinator.
 */
final class StreamCursors {
  private final GroupCoordinator owner;
  private final QueueStore queues;
  private final ConsumerGroupStore groups;
  private final EngineClock time;
  private final Duration autoCommitInterval;
  private final MetricsRecorder metrics;
  private final Members members;

  /** Last auto-commit per (queue, group). */
  private final Map<GroupKey, Instant> lastAutoCommit = new HashMap<>();

  StreamCursors(
      GroupCoordinator owner,
      QueueStore queues,
      ConsumerGroupStore groups,
      EngineClock time,
      Duration autoCommitInterval,
      MetricsRecorder metrics,
      Members members) {
    this.owner = owner;
    this.queues = queues;
    this.groups = groups;
    this.time = time;
    this.autoCommitInterval = autoCommitInterval;
    this.metrics = metrics;
    this.members = members;
  }

  /**
   * Reads up to {@code n} messages from the cursor, skipping expired ones and those the group's
   * filter rejects; {@code start} is the {@link System#nanoTime()} the caller took for the latency.
   */
  StreamBatch peek(String queue, String group, String consumerId, int n, long start) {
    ConsumerGroupState g = groups.getGroup(queue, group);
    GroupCoordinator.requireMode(g, GroupMode.STREAM);
    Instant now = time.at(start);
    members.touch(g, consumerId, now);
    if (g.paused()) {
      return new StreamBatch(List.of(), g.cursor()); // a paused group reads nothing
    }
    long tail = queues.tail(queue);
    long next = Math.max(g.cursor(), queues.head(queue));
    List<GroupDelivery> out = new ArrayList<>(Math.min(n, 64));
    // the primary group's progress is read once per batch, under the lock: every delivery of the
    // batch advertises the same committed offset (BEHAVIOUR Q-MSG)
    String primary = queues.getQueue(queue).primaryGroup();
    String workGroup = null;
    long workCommitted = 0;
    if (!primary.isEmpty()) {
      workGroup = GroupCoordinator.effectiveGroupId(primary, g.pattern());
      workCommitted =
          groups.findGroup(queue, workGroup).map(ConsumerGroupState::committed).orElse(0L);
    }
    int examined = 0;
    scan:
    while (out.size() < n && next < tail && examined < GroupCoordinator.SCAN_LIMIT) {
      List<Message> chunk =
          queues.readBatch(queue, next, Math.min(n - out.size(), GroupCoordinator.SCAN_LIMIT));
      if (chunk.isEmpty()) {
        break;
      }
      for (Message m : chunk) {
        examined++;
        next = m.offset() + 1;
        if (m.isExpired(now) || !RoutingKeys.matches(g.pattern(), queue, m.topic())) {
          continue;
        }
        out.add(
            new ClaimedDelivery(
                owner,
                queue,
                g.id(),
                consumerId,
                GroupMode.STREAM,
                1,
                m,
                now,
                now,
                workGroup,
                workCommitted,
                ""));
        if (out.size() >= n) {
          break scan;
        }
      }
    }
    metrics.claimed(out.size(), out.size() < n);
    return new StreamBatch(out, next);
  }

  /**
   * Moves the cursor forward to {@code next} (never back) and, when the group auto-commits, the
   * committed offset, at most once per {@code autoCommitInterval}.
   */
  void commitCursor(String queue, String group, long next) {
    ConsumerGroupState g = groups.getGroup(queue, group);
    if (g.mode() != GroupMode.STREAM) {
      throw new CommitOffsetOnlyForStreamModeException(queue, group);
    }
    if (next <= g.cursor()) {
      return;
    }
    long tail = queues.tail(queue);
    if (next > tail) {
      throw new IllegalArgumentException(
          "cursor "
              + next
              + " for group "
              + group
              + " is beyond the tail "
              + tail
              + " of queue "
              + queue);
    }
    Instant now = time.now();
    groups.updateCursor(queue, group, next, now);
    if (g.autoCommit() && next > g.committed()) {
      GroupKey key = new GroupKey(queue, group);
      Instant last = lastAutoCommit.get(key);
      if (autoCommitInterval.isZero()
          || last == null
          || !now.isBefore(last.plus(autoCommitInterval))) {
        groups.updateCommitted(queue, group, next, now);
        lastAutoCommit.put(key, now);
      }
    }
  }

  /** Sets the committed offset by hand, up to the cursor; {@code offset >= 0} was checked. */
  void commitOffset(String queue, String group, long offset) {
    ConsumerGroupState g = groups.getGroup(queue, group);
    if (g.mode() != GroupMode.STREAM) {
      throw new CommitOffsetOnlyForStreamModeException(queue, group);
    }
    if (offset > g.cursor()) {
      throw new InvalidOffsetException(queue, group, offset, g.cursor());
    }
    groups.updateCommitted(queue, group, offset, time.now());
  }

  /** A stream-mode ack: {@code committed = max(committed, next)} when the group auto-commits. */
  void checkpoint(String queue, String group, long next, Instant now) {
    ConsumerGroupState g = groups.getGroup(queue, group);
    if (g.autoCommit() && next > g.committed()) {
      groups.updateCommitted(queue, group, next, now);
    }
  }

  /** A stream-mode reject: the cursor and the committed offset move past {@code offset}. */
  void movePast(String queue, String group, long offset, Instant now) {
    ConsumerGroupState g = groups.getGroup(queue, group);
    long past = offset + 1;
    if (past > g.cursor()) {
      groups.updateCursor(queue, group, past, now);
    }
    if (past > g.committed()) {
      groups.updateCommitted(queue, group, past, now);
    }
  }

  /** Forgets the throttle of a deleted group. */
  void forgetAutoCommit(String queue, String group) {
    lastAutoCommit.remove(new GroupKey(queue, group));
  }

  private record GroupKey(String queue, String group) {}
}
