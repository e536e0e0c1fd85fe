package io.queuebridge.core;

import java.time.Duration;

/**
 * Runs a {@link QueueManager}'s periodic work: the retention pass, stale-consumer cleanup with
 * ephemeral-queue expiry, and the delivery engine's sweep (SEMANTICS B §3.2 step 9, §3.10).
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
