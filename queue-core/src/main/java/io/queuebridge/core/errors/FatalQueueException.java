package io.queuebridge.core.errors;

/**
 * A failure that retrying the same call will not change: corruption, contract drift, a store that
 * is locked by another holder or closed, a queue or group that does not exist, an invalid
 * configuration or argument, or a call the object's state does not allow. Fix the cause (or the
 * call) first.
 */
public abstract class FatalQueueException extends QueueException {
  private static final long serialVersionUID = 1L;

  protected FatalQueueException(String queue, String message) {
    super(queue, message, null);
  }

  protected FatalQueueException(String queue, String message, Throwable cause) {
    super(queue, message, cause);
  }
}
