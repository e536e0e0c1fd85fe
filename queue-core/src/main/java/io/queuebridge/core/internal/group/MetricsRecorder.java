package io.queuebridge.core.internal.group;

import io.queuebridge.core.group.GroupMetrics;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The live counters behind {@link GroupMetrics}.
 *
 * <p><b>Threads.</b> {@code shared} tells how they are written. Single writer (false): every update
 * happens under the {@link GroupCoordinator}'s lock (or in its constructor), so a counter is a
 * plain read-add-write published with a release store (on x86 an ordinary store: no atomic
 * instruction, no fence on the settlement path). Many writers (true, on a store with concurrent
 * claims): claims and acks update them outside the lock, from many threads at once, so each update
 * is one atomic add. {@link #snapshot()} reads without the lock and sees each counter whole, at
 * most a little behind.
 */
final class MetricsRecorder {

  /** One counter. */
  static final class Counter {
    private static final VarHandle VALUE;

    static {
      try {
        VALUE = MethodHandles.lookup().findVarHandle(Counter.class, "value", long.class);
      } catch (ReflectiveOperationException e) {
        throw new ExceptionInInitializerError(e);
      }
    }

    private final boolean shared;
    private volatile long value;

    Counter(boolean shared) {
      this.shared = shared;
    }

    /** Adds {@code delta}; the value after. Single writer: the caller holds the lock. */
    long add(long delta) {
      if (shared) {
        return (long) VALUE.getAndAdd(this, delta) + delta;
      }
      long next = (long) VALUE.getOpaque(this) + delta;
      VALUE.setRelease(this, next);
      return next;
    }

    void increment() {
      add(1);
    }

    /** Sets the value. */
    void set(long v) {
      VALUE.setRelease(this, v);
    }

    /** Raises the value to {@code v} if it is lower. */
    void raise(long v) {
      long seen = value;
      if (!shared) {
        if (v > seen) {
          VALUE.setRelease(this, v);
        }
        return;
      }
      while (v > seen && !VALUE.compareAndSet(this, seen, v)) {
        seen = value;
      }
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
   * while only one was timed, an estimate afterwards. Thread-safe, as {@link Counter}.
   */
  static final class Latency {
    /** One operation in this many is timed; a power of two. */
    static final int SAMPLE = 8;

    private final Counter ops;
    private final Counter timed;
    private final Counter timedNanos;
    private final Counter lateNanos = new Counter(true);

    /** A single-writer latency. */
    Latency() {
      this(false);
    }

    Latency(boolean shared) {
      ops = new Counter(shared);
      timed = new Counter(shared);
      timedNanos = new Counter(shared);
    }

    /** Counts an operation; whether the caller is to time it ({@link #add}). */
    boolean sample() {
      return ((ops.add(1) - 1) & (SAMPLE - 1)) == 0;
    }

    /** Adds the time of an operation {@link #sample} chose. */
    void add(long nanos) {
      timed.increment();
      timedNanos.add(nanos);
    }

    /**
     * Adds time to an operation {@link #add} timed, spent after the lock was released (a
     * settlement's wait for the disk, {@code ConsumerGroupStore#awaitDurable}); any thread, one
     * atomic add.
     */
    void addLate(long nanos) {
      lateNanos.add(nanos);
    }

    /** The estimated total over every operation counted. */
    long sum() {
      long t = timed.sum();
      return t == 0 ? 0 : (long) ((double) (timedNanos.sum() + lateNanos.sum()) * ops.sum() / t);
    }

    void reset() {
      ops.set(0);
      timed.set(0);
      timedNanos.set(0);
      lateNanos.set(0);
    }
  }

  final Counter claimAttempts;
  final Counter claimSuccesses;
  final Counter claimFailures;
  final Counter stealAttempts;
  final Counter stealSuccesses;
  final Counter stealFailures;
  final Counter acks;
  final Counter nacks;
  final Counter rejects;
  final Counter dlqMoves;
  final Counter discarded;
  final Latency claimLatencyNanos;
  final Counter stealLatencyNanos;
  final Latency ackLatencyNanos;
  final Counter scheduled;
  final Counter blocked;
  private final Counter pelSize;
  private final Counter pelHighWater;

  /** {@code shared}: see the class comment. */
  MetricsRecorder(boolean shared) {
    claimAttempts = new Counter(shared);
    claimSuccesses = new Counter(shared);
    claimFailures = new Counter(shared);
    stealAttempts = new Counter(shared);
    stealSuccesses = new Counter(shared);
    stealFailures = new Counter(shared);
    acks = new Counter(shared);
    nacks = new Counter(shared);
    rejects = new Counter(shared);
    dlqMoves = new Counter(shared);
    discarded = new Counter(shared);
    claimLatencyNanos = new Latency(shared);
    stealLatencyNanos = new Counter(shared);
    ackLatencyNanos = new Latency(shared);
    scheduled = new Counter(shared);
    blocked = new Counter(shared);
    pelSize = new Counter(shared);
    pelHighWater = new Counter(shared);
  }

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
    pelHighWater.raise(pelSize.add(delta));
  }

  void setPelSize(long size) {
    pelSize.set(size);
    pelHighWater.raise(size);
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
