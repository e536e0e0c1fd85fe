package io.queuebridge.core.config;

import io.queuebridge.core.errors.InvalidConfigException;
import java.util.Locale;

/** How a publish is acknowledged (BEHAVIOUR Q-ACK). */
public enum AckDurability {
  /** No per-queue override: the manager's default applies. */
  DEFAULT,
  /** Acknowledge after the write reached the operating system; a machine crash may lose it. */
  BUFFERED,
  /** Acknowledge after a durability barrier (fsync) covering the message. */
  FSYNC;

  /**
   * Parses {@code fsync}, {@code buffered} or empty (= {@link #DEFAULT}), case-insensitive and
   * trimmed.
   *
   * @throws InvalidConfigException naming the value otherwise
   */
  public static AckDurability parse(String value) {
    if (value == null || value.isBlank()) {
      return DEFAULT;
    }
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "fsync" -> FSYNC;
      case "buffered" -> BUFFERED;
      default ->
          throw new InvalidConfigException(
              "ackDurability", value, "one of 'fsync', 'buffered' or empty");
    };
  }
}
