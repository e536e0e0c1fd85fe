package io.queuebridge.core.store;

import io.queuebridge.core.errors.InvalidConfigException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeSet;

/** Finds {@link QueueStoreProvider}s by name. Thread-safe. */
public final class QueueStores {
  private QueueStores() {}

  /**
   * The provider named {@code name}, found with {@link ServiceLoader} in the class loader of this
   * class and the thread's context class loader.
   *
   * @throws InvalidConfigException naming the unknown store type and the known ones
   */
  public static QueueStoreProvider provider(String name) {
    for (QueueStoreProvider p : providers()) {
      if (p.name().equals(name)) {
        return p;
      }
    }
    TreeSet<String> known = new TreeSet<>();
    providers().forEach(p -> known.add(p.name()));
    throw new InvalidConfigException("store type", name, "one of " + known);
  }

  /**
   * Opens (creating if needed) the file store in {@code directory} with default settings: a durable
   * segmented log per queue with group commit and crash recovery, locked against a second opener.
   * Blocks for recovery. For other settings use {@code open("file", config)} with the keys of
   * {@link io.queuebridge.core.store.file.FileStoreProvider}.
   *
   * @throws io.queuebridge.core.errors.StoreLockedException if the directory is open elsewhere
   * @throws io.queuebridge.core.errors.StoreCorruptedException if it is damaged beyond automatic
   *     repair
   * @throws io.queuebridge.core.errors.QueueStoreException for other I/O failures
   */
  public static Storage file(Path directory) {
    // by name, like any provider: the SPI package does not depend on the stores built on it
    return open("file", Map.of("path", directory.toString()));
  }

  /**
   * A new, empty memory store: queues and groups in this JVM's heap, independent of every other
   * store, dropped on {@link Storage#close()}. Not durable ({@code supportsDurableSync()} is
   * false). Thread-safe.
   */
  public static Storage memory() {
    return open("memory", Map.of());
  }

  /** Opens a store by provider name. */
  public static Storage open(String type, Map<String, String> config) {
    return provider(type).open(config);
  }

  /** Every provider visible to this class's and the context class loader, without duplicates. */
  public static List<QueueStoreProvider> providers() {
    List<QueueStoreProvider> found = new ArrayList<>();
    TreeSet<String> names = new TreeSet<>();
    for (ClassLoader cl :
        new ClassLoader[] {
          QueueStores.class.getClassLoader(), Thread.currentThread().getContextClassLoader()
        }) {
      if (cl == null) {
        continue;
      }
      for (QueueStoreProvider p : ServiceLoader.load(QueueStoreProvider.class, cl)) {
        if (names.add(p.name())) {
          found.add(p);
        }
      }
    }
    return found;
  }
}
