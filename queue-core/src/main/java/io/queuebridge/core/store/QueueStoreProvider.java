package io.queuebridge.core.store;

import io.queuebridge.core.errors.InvalidConfigException;
import java.util.Map;

/**
 * Opens stores of one kind. Found with {@link java.util.ServiceLoader} by {@link #name()}: a third
 * party adds a store by implementing the SPI and this interface, listing the class in {@code
 * META-INF/services/io.queuebridge.core.store.QueueStoreProvider}, dropping the jar next to ours,
 * and naming it in configuration ({@code queue.store.type=<name>}).
 *
 * <p>Implementations are stateless and thread-safe. Configuration keys are the store's own, without
 * any prefix ({@code path}, not {@code queue.store.path}).
 */
public interface QueueStoreProvider {

  /** The name users configure: {@code memory}, {@code file}, ... Lower case, no spaces. */
  String name();

  /**
   * Checks a configuration without opening anything.
   *
   * @throws InvalidConfigException naming the first bad key, its value and what was expected
   *     (unknown keys included)
   */
  void validate(Map<String, String> config);

  /**
   * A stable identity of the store a configuration names, so that two configurations naming the
   * same store share one open instance ({@code file:/abs/path}). Never contains secrets.
   *
   * @throws InvalidConfigException if the configuration is invalid
   */
  String identity(Map<String, String> config);

  /**
   * Opens (creating if needed) the store. Blocks for its recovery.
   *
   * @throws InvalidConfigException if the configuration is invalid
   * @throws io.queuebridge.core.errors.QueueStoreException if the store cannot be opened (locked,
   *     corrupt, unreachable)
   */
  Storage open(Map<String, String> config);

  /**
   * Opens an existing store for reading only, beside a writer that may hold it in another process.
   * Creates nothing, takes no writer lock and never writes: no recovery, no repair, no schema
   * change. Every read sees a consistent, committed state of the store as of that call (appends,
   * claims and retention by the writer become visible to later calls); a part removed by the
   * writer's retention meanwhile reads as truncated, not as an error. Every call that would change
   * the store throws {@link io.queuebridge.core.errors.ReadOnlyStoreException}.
   *
   * <p>The default refuses: a store that cannot be read beside its writer says so.
   *
   * @throws InvalidConfigException if the configuration is invalid
   * @throws io.queuebridge.core.errors.StoreNotFoundException if the configuration names no
   *     existing store
   * @throws io.queuebridge.core.errors.QueueStoreException if the store cannot be read
   * @throws UnsupportedOperationException if this kind of store has no read-only open
   */
  default Storage openReadOnly(Map<String, String> config) {
    throw new UnsupportedOperationException(
        "store type '"
            + name()
            + "' has no read-only open (expected one of: memory, file, postgres)");
  }
}
