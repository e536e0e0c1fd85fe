package io.queuebridge.core;

import io.queuebridge.core.config.PeriodicScheduler;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A {@link PeriodicScheduler} driven by a {@link MutableClock}: nothing runs until a test calls
 * {@link #advance}, which moves the clock forward to each due time in turn and runs what fell due
 * on the calling thread (ties in scheduling order). Periodic behaviour becomes deterministic and
 * needs no sleep. Thread-safe; one advance at a time.
 */
public final class ManualScheduler implements PeriodicScheduler {
  private final MutableClock clock;
  private final List<Task> tasks = new ArrayList<>();
  private final Object advancing = new Object();

  public ManualScheduler(MutableClock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  @Override
  public synchronized Cancellable schedule(String name, Duration period, Runnable task) {
    if (period.isZero() || period.isNegative()) {
      throw new IllegalArgumentException("period must be positive: " + period);
    }
    Task t = new Task(name, period, task, clock.instant().plus(period));
    tasks.add(t);
    return () -> {
      synchronized (ManualScheduler.this) {
        t.cancelled = true;
        tasks.remove(t);
      }
    };
  }

  /** Moves the clock forward by {@code d}, running every execution that falls due on the way. */
  public void advance(Duration d) {
    synchronized (advancing) {
      Instant target = clock.instant().plus(d);
      while (true) {
        Task next = nextDue(target);
        if (next == null) {
          break;
        }
        if (next.due.isAfter(clock.instant())) {
          clock.set(next.due);
        }
        next.due = next.due.plus(next.period);
        if (!next.cancelled) {
          next.body.run();
        }
      }
      if (target.isAfter(clock.instant())) {
        clock.set(target);
      }
    }
  }

  /** Names of the scheduled (not cancelled) tasks, in scheduling order. */
  public synchronized List<String> scheduled() {
    return tasks.stream().map(t -> t.name).toList();
  }

  private synchronized Task nextDue(Instant target) {
    Task best = null;
    for (Task t : tasks) {
      if (!t.due.isAfter(target) && (best == null || t.due.isBefore(best.due))) {
        best = t;
      }
    }
    return best;
  }

  private static final class Task {
    final String name;
    final Duration period;
    final Runnable body;
    volatile Instant due;
    volatile boolean cancelled;

    Task(String name, Duration period, Runnable body, Instant due) {
      this.name = name;
      this.period = period;
      this.body = body;
      this.due = due;
    }
  }
}
