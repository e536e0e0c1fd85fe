package io.queuebridge.cli;

import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;

/**
 * Opens the store a command names. The command closes what it gets. Tests put their own opener in
 * place to hand a command a store they built (see {@link QueueBridgeCli#commandLine}).
 */
@FunctionalInterface
interface StoreOpener {
  /**
   * The open store {@code spec} names: for reading only, or ({@code writable}) for a command that
   * changes it. Either way an existing store only: nothing is created.
   *
   * @throws io.queuebridge.core.errors.QueueException if it cannot be opened (a {@code file} store
   *     held by a worker is locked against a writable open, naming the holder)
   * @throws io.queuebridge.core.errors.StoreNotFoundException if it does not exist
   */
  Storage open(StoreSpec spec, boolean writable);

  /**
   * The ordinary way: the provider found by {@link QueueStores#provider} checks the configuration
   * and opens the store — read-only (no lock, no write: beside a running worker) for reading, or
   * writable after a read-only open has shown that the store exists, since a writable open creates
   * a missing store and no command may.
   */
  static StoreOpener existingStores() {
    return (spec, writable) -> {
      QueueStoreProvider provider = QueueStores.provider(spec.type());
      provider.validate(spec.config());
      Storage readOnly = provider.openReadOnly(spec.config());
      if (!writable) {
        return readOnly;
      }
      readOnly.close();
      return provider.open(spec.config());
    };
  }
}
