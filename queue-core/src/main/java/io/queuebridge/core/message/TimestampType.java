package io.queuebridge.core.message;

/**
 * What a message's {@link Message#timestamp()} means. Mirrors Kafka's record timestamp types
 * without depending on Kafka.
 */
public enum TimestampType {
  /** The message carries no timestamp of its own ({@link Message#timestamp()} is -1). */
  NO_TIMESTAMP,
  /** Set by the producer when the record was created. */
  CREATE_TIME,
  /** Set by a log when the record was appended. */
  LOG_APPEND_TIME
}
