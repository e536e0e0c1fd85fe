package io.queuebridge.core.store.memory;

import java.lang.ref.WeakReference;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The memory stores open in this class loader, by identity ({@code memory:<name>}), so that a
 * read-only open can find the store a name stands for. Each identity maps to the store opened last
 * under it, until that store is closed; a store opened under a name already open hides the earlier
 * one from read-only opens (the earlier one keeps working). Entries hold their store weakly: a
 * store dropped without being closed is not kept alive by the registry.
 *
 * <p>Thread-safe.
 */
final class OpenMemoryStores {
  private static final ConcurrentMap<String, WeakReference<MemoryStorage>> NEWEST =
      new ConcurrentHashMap<>();

  private OpenMemoryStores() {}

  /** Records {@code store} as the newest open store of its identity. */
  static void opened(MemoryStorage store) {
    NEWEST.put(store.description(), store.registration);
  }

  /** Forgets {@code store} if it still is the newest of its identity. */
  static void closed(MemoryStorage store) {
    NEWEST.remove(store.description(), store.registration);
  }

  /** The newest open store of {@code identity}, if there is one. */
  static Optional<MemoryStorage> find(String identity) {
    WeakReference<MemoryStorage> ref = NEWEST.get(identity);
    MemoryStorage store = ref == null ? null : ref.get();
    return store == null || store.isClosed() ? Optional.empty() : Optional.of(store);
  }
}
