package io.queuebridge.core.store;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.Objects;

/**
 * A message claimed by a consumer of a queue-mode group and not yet settled, or a message the group
 * has read that no member holds yet ({@linkplain #isScheduled() scheduled}): one not due yet
 * (BEHAVIOUR Q-DELAY), or one {@linkplain #isBlocked() blocked} behind an earlier message of its
 * ordering key (BEHAVIOUR Q-ORDER).
 *
 * <p>A scheduled entry has no holder (the empty {@code consumerId}) and no delivery yet ({@code
 * deliveryCount} 0); its {@code visibleAt} is the message's due time. It keeps the group's
 * committed offset below it like any pending entry, and becomes a first delivery (count 1) when a
 * member claims it at or after its due time. Stores keep it as they keep any entry.
 *
 * <p>On a queue with an {@linkplain io.queuebridge.core.config.QueueConfig#ordering() ordering}, an
 * entry carries its message's ordering key ({@link #orderKey}; empty when the queue orders nothing
 * or the message has no key). A blocked entry is a scheduled entry visible {@link #NEVER}: the
 * engine makes it visible when the entry of its key before it is settled. Stores keep the key and
 * find entries by it ({@link ConsumerGroupStore#firstPendingByKey}).
 *
 * @param offset the message's offset
 * @param consumerId the member holding it
 * @param claimedAt when it was last claimed (or stolen, or renewed)
 * @param deliveryCount deliveries so far, starting at 1
 * @param firstClaimedAt when it was first delivered (for the retry policy's total timeout)
 * @param visibleAt when other members (and this one) may claim it again: claim time plus the
 *     visibility timeout, or a nack's retry time; {@link #NEVER} while blocked
 * @param orderKey the message's ordering key, or empty for none
 */
public record PendingEntry(
    long offset,
    String consumerId,
    Instant claimedAt,
    int deliveryCount,
    Instant firstClaimedAt,
    Instant visibleAt,
    String orderKey) {

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

  /**
   * The {@code visibleAt} of a {@linkplain #isBlocked() blocked} entry: never claimable until the
   * engine makes it visible ({@link Instant#MAX}).
   */
  public static final Instant NEVER = Instant.MAX;

  /** An entry without an ordering key. */
  public PendingEntry(
      long offset,
      String consumerId,
      Instant claimedAt,
      int deliveryCount,
      Instant firstClaimedAt,
      Instant visibleAt) {
    this(offset, consumerId, claimedAt, deliveryCount, firstClaimedAt, visibleAt, "");
  }

  public PendingEntry {
    Objects.requireNonNull(orderKey, "orderKey");
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

  /**
   * A blocked entry: the message at {@code offset}, read by the group at {@code readAt}, waits for
   * the entry of its ordering key {@code orderKey} before it (BEHAVIOUR Q-ORDER).
   */
  public static PendingEntry blocked(long offset, Instant readAt, String orderKey) {
    return new PendingEntry(offset, NO_HOLDER, readAt, 0, readAt, NEVER, orderKey);
  }

  /**
   * Whether no member holds the entry: a message not due yet when the group read it, or one
   * {@linkplain #isBlocked() blocked} behind its key.
   */
  public boolean isScheduled() {
    return consumerId.isEmpty();
  }

  /** Whether the entry is a scheduled one waiting for an earlier entry of its ordering key. */
  public boolean isBlocked() {
    return consumerId.isEmpty() && visibleAt.equals(NEVER);
  }

  /** Whether the entry carries an ordering key. */
  public boolean hasOrderKey() {
    return !orderKey.isEmpty();
  }

  /**
   * This entry moved to {@code to} ({@link ConsumerGroupStore#transferPending}): claimed at {@code
   * now}, one delivery more, visible again after {@code visibility}; its first delivery and its key
   * kept.
   */
  public PendingEntry transferredTo(String to, Instant now, Duration visibility) {
    return new PendingEntry(
        offset, to, now, deliveryCount + 1, firstClaimedAt, now.plus(visibility), orderKey);
  }

  /**
   * This entry claimed by {@code consumerId} at {@code now} ({@link ConsumerGroupStore#claimDue}):
   * a {@linkplain #isScheduled() scheduled} entry becomes a first delivery (count 1, first claimed
   * now), a held one moves as {@link #transferredTo} moves it; either is visible again after {@code
   * visibility}, its key kept.
   */
  public PendingEntry claimedBy(String consumerId, Instant now, Duration visibility) {
    if (isScheduled()) {
      return new PendingEntry(offset, consumerId, now, 1, now, now.plus(visibility), orderKey);
    }
    return transferredTo(consumerId, now, visibility);
  }

  /** This entry with the ordering key {@code orderKey} ("" for none), otherwise unchanged. */
  public PendingEntry withOrderKey(String orderKey) {
    return new PendingEntry(
        offset, consumerId, claimedAt, deliveryCount, firstClaimedAt, visibleAt, orderKey);
  }

  /** This entry with {@code visibleAt} replaced, otherwise unchanged. */
  public PendingEntry withVisibleAt(Instant visibleAt) {
    return new PendingEntry(
        offset, consumerId, claimedAt, deliveryCount, firstClaimedAt, visibleAt, orderKey);
  }

  /** Whether the entry may be claimed again at {@code now}. */
  public boolean isVisible(Instant now) {
    return !now.isBefore(visibleAt);
  }
}
