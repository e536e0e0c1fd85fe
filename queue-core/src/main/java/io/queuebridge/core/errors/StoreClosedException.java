package io.queuebridge.core.errors;

/** The store (or a part of it) was closed; use after close. */
public class StoreClosedException extends FatalQueueException {

  public StoreClosedException(String store) {
    super(null, "store is closed: " + store);
  }
}
