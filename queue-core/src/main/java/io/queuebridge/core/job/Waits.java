package io.queuebridge.core.job;

import java.time.Duration;
import java.util.concurrent.locks.Condition;
import java.util.function.IntSupplier;

/** The bounded waits both job drivers' {@code stop} and consumers share. Stateless. */
final class Waits {
  private Waits() {}

  /** {@code d} in nanoseconds, saturated to {@link Long#MIN_VALUE} / {@link Long#MAX_VALUE}. */
  /**
   * The check of a dispatch's delay: not null, not negative.
   *
   * @throws IllegalArgumentException naming the delay if it is negative
   */
  static void checkDelay(Duration delay) {
    java.util.Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException(
          "dispatch delay " + delay + " is negative; expected PT0S (none) or more");
    }
  }

  static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }

  /**
   * Waits on {@code idle} until {@code active} reports no running consumer or {@code timeout}
   * passes. The caller holds the lock {@code idle} belongs to, and has already marked the driver
   * stopped.
   *
   * @return whether every consumer returned in time
   * @throws InterruptedException if the thread is interrupted (checked first); the driver stays
   *     stopped
   */
  static boolean awaitIdle(Condition idle, IntSupplier active, Duration timeout)
      throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException("stop interrupted; the driver is stopped");
    }
    long nanos = saturatedNanos(timeout);
    while (active.getAsInt() > 0) {
      if (nanos <= 0) {
        return false;
      }
      nanos = idle.awaitNanos(nanos);
    }
    return true;
  }
}
