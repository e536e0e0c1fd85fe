package io.queuebridge.cli;

import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Opens the store a command names. The command closes what it gets. Tests put their own opener in
 * place to hand a command a store they built (see {@link QueueBridgeCli#commandLine}).
 */
@FunctionalInterface
interface StoreOpener {
  /** The file store's marker file, written when a store directory is created (FileStorage). */
  String FILE_STORE_MARKER = "qb-store";

  /**
   * The open store {@code spec} names: for reading only, or ({@code writable}) for a command that
   * changes it. Either way an existing store only: nothing is created.
   *
   * @throws io.queuebridge.core.errors.QueueException if it cannot be opened (a {@code file} store
   *     held by a worker is locked against a writable open, naming the holder)
   * @throws CliException if it does not exist
   */
  Storage open(StoreSpec spec, boolean writable);

  /**
   * The ordinary way: the provider found by {@link QueueStores#provider} checks the configuration,
   * and opens the store. A {@code file} store is opened only when its directory already is a store:
   * the file provider creates a missing one, and a read command must create nothing.
   */
  static StoreOpener existingStores() {
    return (spec, writable) -> {
      QueueStoreProvider provider = QueueStores.provider(spec.type());
      provider.validate(spec.config());
      if (spec.type().equals("file")) {
        requireFileStore(Path.of(spec.config().get("path")));
      }
      return provider.open(spec.config());
    };
  }

  private static void requireFileStore(Path dir) {
    String expected = " (expected the directory of an existing file store; reading creates none)";
    if (!Files.exists(dir)) {
      throw new CliException("file store " + dir + " does not exist" + expected);
    }
    if (!Files.isDirectory(dir)) {
      throw new CliException("file store " + dir + " is not a directory" + expected);
    }
    if (!Files.isRegularFile(dir.resolve(FILE_STORE_MARKER))) {
      throw new CliException(
          dir + " is not a file store: it holds no " + FILE_STORE_MARKER + " marker" + expected);
    }
  }
}
