package io.queuebridge.core.store.memory;

import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.StoreNotFoundException;
import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.Storage;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Opens memory stores ({@code queue.store.type=memory}): the embedded default, fast and not
 * durable. Found by {@link java.util.ServiceLoader} under the name {@value #NAME}.
 *
 * <p><b>Configuration.</b> One optional key, {@value #NAME_CONFIG}: the store's name, {@value
 * #DEFAULT_NAME} when absent; 1 to 64 characters of {@code [A-Za-z0-9._-]}, starting with a letter
 * or digit. Any other key is an {@link InvalidConfigException} naming it.
 *
 * <p><b>Sharing.</b> {@link #identity} is {@code memory:<name>}. A registry of open stores keyed by
 * identity (the connectors' worker-wide registry) therefore gives every configuration that names
 * the memory store with the same {@code name} — including every configuration without one — the
 * same instance, so a sink and a source connector in one worker see the same queues, as they would
 * with one file store directory; distinct names give independent stores. The provider itself is
 * stateless: every {@link #open} returns a new, empty store, and a caller that bypasses such a
 * registry gets an independent store each time. Nothing is shared across JVMs. {@link
 * #openReadOnly} views the store opened last under a name while it is open.
 *
 * <p>Thread-safe and stateless.
 */
public final class MemoryStoreProvider implements QueueStoreProvider {
  /** The provider name users configure. */
  public static final String NAME = "memory";

  /** The optional store-name key. */
  public static final String NAME_CONFIG = "name";

  /** The store name used when {@value #NAME_CONFIG} is absent. */
  public static final String DEFAULT_NAME = "default";

  private static final Pattern SAFE_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

  /** For {@link java.util.ServiceLoader}; use {@code QueueStores.memory()} in code. */
  public MemoryStoreProvider() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void validate(Map<String, String> config) {
    storeName(config);
  }

  @Override
  public String identity(Map<String, String> config) {
    return NAME + ":" + storeName(config);
  }

  /** A new, empty memory store; see the class javadoc for how stores are shared. */
  @Override
  public Storage open(Map<String, String> config) {
    MemoryStorage store = new MemoryStorage(identity(config));
    OpenMemoryStores.opened(store);
    return store;
  }

  /**
   * A read-only view of the memory store the configuration names: the one opened last in this class
   * loader under that name, while it is open. The view sees every change at once and refuses every
   * change with {@link io.queuebridge.core.errors.ReadOnlyStoreException}; closing it leaves the
   * store open.
   *
   * @throws StoreNotFoundException if no memory store of that name is open
   */
  @Override
  public Storage openReadOnly(Map<String, String> config) {
    String identity = identity(config);
    return OpenMemoryStores.find(identity)
        .<Storage>map(ReadOnlyMemoryStorage::new)
        .orElseThrow(
            () ->
                new StoreNotFoundException(
                    identity, "no memory store of that name is open in this class loader"));
  }

  private static String storeName(Map<String, String> config) {
    Objects.requireNonNull(config, "config");
    for (Map.Entry<String, String> e : config.entrySet()) {
      if (!NAME_CONFIG.equals(e.getKey())) {
        throw new InvalidConfigException(
            e.getKey(),
            e.getValue(),
            "no such key: the memory store accepts only '" + NAME_CONFIG + "'");
      }
    }
    if (!config.containsKey(NAME_CONFIG)) {
      return DEFAULT_NAME;
    }
    String name = config.get(NAME_CONFIG);
    if (name == null || !SAFE_NAME.matcher(name).matches()) {
      throw new InvalidConfigException(
          NAME_CONFIG,
          name,
          "1 to 64 characters of [A-Za-z0-9._-] starting with a letter or digit");
    }
    return name;
  }
}
