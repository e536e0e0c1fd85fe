package io.queuebridge.core.errors;

/**
 * A store failed an operation it may pass later: an I/O error, a failed durability barrier, a
 * database that is unreachable or refused a transaction. Retriable by type. After a failed durable
 * append the store refuses further appends until a barrier passes again, so nothing acknowledged as
 * durable is lost, and the failed batch itself may or may not be stored: the sink re-reads its
 * watermarks before writing again. Failures that retrying cannot mend are other types: {@link
 * StoreCorruptedException}, {@link StoreLockedException}, {@link StoreClosedException}.
 */
public class QueueStoreException extends RetriableQueueException {
  private static final long serialVersionUID = 1L;

  public QueueStoreException(String queue, String message, Throwable cause) {
    super(queue, message, cause);
  }

  public QueueStoreException(String queue, String message) {
    super(queue, message);
  }
}
