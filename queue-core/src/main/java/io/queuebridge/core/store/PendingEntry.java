package io.queuebridge.core.store;

import java.time.Instant;
import java.util.Objects;

/**
 * A message claimed by a consumer of a queue-mode group and not yet settled.
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

  public PendingEntry {
    Objects.requireNonNull(consumerId, "consumerId");
    Objects.requireNonNull(claimedAt, "claimedAt");
    Objects.requireNonNull(firstClaimedAt, "firstClaimedAt");
    Objects.requireNonNull(visibleAt, "visibleAt");
  }

  /** Whether the entry may be claimed again at {@code now}. */
  public boolean isVisible(Instant now) {
    return !now.isBefore(visibleAt);
  }
}
