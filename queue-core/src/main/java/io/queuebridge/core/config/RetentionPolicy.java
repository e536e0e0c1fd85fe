package io.queuebridge.core.config;

import java.time.Duration;
import java.util.Objects;

/**
 * Kafka-style retention of a queue's log (BEHAVIOUR Q-CONFIG, Q-RET). Each limit is off when zero.
 * Retention only ever limits what committed progress keeps: it never removes uncommitted work of a
 * queue-mode group (BEHAVIOUR Q-RET).
 *
 * @param retentionTime keep messages newer than this (config vocabulary {@code retention.max_age})
 * @param retentionBytes keep at most about this many bytes ({@code retention.max_length_bytes})
 * @param retentionMessages keep at most this many messages ({@code retention.max_length_messages})
 */
public record RetentionPolicy(Duration retentionTime, long retentionBytes, long retentionMessages) {
  /** No limit of any kind. */
  public static final RetentionPolicy NONE = new RetentionPolicy(Duration.ZERO, 0, 0);

  public RetentionPolicy {
    Objects.requireNonNull(retentionTime, "retentionTime");
  }

  /** Whether any of the three limits is set. */
  public boolean isSet() {
    return retentionTime.compareTo(Duration.ZERO) > 0
        || retentionBytes > 0
        || retentionMessages > 0;
  }
}
