package io.queuebridge.core;

/**
 * A store failed to do what was asked (I/O error, closed store, failed durability barrier). Whether
 * retrying can help is told by the subclass: {@link RetriableStoreException} may pass, {@link
 * StoreCorruptedException} will not.
 */
public class QueueStoreException extends QueueException {
  public QueueStoreException(String queue, String message, Throwable cause) {
    super(queue, message, cause);
  }

  public QueueStoreException(String queue, String message) {
    super(queue, message);
  }
}
