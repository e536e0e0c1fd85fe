package io.queuebridge.core.job;

import io.queuebridge.core.errors.InvalidHandlerException;
import io.queuebridge.core.errors.InvalidQueueException;
import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What both job drivers' {@code consume} shares: its argument checks (BEHAVIOUR J-CONS) and the
 * count of running consumers that {@code stop} waits for (BEHAVIOUR J-STOP). The count is guarded
 * by the driver's own lock, passed in, so a driver can change its state and the count in one locked
 * section. Thread-safe.
 */
final class ActiveConsumers {
  private final ReentrantLock lock;
  private final Condition idle;
  private int running; // guarded by lock

  ActiveConsumers(ReentrantLock lock) {
    this.lock = lock;
    this.idle = lock.newCondition();
  }

  /**
   * The checks of {@code consume}, in order: a pending interrupt, the queue name, the handler.
   *
   * @throws InterruptedException if the thread was interrupted (the flag is cleared)
   * @throws InvalidQueueException if {@code queue} is null or empty
   * @throws InvalidHandlerException if {@code handler} is null
   */
  static void checkConsume(String queue, JobHandler handler) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException("consume interrupted");
    }
    if (queue == null || queue.isEmpty()) {
      throw new InvalidQueueException("consume", queue);
    }
    if (handler == null) {
      throw new InvalidHandlerException(queue);
    }
  }

  /**
   * Counts one consumer in. Every successful call must be followed by one {@link #leave()}.
   *
   * @param closed whether the driver is closed, read under the lock
   * @param closedError the error to throw when it is; nothing is counted then
   */
  void enter(BooleanSupplier closed, Supplier<? extends RuntimeException> closedError) {
    lock.lock();
    try {
      if (closed.getAsBoolean()) {
        throw closedError.get();
      }
      running++;
    } finally {
      lock.unlock();
    }
  }

  /** Counts one consumer out; wakes {@link #awaitNone} when it was the last. */
  void leave() {
    lock.lock();
    try {
      if (--running == 0) {
        idle.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until no consumer runs or {@code timeout} passes. The driver is already marked closed.
   * May be called with the driver's lock held (it is reentrant).
   *
   * @return whether every consumer returned in time
   * @throws InterruptedException if the thread is interrupted (checked first); the driver stays
   *     closed
   */
  boolean awaitNone(Duration timeout) throws InterruptedException {
    lock.lock();
    try {
      return Waits.awaitIdle(idle, () -> running, timeout);
    } finally {
      lock.unlock();
    }
  }
}
