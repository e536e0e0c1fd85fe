package io.queuebridge.core.errors;

/** A store directory is already open in this or another process. */
public class StoreLockedException extends FatalQueueException {

  public StoreLockedException(String store, String holder) {
    super(null, "store " + store + " is locked by another opener: " + holder);
  }
}
