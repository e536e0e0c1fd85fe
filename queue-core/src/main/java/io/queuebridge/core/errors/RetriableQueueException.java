package io.queuebridge.core.errors;

/**
 * A failure that may pass if the same call is made again later, unchanged: a classic queue at its
 * {@code maxDepth}, a full pending entry list, a store that is busy, unreachable or failed an I/O
 * operation or a durability barrier. What the store had accepted before the failure is kept; what
 * the failed call carried may or may not have been stored (a durable path says which on its
 * method).
 */
public abstract class RetriableQueueException extends QueueException {
  private static final long serialVersionUID = 1L;

  protected RetriableQueueException(String queue, String message) {
    super(queue, message, null);
  }

  protected RetriableQueueException(String queue, String message, Throwable cause) {
    super(queue, message, cause);
  }
}
