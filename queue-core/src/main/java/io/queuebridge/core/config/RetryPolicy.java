package io.queuebridge.core.config;

import java.time.Duration;
import java.util.Objects;

/**
 * When a negatively acknowledged message is offered again, and when it is given up on (BEHAVIOUR
 * Q-RETRY).
 *
 * <p>Attempt {@code n} (1-based) waits {@code initialBackoff × backoffMultiplier^(n-1)}, capped at
 * {@code maxBackoff}. After {@code maxRetries} retries, or once {@code totalTimeout} has passed
 * since the first delivery (when positive), the message goes to the dead-letter queue.
 *
 * @param maxRetries retries allowed after the first delivery; {@code >= 0}
 * @param initialBackoff delay before the first retry; {@code >= 0}
 * @param maxBackoff cap on any retry delay; {@code >= initialBackoff}
 * @param backoffMultiplier growth per attempt; {@code >= 1.0}
 * @param totalTimeout give up this long after the first delivery; zero = no limit
 */
public record RetryPolicy(
    int maxRetries,
    Duration initialBackoff,
    Duration maxBackoff,
    double backoffMultiplier,
    Duration totalTimeout) {

  /** 10 retries, 5 s initial, 5 min cap, ×2.0, 24 h total (BEHAVIOUR Q-CONFIG). */
  public static final RetryPolicy DEFAULT =
      new RetryPolicy(10, Duration.ofSeconds(5), Duration.ofMinutes(5), 2.0, Duration.ofHours(24));

  public RetryPolicy {
    Objects.requireNonNull(initialBackoff, "initialBackoff");
    Objects.requireNonNull(maxBackoff, "maxBackoff");
    Objects.requireNonNull(totalTimeout, "totalTimeout");
  }

  /**
   * The delay before retry number {@code attempt} (1-based): {@code initialBackoff ×
   * multiplier^(attempt-1)}, capped at {@code maxBackoff}.
   */
  public Duration backoff(int attempt) {
    if (attempt <= 1) {
      return min(initialBackoff, maxBackoff);
    }
    double nanos = initialBackoff.toNanos() * Math.pow(backoffMultiplier, attempt - 1.0);
    if (Double.isInfinite(nanos) || nanos >= maxBackoff.toNanos()) {
      return maxBackoff;
    }
    return Duration.ofNanos((long) nanos);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
