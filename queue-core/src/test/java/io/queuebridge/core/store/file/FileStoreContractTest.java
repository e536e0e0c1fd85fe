package io.queuebridge.core.store.file;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.StoreContractTest;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * The file store against the store contract kit, with default settings (opened through {@link
 * QueueStores#file}): persistent, durable sync, exact truncation, coarse time lookup; read-only
 * opens beside the writer.
 */
class FileStoreContractTest extends StoreContractTest {
  @Override
  protected Storage openStorage(Path dir) {
    return QueueStores.file(dir.resolve("store"));
  }

  @Override
  protected Optional<Storage> openReadOnly(Path dir) {
    return Optional.of(
        QueueStores.provider("file").openReadOnly(Map.of("path", dir.resolve("store").toString())));
  }

  @Override
  protected boolean persistent() {
    return true;
  }

  @Override
  protected boolean durableSync() {
    return true;
  }

  @Override
  protected boolean exactTruncation() {
    return true;
  }
}
