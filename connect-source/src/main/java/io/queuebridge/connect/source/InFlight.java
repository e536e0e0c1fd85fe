package io.queuebridge.connect.source;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A task's budget of classic-queue messages claimed and not yet acknowledged ({@code
 * max.pending.messages}, {@code max.pending.bytes}). The poll thread asks for {@link #room()}
 * before claiming and waits in {@link #awaitRoom} while there is none; acknowledgements give room
 * back.
 *
 * <p>Thread-safe.
 */
final class InFlight {
  private final int maxMessages;
  private final long maxBytes;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition freed = lock.newCondition();
  private int count;
  private long bytes;

  InFlight(int maxMessages, long maxBytes) {
    this.maxMessages = maxMessages;
    this.maxBytes = maxBytes;
  }

  /** How many messages may be claimed now: 0 while either bound is reached. */
  int room() {
    lock.lock();
    try {
      return bytes >= maxBytes ? 0 : Math.max(0, maxMessages - count);
    } finally {
      lock.unlock();
    }
  }

  void added(long messageBytes) {
    lock.lock();
    try {
      count++;
      bytes += messageBytes;
    } finally {
      lock.unlock();
    }
  }

  void removed(long messageBytes) {
    lock.lock();
    try {
      count--;
      bytes -= messageBytes;
      freed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until there is room or {@code nanos} pass.
   *
   * @return whether there is room
   * @throws InterruptedException if interrupted while waiting
   */
  boolean awaitRoom(long nanos) throws InterruptedException {
    lock.lock();
    try {
      long left = nanos;
      while (room() == 0) {
        if (left <= 0) {
          return false;
        }
        left = freed.awaitNanos(left);
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  int count() {
    lock.lock();
    try {
      return count;
    } finally {
      lock.unlock();
    }
  }

  long bytes() {
    lock.lock();
    try {
      return bytes;
    } finally {
      lock.unlock();
    }
  }
}
