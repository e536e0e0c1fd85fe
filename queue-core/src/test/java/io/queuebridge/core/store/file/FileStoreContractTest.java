package io.queuebridge.core.store.file;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.StoreContractTest;
import java.nio.file.Path;

/**
 * The file store against the store contract kit, with default settings (opened through {@link
 * QueueStores#file}): persistent, durable sync, exact truncation, coarse time lookup.
 */
class FileStoreContractTest extends StoreContractTest {
  @Override
  protected Storage openStorage(Path dir) {
    return QueueStores.file(dir.resolve("store"));
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
