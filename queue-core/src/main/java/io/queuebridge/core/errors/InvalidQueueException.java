package io.queuebridge.core.errors;

/** A job queue name is null or empty ({@code ErrInvalidQueue}). */
public class InvalidQueueException extends JobException {
  private static final long serialVersionUID = 1L;

  public InvalidQueueException(String operation, String queue) {
    super(
        "invalid job queue for "
            + operation
            + ": "
            + (queue == null ? "null" : "'" + queue + "'")
            + " (expected a non-empty queue name)");
  }
}
