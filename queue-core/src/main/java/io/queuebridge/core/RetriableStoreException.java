package io.queuebridge.core;

/**
 * A transient store failure (busy, over its bound, connection lost): the same call may succeed
 * later.
 */
public class RetriableStoreException extends QueueStoreException {

  public RetriableStoreException(String queue, String message, Throwable cause) {
    super(queue, message, cause);
  }
}
