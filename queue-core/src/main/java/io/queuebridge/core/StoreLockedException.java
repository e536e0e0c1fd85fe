package io.queuebridge.core;

/** A store directory is already open in this or another process. */
public class StoreLockedException extends QueueStoreException {

  public StoreLockedException(String store, String holder) {
    super(null, "store " + store + " is locked by another opener: " + holder);
  }
}
