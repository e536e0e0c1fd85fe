package io.queuebridge.core;

/**
 * The base of every error the queue core raises. Unchecked; each kind of failure (BEHAVIOUR Q-ERR)
 * has its own subclass, carrying the queue name (when one is involved) and the values that explain
 * it. Causes are always kept.
 */
public class QueueException extends RuntimeException {
  private final String queue;

  public QueueException(String queue, String message) {
    this(queue, message, null);
  }

  public QueueException(String queue, String message, Throwable cause) {
    super(message, cause);
    this.queue = queue;
  }

  /** The queue the failure concerns, or null when none does. */
  public String queue() {
    return queue;
  }
}
