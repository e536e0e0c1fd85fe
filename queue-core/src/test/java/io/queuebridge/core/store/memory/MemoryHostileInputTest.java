package io.queuebridge.core.store.memory;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.HostileInputContractTest;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/** The hostile-input table against the memory store (a store of its own per case). */
class MemoryHostileInputTest extends HostileInputContractTest {
  private static final AtomicInteger STORES = new AtomicInteger();

  @Override
  protected Storage openStorage(Path storeDir) {
    return QueueStores.open("memory", Map.of("name", "hostile-" + STORES.incrementAndGet()));
  }

  @Override
  protected boolean persistent() {
    return false;
  }

  @Override
  protected boolean writesFiles() {
    return false;
  }
}
