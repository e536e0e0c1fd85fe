package io.queuebridge.core.store.memory;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.StoreContractTest;
import java.nio.file.Path;

/** The memory store against the store contract kit; it promises exact truncation and lookups. */
class MemoryStoreContractTest extends StoreContractTest {
  @Override
  protected Storage openStorage(Path dir) {
    return QueueStores.memory();
  }

  @Override
  protected boolean persistent() {
    return false;
  }

  @Override
  protected boolean durableSync() {
    return false;
  }

  @Override
  protected boolean exactTruncation() {
    return true;
  }

  @Override
  protected boolean exactTimeOffset() {
    return true;
  }
}
