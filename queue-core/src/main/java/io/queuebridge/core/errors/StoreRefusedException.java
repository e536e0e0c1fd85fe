package io.queuebridge.core.errors;

/**
 * A store refused an operation for a reason that retrying the same call cannot change: the store's
 * database role lacks a privilege, a table or schema the store needs is missing, the server
 * rejected a statement or a value, a constraint was violated. Not retriable: fix the cause (the
 * grants, the schema) first. The message names the store, the queue when there is one, and the
 * database's reason (with its SQLSTATE). The transient failures of the same store (an unreachable
 * server, a deadlock, a shutdown) are {@link QueueStoreException}s instead.
 */
public class StoreRefusedException extends FatalQueueException {
  private static final long serialVersionUID = 1L;

  /**
   * @param queue the queue the operation concerned, or null
   * @param message names the store and the reason
   * @param cause the store's own error
   */
  public StoreRefusedException(String queue, String message, Throwable cause) {
    super(queue, message, cause);
  }
}
