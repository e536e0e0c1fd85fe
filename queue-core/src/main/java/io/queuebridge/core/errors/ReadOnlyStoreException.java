package io.queuebridge.core.errors;

/**
 * A call would change a store that was opened read-only ({@link
 * io.queuebridge.core.store.QueueStoreProvider#openReadOnly}). Nothing was changed.
 */
public class ReadOnlyStoreException extends FatalQueueException {
  private static final long serialVersionUID = 1L;

  /**
   * @param store the store's description
   * @param operation the refused call ({@code append})
   */
  public ReadOnlyStoreException(String store, String operation) {
    super(
        null,
        "store " + store + " is open read-only: " + operation + " refused (open it writable)");
  }
}
