package io.queuebridge.core.internal.group;

import io.queuebridge.core.group.GroupMetrics;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The live counters behind {@link GroupMetrics}.
 *
 * <p><b>Threads.</b> Single writer: every update happens under the {@link GroupCoordinator}'s lock
 * (or in its constructor), so a counter is a plain read-add-write published with a release store
 * (on x86 an ordinary store: no atomic instruction, no fence on the settlement path); {@link
 * #snapshot()} reads without the lock and sees each counter whole, at most a little behind.
 */
final class MetricsRecorder {

  /** One single-writer counter. */
  static final class Counter {
    private static final VarHandle VALUE;

    static {
      try {
        VALUE = MethodHandles.lookup().findVarHandle(Counter.class, "value", long.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private volatile long value;

    /** Adds {@code delta}; the caller holds the coordinator's lock. */
    void add(long delta) {
      VALUE.setRelease(this, (long) VALUE.getOpaque(this) + delta);
    }

    void increment() {
      add(1);
    }

    /** Sets the value; the caller holds the coordinator's lock. */
    void set(long v) {
      VALUE.setRelease(this, v);
    }

    long sum() {
      return value;
    }
  }

  /**
   * A latency total timed on a sample of the operations: the first and then one in {@link #SAMPLE},
   * so most operations read the clock once (at their start, which they need anyway) instead of
   * twice. Reading the clock cost about a quarter of a per-message ack on the memory store
   * (docs/perf/groups.md). {@link #sum()} is the sampled mean times the operations counted: exact
   * while only one was timed, an estimate afterwards. Single writer, as {@link Counter}.
   */
  static final class Latency {
    /** One operation in this many is timed; a power of two. */
    static final int SAMPLE = 8;

    private final Counter ops = new Counter();
    private final Counter timed = new Counter();
    private final Counter timedNanos = new Counter();

    /** Counts an operation; whether the caller is to time it ({@link #add}). Under the lock. */
    boolean sample() {
      long n = ops.sum();
      ops.set(n + 1);
      return (n & (SAMPLE - 1)) == 0;
    }

    /** Adds the time of an operation {@link #sample} chose. Under the lock. */
    void add(long nanos) {
      timed.increment();
      timedNanos.add(nanos);
    }

    /** The estimated total over every operation counted. */
    long sum() {
      long t = timed.sum();
      return t == 0 ? 0 : (long) ((double) timedNanos.sum() * ops.sum() / t);
    }

    void reset() {
      ops.set(0);
      timed.set(0);
      timedNanos.set(0);
    }
  }

  final Counter claimAttempts = new Counter();
  final Counter claimSuccesses = new Counter();
  final Counter claimFailures = new Counter();
  final Counter stealAttempts = new Counter();
  final Counter stealSuccesses = new Counter();
  final Counter stealFailures = new Counter();
  final Counter acks = new Counter();
  final Counter nacks = new Counter();
  final Counter rejects = new Counter();
  final Counter dlqMoves = new Counter();
  final Counter discarded = new Counter();
  final Latency claimLatencyNanos = new Latency();
  final Counter stealLatencyNanos = new Counter();
  final Latency ackLatencyNanos = new Latency();
  final Counter scheduled = new Counter();
  final Counter blocked = new Counter();
  private final Counter pelSize = new Counter();
  private final Counter pelHighWater = new Counter();

  void claimed(int successes, boolean failedOnce) {
    claimAttempts.add(successes + (failedOnce ? 1 : 0));
    claimSuccesses.add(successes);
    if (failedOnce) {
      claimFailures.increment();
    }
  }

  /** {@code n} messages read before their due time (BEHAVIOUR Q-DELAY). */
  void scheduled(int n) {
    scheduled.add(n);
  }

  void stealAttempt(boolean success) {
    stealAttempts.increment();
    (success ? stealSuccesses : stealFailures).increment();
  }

  void pelChanged(long delta) {
    pelSize.add(delta);
    long size = pelSize.sum();
    if (size > pelHighWater.sum()) {
      pelHighWater.set(size);
    }
  }

  void setPelSize(long size) {
    pelSize.set(size);
    if (size > pelHighWater.sum()) {
      pelHighWater.set(size);
    }
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
        pelSize.sum(),
        pelHighWater.sum(),
        claimLatencyNanos.sum(),
        stealLatencyNanos.sum(),
        ackLatencyNanos.sum(),
        scheduled.sum(),
        blocked.sum());
  }

  /** Zeroes every counter but the PEL gauge and its high-water mark; under the lock. */
  void reset() {
    for (Counter c :
        new Counter[] {
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
          stealLatencyNanos,
          scheduled,
          blocked
        }) {
      c.set(0);
    }
    claimLatencyNanos.reset();
    ackLatencyNanos.reset();
  }
}
