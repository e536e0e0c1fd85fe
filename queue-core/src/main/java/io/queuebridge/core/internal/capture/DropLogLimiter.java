package io.queuebridge.core.internal.capture;

import java.time.Clock;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Lets one drop log line through per interval (BEHAVIOUR Q-CAPD: one per 10 s), whatever the number
 * of threads dropping. Lock-free and allocation-free. Thread-safe.
 */
final class DropLogLimiter {
  private final Clock clock;
  private final long intervalMillis;
  private final AtomicLong nextAllowedMillis = new AtomicLong(Long.MIN_VALUE);

  DropLogLimiter(Clock clock, long intervalMillis) {
    this.clock = clock;
    this.intervalMillis = intervalMillis;
  }

  /** Whether the caller may log now; at most one caller per interval gets true. */
  boolean tryAcquire() {
    long now = clock.millis();
    long next = nextAllowedMillis.get();
    return now >= next && nextAllowedMillis.compareAndSet(next, now + intervalMillis);
  }
}
