package io.queuebridge.cli;

import io.queuebridge.core.store.PendingEntry;
import java.time.Instant;

/**
 * One entry of a group's pending entry list, as {@code pending} shows it.
 *
 * @param offset the claimed message's offset
 * @param consumer the member holding it
 * @param deliveries deliveries so far, starting at 1
 * @param claimedAt when it was last claimed (or stolen, or renewed)
 * @param idleMs time since {@code claimedAt}
 * @param firstClaimedAt when it was first delivered
 * @param visibleAt when another member may claim it; null while {@code blocked}
 * @param blocked whether the entry is held back behind an earlier message of its ordering key
 *     (BEHAVIOUR Q-ORDER; {@link PendingEntry#isBlocked}): claimable once that one is settled
 */
record PendingRow(
    long offset,
    String consumer,
    int deliveries,
    Instant claimedAt,
    long idleMs,
    Instant firstClaimedAt,
    Instant visibleAt,
    boolean blocked) {

  static final String[] COLUMNS = {
    "OFFSET", "CONSUMER", "DELIVERIES", "CLAIMED-AT", "IDLE", "FIRST-CLAIMED-AT", "VISIBLE-AT"
  };

  static PendingRow of(PendingEntry e, Instant now) {
    return new PendingRow(
        e.offset(),
        e.consumerId(),
        e.deliveryCount(),
        e.claimedAt(),
        Text.millisSince(e.claimedAt(), now),
        e.firstClaimedAt(),
        e.isBlocked() ? null : e.visibleAt(),
        e.isBlocked());
  }

  Object[] cells() {
    return new Object[] {
      offset,
      consumer,
      deliveries,
      Text.instant(claimedAt),
      Text.age(idleMs),
      Text.instant(firstClaimedAt),
      blocked ? "blocked" : Text.instant(visibleAt)
    };
  }
}
