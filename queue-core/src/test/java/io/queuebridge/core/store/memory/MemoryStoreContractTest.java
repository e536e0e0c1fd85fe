package io.queuebridge.core.store.memory;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.StoreContractTest;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The memory store against the store contract kit; it promises exact truncation and lookups, and
 * opens read-only views of a named store. Each test's store has a name of its own (derived from its
 * directory), so that a read-only open finds that store and no other test's.
 */
class MemoryStoreContractTest extends StoreContractTest {
  private static final AtomicInteger STORES = new AtomicInteger();
  private final Map<Path, String> names = new HashMap<>();

  private String nameOf(Path dir) {
    return names.computeIfAbsent(dir, d -> "contract-" + STORES.incrementAndGet());
  }

  @Override
  protected Storage openStorage(Path dir) {
    return QueueStores.open("memory", Map.of("name", nameOf(dir)));
  }

  @Override
  protected Optional<Storage> openReadOnly(Path dir) {
    return Optional.of(QueueStores.provider("memory").openReadOnly(Map.of("name", nameOf(dir))));
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
