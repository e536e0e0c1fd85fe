package io.queuebridge.core.config;

import io.queuebridge.core.errors.InvalidConfigException;

/** The two kinds of queue (BEHAVIOUR Q-TYPES). */
public enum QueueType {
  /** A work queue: each message goes to one consumer of a group, tracked until acknowledged. */
  CLASSIC,
  /** An append-only log read by cursor; acknowledging is checkpointing. */
  STREAM;

  /**
   * Parses a configured type: {@code classic} or {@code stream}, case-insensitive; an empty or null
   * value is {@link #CLASSIC} (an empty type means classic).
   *
   * @throws InvalidConfigException naming the value when it is neither
   */
  public static QueueType parse(String value) {
    if (value == null || value.isBlank()) {
      return CLASSIC;
    }
    return switch (value.trim().toLowerCase(java.util.Locale.ROOT)) {
      case "classic" -> CLASSIC;
      case "stream" -> STREAM;
      default ->
          throw new InvalidConfigException(
              "type", value, "queue type must be empty, 'classic' or 'stream'");
    };
  }
}
