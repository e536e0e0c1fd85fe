package io.queuebridge.core.internal.group;

import java.time.Clock;
import java.time.Instant;

/**
 * The {@link GroupCoordinator}'s time: instants from the injected {@link Clock}, read together with
 * the {@link System#nanoTime()} the latency metrics need, so a settlement pays for one time read at
 * its start instead of two.
 *
 * <p><b>Injected clocks</b> (anything but a system clock: test clocks, offset or fixed clocks) are
 * read on every call, so their instants are exact.
 *
 * <p><b>System clocks</b> ({@link Clock#systemUTC()}, {@link Clock#systemDefaultZone()}): reading
 * the wall clock ({@code Clock.instant()}, a native call) cost as much as the rest of an ack. The
 * wall clock is read at most once per {@link #RESYNC_NANOS} and advanced between reads by the
 * monotonic {@code nanoTime} the caller already took; so an instant may differ from a fresh wall
 * clock read by the drift between the two clocks over at most one resync period (NTP slews at most
 * 0.5 ms per second), and a step of the wall clock shows at the next resync. Instants handed out
 * between resyncs never go backwards.
 *
 * <p>Thread-safe: the anchor is an immutable object in a volatile field; racing resyncs both
 * publish a valid anchor.
 */
final class EngineClock {
  /** Longest interval between two reads of a system clock: 100 ms. */
  static final long RESYNC_NANOS = 100_000_000L;

  private final Clock clock;
  private final boolean derived;
  private volatile Anchor anchor;

  EngineClock(Clock clock) {
    this.clock = clock;
    this.derived = clock.getClass() == Clock.systemUTC().getClass();
  }

  /** The injected clock. */
  Clock clock() {
    return clock;
  }

  /** The clock's instant now. */
  Instant now() {
    return derived ? at(System.nanoTime()) : clock.instant();
  }

  /**
   * The clock's instant at {@code nanoTime}, a {@link System#nanoTime()} value the caller took just
   * now (an injected clock is simply read).
   */
  Instant at(long nanoTime) {
    if (!derived) {
      return clock.instant();
    }
    Anchor a = anchor;
    long elapsed;
    if (a == null || (elapsed = nanoTime - a.nanoTime) < 0 || elapsed >= RESYNC_NANOS) {
      a = new Anchor(System.nanoTime(), clock.instant());
      anchor = a;
      elapsed = Math.max(0, nanoTime - a.nanoTime);
    }
    return elapsed == 0 ? a.instant : a.instant.plusNanos(elapsed);
  }

  private record Anchor(long nanoTime, Instant instant) {}
}
