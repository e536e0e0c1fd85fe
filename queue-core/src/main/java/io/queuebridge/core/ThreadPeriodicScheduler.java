package io.queuebridge.core;

import io.queuebridge.core.config.PeriodicScheduler;
import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The manager's own {@link PeriodicScheduler}: one daemon thread, fixed-delay executions (so one
 * task never overlaps itself), shut down by {@link #shutdown()}. Thread-safe.
 */
final class ThreadPeriodicScheduler implements PeriodicScheduler {
  private final ScheduledThreadPoolExecutor executor;

  ThreadPeriodicScheduler(String threadName) {
    executor =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, threadName);
              t.setDaemon(true);
              return t;
            });
    executor.setRemoveOnCancelPolicy(true);
    executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
  }

  @Override
  public Cancellable schedule(String name, Duration period, Runnable task) {
    long nanos = period.toNanos();
    var future = executor.scheduleWithFixedDelay(task, nanos, nanos, TimeUnit.NANOSECONDS);
    return () -> future.cancel(false);
  }

  @Override
  public Cancellable scheduleOnce(String name, Duration delay, Runnable task) {
    var future = executor.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
    return () -> future.cancel(false);
  }

  /** Stops the thread once the running execution, if any, returns. Idempotent; never blocks. */
  void shutdown() {
    executor.shutdown();
  }
}
