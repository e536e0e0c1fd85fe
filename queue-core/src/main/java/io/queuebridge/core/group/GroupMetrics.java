package io.queuebridge.core.group;

import io.queuebridge.core.internal.group.GroupCoordinator;

/**
 * A snapshot of a {@link GroupCoordinator}'s counters (BEHAVIOUR Q-METRICS). Counters are monotonic
 * until {@link GroupCoordinator#resetMetrics()}; {@code pelSize} is a gauge and {@code
 * pelHighWater} its maximum, neither of which a reset clears.
 *
 * <p>What counts: a <em>claim attempt</em> is one message asked of a cursor (queue-mode claims and
 * stream reads); it succeeds when a message is handed out and fails when the cursor had nothing
 * more or the PEL was full. A <em>steal attempt</em> is one stealable pending entry examined; it
 * succeeds when the entry moves to the claimer and fails when it is dead-lettered, dropped
 * (expired, truncated) or skipped. Latencies are summed wall-clock nanoseconds of whole claim,
 * steal and ack calls.
 *
 * @param claimAttempts messages asked of a cursor
 * @param claimSuccesses messages handed out from a cursor
 * @param claimFailures attempts that found nothing (end of the log, PEL full)
 * @param stealAttempts stealable entries examined
 * @param stealSuccesses entries moved to a new claimer
 * @param stealFailures entries dead-lettered, dropped or skipped instead
 * @param acks acknowledgements (queue-mode removals and stream checkpoints)
 * @param nacks negative acknowledgements
 * @param rejects rejections
 * @param dlqMoves messages written to a dead-letter queue (rejects and poison)
 * @param discarded settled messages dropped without a dead letter (DLQ disabled, expired while
 *     pending, truncated while pending)
 * @param pelSize pending entries now over all groups, scheduled ones included (gauge)
 * @param pelHighWater the largest {@code pelSize} seen since the coordinator was built
 * @param claimLatencyNanos time spent in claim calls (lock wait included), estimated from a sample:
 *     the first call and one in 8 are timed, and their mean is multiplied by the calls made
 * @param stealLatencyNanos time spent stealing
 * @param ackLatencyNanos time spent in acknowledgements, estimated from a sample as {@code
 *     claimLatencyNanos} is
 * @param scheduled messages a queue-mode claim read before their due time and kept as scheduled
 *     entries until then (BEHAVIOUR Q-DELAY); their delivery at the due time counts as a claim
 *     success
 * @param blocked messages of an ordered queue a queue-mode claim read while an earlier message of
 *     their key was pending, and kept blocked until it was settled (BEHAVIOUR Q-ORDER); their
 *     delivery then counts as a claim success
 */
public record GroupMetrics(
    long claimAttempts,
    long claimSuccesses,
    long claimFailures,
    long stealAttempts,
    long stealSuccesses,
    long stealFailures,
    long acks,
    long nacks,
    long rejects,
    long dlqMoves,
    long discarded,
    long pelSize,
    long pelHighWater,
    long claimLatencyNanos,
    long stealLatencyNanos,
    long ackLatencyNanos,
    long scheduled,
    long blocked) {

  /** Claim successes per attempt; 0 when there were no attempts. */
  public double claimSuccessRate() {
    return claimAttempts == 0 ? 0 : (double) claimSuccesses / claimAttempts;
  }

  /** Steal successes per attempt; 0 when there were no attempts. */
  public double stealSuccessRate() {
    return stealAttempts == 0 ? 0 : (double) stealSuccesses / stealAttempts;
  }

  /** Claim latency per claim attempt, in nanoseconds; 0 when there were no attempts. */
  public double averageClaimLatencyNanos() {
    return claimAttempts == 0 ? 0 : (double) claimLatencyNanos / claimAttempts;
  }

  /** Steal latency per steal attempt, in nanoseconds; 0 when there were no attempts. */
  public double averageStealLatencyNanos() {
    return stealAttempts == 0 ? 0 : (double) stealLatencyNanos / stealAttempts;
  }

  /** Ack latency per ack, in nanoseconds; 0 when there were none. */
  public double averageAckLatencyNanos() {
    return acks == 0 ? 0 : (double) ackLatencyNanos / acks;
  }
}
