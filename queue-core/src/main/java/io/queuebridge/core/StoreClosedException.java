package io.queuebridge.core;

/** The store (or a part of it) was closed; use after close. */
public class StoreClosedException extends QueueStoreException {

  public StoreClosedException(String store) {
    super(null, "store is closed: " + store);
  }
}
