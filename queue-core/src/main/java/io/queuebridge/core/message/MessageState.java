package io.queuebridge.core.message;

/** Lifecycle state stored with a message (BEHAVIOUR Q-MSG). */
public enum MessageState {
  QUEUED,
  DELIVERED,
  ACKED,
  RETRY,
  DLQ
}
