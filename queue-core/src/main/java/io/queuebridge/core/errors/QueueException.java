package io.queuebridge.core.errors;

/**
 * The root of every error that the queue core, its stores and its job API raise. Unchecked, and
 * always one of two kinds, told by type, never by message text:
 *
 * <ul>
 *   <li>{@link RetriableQueueException}: the same call may succeed later, unchanged (a full queue,
 *       a full pending entry list, a transient store failure). Nothing the store had accepted
 *       before the failure is lost.
 *   <li>{@link FatalQueueException}: retrying the same call will fail the same way (corruption,
 *       contract drift, a locked or closed store, a missing queue, misuse of the API).
 * </ul>
 *
 * <p>Each kind of failure has its own subclass, carrying the queue name (when one is involved) and
 * the values that explain it. Causes are always kept.
 */
public abstract class QueueException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String queue;

  QueueException(String queue, String message, Throwable cause) {
    super(message, cause);
    this.queue = queue;
  }

  /** The queue the failure concerns, or null when none does. */
  public String queue() {
    return queue;
  }

  /** Whether the same call may succeed later; the same as {@code this instanceof Retriable...}. */
  public final boolean isRetriable() {
    return this instanceof RetriableQueueException;
  }
}
