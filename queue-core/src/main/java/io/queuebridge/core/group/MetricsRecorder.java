package io.queuebridge.core.group;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** The live counters behind {@link GroupMetrics}. Thread-safe. */
final class MetricsRecorder {
  final LongAdder claimAttempts = new LongAdder();
  final LongAdder claimSuccesses = new LongAdder();
  final LongAdder claimFailures = new LongAdder();
  final LongAdder stealAttempts = new LongAdder();
  final LongAdder stealSuccesses = new LongAdder();
  final LongAdder stealFailures = new LongAdder();
  final LongAdder acks = new LongAdder();
  final LongAdder nacks = new LongAdder();
  final LongAdder rejects = new LongAdder();
  final LongAdder dlqMoves = new LongAdder();
  final LongAdder discarded = new LongAdder();
  final LongAdder claimLatencyNanos = new LongAdder();
  final LongAdder stealLatencyNanos = new LongAdder();
  final LongAdder ackLatencyNanos = new LongAdder();
  private final AtomicLong pelSize = new AtomicLong();
  private final AtomicLong pelHighWater = new AtomicLong();

  void claimed(int successes, boolean failedOnce) {
    claimAttempts.add(successes + (failedOnce ? 1 : 0));
    claimSuccesses.add(successes);
    if (failedOnce) {
      claimFailures.increment();
    }
  }

  void stealAttempt(boolean success) {
    stealAttempts.increment();
    (success ? stealSuccesses : stealFailures).increment();
  }

  void pelChanged(long delta) {
    long size = pelSize.addAndGet(delta);
    if (size > pelHighWater.get()) {
      pelHighWater.accumulateAndGet(size, Math::max);
    }
  }

  void setPelSize(long size) {
    pelSize.set(size);
    pelHighWater.accumulateAndGet(size, Math::max);
  }

  GroupMetrics snapshot() {
    return new GroupMetrics(
        claimAttempts.sum(),
        claimSuccesses.sum(),
        claimFailures.sum(),
        stealAttempts.sum(),
        stealSuccesses.sum(),
        stealFailures.sum(),
        acks.sum(),
        nacks.sum(),
        rejects.sum(),
        dlqMoves.sum(),
        discarded.sum(),
        pelSize.get(),
        pelHighWater.get(),
        claimLatencyNanos.sum(),
        stealLatencyNanos.sum(),
        ackLatencyNanos.sum());
  }

  /** Zeroes every counter but the PEL gauge and its high-water mark. */
  void reset() {
    for (LongAdder a :
        new LongAdder[] {
          claimAttempts,
          claimSuccesses,
          claimFailures,
          stealAttempts,
          stealSuccesses,
          stealFailures,
          acks,
          nacks,
          rejects,
          dlqMoves,
          discarded,
          claimLatencyNanos,
          stealLatencyNanos,
          ackLatencyNanos
        }) {
      a.reset();
    }
  }
}
