package io.queuebridge.cli;

import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.PendingEntry;
import java.time.Instant;
import java.util.Locale;

/**
 * One consumer group as {@code groups} and {@code describe} show it, all from the group's stored
 * state ({@link ConsumerGroupState}) and the queue's tail.
 *
 * @param group the group's id ({@code group} or {@code group@pattern})
 * @param mode {@code queue} or {@code stream}
 * @param paused whether the group's delivery is paused (BEHAVIOUR Q-PAUSE)
 * @param cursor the next offset the group reads
 * @param committed the group's committed offset
 * @param lag {@code max(0, tail - committed)}: not yet committed, pending included (the definition
 *     of {@code ConsumerGroups.lag})
 * @param pending entries in the group's pending entry list that a member holds (claimed, not
 *     settled)
 * @param scheduled entries no member holds that wait for their due time (read before it: BEHAVIOUR
 *     Q-DELAY), or are due and wait for the next claim (the next message of an ordering key once
 *     the one before it was settled)
 * @param blocked entries of an ordered queue read while an earlier message of their ordering key
 *     was pending, held back until it is settled (BEHAVIOUR Q-ORDER; {@link
 *     PendingEntry#isBlocked})
 * @param redelivered pending entries delivered more than once
 * @param consumers the group's members
 * @param oldestPendingAgeMs how long ago the oldest held pending entry was first delivered; null
 *     when nothing is held
 */
record GroupRow(
    String group,
    String mode,
    boolean paused,
    long cursor,
    long committed,
    long lag,
    int pending,
    int scheduled,
    int blocked,
    int redelivered,
    int consumers,
    Long oldestPendingAgeMs) {

  static final String[] COLUMNS = {
    "GROUP",
    "MODE",
    "PAUSED",
    "CURSOR",
    "COMMITTED",
    "LAG",
    "PENDING",
    "SCHEDULED",
    "BLOCKED",
    "REDELIVERED",
    "CONSUMERS",
    "OLDEST-PENDING-AGE"
  };

  static GroupRow of(ConsumerGroupState g, long tail, Instant now) {
    Instant oldest = null;
    int redelivered = 0;
    int scheduled = 0;
    int blocked = 0;
    for (PendingEntry e : g.pending()) {
      if (e.isBlocked()) {
        blocked++;
        continue;
      }
      if (e.isScheduled()) {
        scheduled++;
        continue;
      }
      if (oldest == null || e.firstClaimedAt().isBefore(oldest)) {
        oldest = e.firstClaimedAt();
      }
      if (e.deliveryCount() > 1) {
        redelivered++;
      }
    }
    return new GroupRow(
        g.id(),
        g.mode().name().toLowerCase(Locale.ROOT),
        g.paused(),
        g.cursor(),
        g.committed(),
        Math.max(0, tail - g.committed()),
        g.pending().size() - scheduled - blocked,
        scheduled,
        blocked,
        redelivered,
        g.consumers().size(),
        Text.millisSince(oldest, now));
  }

  Object[] cells() {
    return new Object[] {
      group,
      mode,
      Text.yesNo(paused),
      cursor,
      committed,
      lag,
      pending,
      scheduled,
      blocked,
      redelivered,
      consumers,
      Text.age(oldestPendingAgeMs)
    };
  }
}
