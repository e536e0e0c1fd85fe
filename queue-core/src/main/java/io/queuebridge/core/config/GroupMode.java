package io.queuebridge.core.config;

/** How a consumer group reads its queue (BEHAVIOUR Q-GROUP). */
public enum GroupMode {
  /** Competing consumers: each message is claimed by one member and tracked until settled. */
  QUEUE,
  /** Cursor readers: every member sees the log in order; acknowledging checkpoints the cursor. */
  STREAM
}
