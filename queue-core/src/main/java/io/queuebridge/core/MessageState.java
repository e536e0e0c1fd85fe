package io.queuebridge.core;

/** Lifecycle state stored with a message (SEMANTICS B §1.3). */
public enum MessageState {
  QUEUED,
  DELIVERED,
  ACKED,
  RETRY,
  DLQ
}
