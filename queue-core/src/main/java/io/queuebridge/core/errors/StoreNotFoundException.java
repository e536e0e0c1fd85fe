package io.queuebridge.core.errors;

/**
 * A configuration names a store that does not exist (a directory that is not a store, a database
 * without the store's schema), and the caller asked to open an existing store only. Nothing was
 * created.
 */
public class StoreNotFoundException extends FatalQueueException {
  private static final long serialVersionUID = 1L;

  /**
   * @param store the store as configured ({@code file:/var/lib/qb})
   * @param reason what was found instead ({@code the directory does not exist})
   */
  public StoreNotFoundException(String store, String reason) {
    super(null, "store " + store + " does not exist: " + reason + " (expected an existing store)");
  }
}
