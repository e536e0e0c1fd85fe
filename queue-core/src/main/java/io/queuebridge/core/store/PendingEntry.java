package io.queuebridge.core.store;

import java.time.Instant;
import java.util.Comparator;
import java.util.Objects;

/**
 * A message claimed by a consumer of a queue-mode group and not yet settled, or a message the group
 * has read that is not due yet ({@linkplain #isScheduled() scheduled}, BEHAVIOUR Q-DELAY).
 *
 * <p>A scheduled entry has no holder (the empty {@code consumerId}) and no delivery yet ({@code
 * deliveryCount} 0); its {@code visibleAt} is the message's due time. It keeps the group's
 * committed offset below it like any pending entry, and becomes a first delivery (count 1) when a
 * member claims it at or after its due time. Stores keep it as they keep any entry.
 *
 * @param offset the message's offset
 * @param consumerId the member holding it
 * @param claimedAt when it was last claimed (or stolen, or renewed)
 * @param deliveryCount deliveries so far, starting at 1
 * @param firstClaimedAt when it was first delivered (for the retry policy's total timeout)
 * @param visibleAt when other members (and this one) may claim it again: claim time plus the
 *     visibility timeout, or a nack's retry time
 */
public record PendingEntry(
    long offset,
    String consumerId,
    Instant claimedAt,
    int deliveryCount,
    Instant firstClaimedAt,
    Instant visibleAt) {

  /** The holder of a {@linkplain #isScheduled() scheduled} entry: none, the empty string. */
  public static final String NO_HOLDER = "";

  /**
   * The order of {@link ConsumerGroupStore#duePending}: by {@code visibleAt}, then by offset (a
   * total order within one group, where offsets are unique).
   */
  public static final Comparator<PendingEntry> BY_VISIBILITY =
      (a, b) -> {
        int byTime = a.visibleAt.compareTo(b.visibleAt);
        return byTime != 0 ? byTime : Long.compare(a.offset, b.offset);
      };

  public PendingEntry {
    Objects.requireNonNull(consumerId, "consumerId");
    Objects.requireNonNull(claimedAt, "claimedAt");
    Objects.requireNonNull(firstClaimedAt, "firstClaimedAt");
    Objects.requireNonNull(visibleAt, "visibleAt");
  }

  /**
   * A scheduled entry: the message at {@code offset}, read by the group at {@code readAt}, is due
   * at {@code dueAt} (BEHAVIOUR Q-DELAY).
   */
  public static PendingEntry scheduled(long offset, Instant readAt, Instant dueAt) {
    return new PendingEntry(offset, NO_HOLDER, readAt, 0, readAt, dueAt);
  }

  /** Whether no member holds the entry: a message not due yet when the group read it. */
  public boolean isScheduled() {
    return consumerId.isEmpty();
  }

  /** Whether the entry may be claimed again at {@code now}. */
  public boolean isVisible(Instant now) {
    return !now.isBefore(visibleAt);
  }
}
