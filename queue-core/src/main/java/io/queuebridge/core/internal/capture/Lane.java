package io.queuebridge.core.internal.capture;

import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One bounded FIFO of capture jobs, drained by one worker. Thread-safe.
 *
 * <p>{@link #offer} never waits for space: a full lane refuses the new job, so what the lane holds
 * is always a gap-free prefix of what was offered. {@link #take} waits until a job arrives or the
 * lane is closed and empty. The lane's lock is held only to move a job in or out, never while a job
 * runs.
 */
final class Lane {
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition notEmpty = lock.newCondition();
  private final ArrayDeque<CaptureDispatcher.Job> jobs;
  private final int capacity;
  private boolean closing;

  Lane(int capacity) {
    this.capacity = capacity;
    this.jobs = new ArrayDeque<>(capacity);
  }

  /** Adds the job unless the lane is full; never waits. */
  boolean offer(CaptureDispatcher.Job job) {
    lock.lock();
    try {
      if (jobs.size() >= capacity) {
        return false;
      }
      jobs.addLast(job);
      notEmpty.signal();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The oldest job, waiting for one while the lane is open; null once the lane is closed and empty.
   */
  CaptureDispatcher.Job take() throws InterruptedException {
    lock.lock();
    try {
      while (jobs.isEmpty() && !closing) {
        notEmpty.await();
      }
      return jobs.pollFirst();
    } finally {
      lock.unlock();
    }
  }

  /** The oldest job, or null when empty; never waits. */
  CaptureDispatcher.Job poll() {
    lock.lock();
    try {
      return jobs.pollFirst();
    } finally {
      lock.unlock();
    }
  }

  /** Lets {@link #take} return null once the lane is empty, and wakes a waiting worker. */
  void close() {
    lock.lock();
    try {
      closing = true;
      notEmpty.signalAll();
    } finally {
      lock.unlock();
    }
  }
}
