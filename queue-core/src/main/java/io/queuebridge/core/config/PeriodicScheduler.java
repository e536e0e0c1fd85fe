package io.queuebridge.core.config;

import io.queuebridge.core.QueueManager;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs a {@link QueueManager}'s periodic work: the retention pass, stale-consumer cleanup with
 * ephemeral-queue expiry, and the delivery engine's sweep (BEHAVIOUR M-LOOPS, Q-DEL).
 *
 * <p>When a configuration names none, the manager runs its loops on one daemon thread of its own,
 * started by {@link QueueManager#start()} and ended by {@link QueueManager#stop()}. Inject one to
 * share a thread between components or to drive the loops from a test clock: a test scheduler that
 * moves a mutable {@link java.time.Clock} and runs what fell due makes every periodic behaviour
 * deterministic without sleeping.
 *
 * <p>Implementations must be thread-safe: {@code schedule} and {@link Cancellable#cancel()} may be
 * called from any thread. The manager never relies on a task running at an exact time, only on it
 * running about once per period.
 */
@FunctionalInterface
public interface PeriodicScheduler {

  /**
   * Arranges for {@code task} to run about every {@code period}, the first time about one period
   * from now, until the returned handle is cancelled. Executions of one task must not overlap. The
   * manager's tasks catch their own failures and never throw. Must not block.
   *
   * @param name a short name for threads and logs ({@code retention}, {@code delivery-sweep}, ...)
   * @param period positive
   * @param task what to run
   * @return the handle that stops further executions
   */
  Cancellable schedule(String name, Duration period, Runnable task);

  /**
   * Arranges for {@code task} to run once, about {@code delay} from now, unless the returned handle
   * is cancelled first (the delivery engine's redelivery timers). Must not block.
   *
   * <p>The default runs it through {@link #schedule} with {@code delay} as the period and cancels
   * that periodic task at its first execution, so a scheduler that implements only {@code schedule}
   * (a test scheduler on a manual clock) gets one-shot timers on the same clock.
   *
   * @param delay positive
   */
  default Cancellable scheduleOnce(String name, Duration delay, Runnable task) {
    AtomicBoolean done = new AtomicBoolean();
    AtomicReference<Cancellable> periodic = new AtomicReference<>();
    Cancellable handle =
        schedule(
            name,
            delay,
            () -> {
              if (done.compareAndSet(false, true)) {
                Cancellable p = periodic.get();
                if (p != null) {
                  p.cancel();
                }
                task.run();
              }
            });
    periodic.set(handle);
    if (done.get()) {
      handle.cancel(); // ran before the handle was stored
    }
    return () -> {
      done.set(true);
      handle.cancel();
    };
  }

  /** Stops further executions of one scheduled task. */
  @FunctionalInterface
  interface Cancellable {

    /**
     * Stops further executions; an execution already running may finish (the manager waits for its
     * own tasks itself). Idempotent; never blocks.
     */
    void cancel();
  }
}
