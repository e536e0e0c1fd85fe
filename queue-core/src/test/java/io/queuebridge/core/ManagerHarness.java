package io.queuebridge.core;

import io.queuebridge.core.config.AckDurability;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Managers on a memory or a file store for the manager-level tests, on one injected clock and a
 * recording delivery scheduler; {@link #close} stops every manager and closes every store it made.
 */
final class ManagerHarness implements AutoCloseable {
  final MutableClock clock = MutableClock.at("2026-03-01T12:00:00Z");
  final RecordingScheduler scheduler = new RecordingScheduler();
  private final Supplier<Path> dir;
  private final List<QueueManager> managers = new ArrayList<>();
  private final List<Storage> stores = new ArrayList<>();

  /**
   * A harness whose file stores live under the directory {@code dir} supplies when the first one is
   * opened (a test's {@code @TempDir} field, set after the test object is built).
   */
  ManagerHarness(Supplier<Path> dir) {
    this.dir = dir;
  }

  /** A new store: {@code "file"} (at {@code dir/store}, the same directory each time) or memory. */
  Storage store(String kind) {
    Storage s =
        kind.equals("file") ? QueueStores.file(dir.get().resolve("store")) : QueueStores.memory();
    stores.add(s);
    return s;
  }

  /**
   * A manager on the clock and scheduler, with fsync-acknowledged publishes. Stopping it, or
   * closing a store, before {@link #close} is allowed: both are idempotent.
   */
  QueueManager manager(Storage storage) {
    return manager(storage, b -> b);
  }

  /** As {@link #manager(Storage)}, with {@code tune} applied to the configuration. */
  QueueManager manager(Storage storage, UnaryOperator<QueueManagerConfig.Builder> tune) {
    QueueManager m =
        new QueueManager(
            storage,
            tune.apply(QueueManagerConfig.builder().clock(clock).ackDurability(AckDurability.FSYNC))
                .build());
    m.deliveryScheduler(scheduler);
    managers.add(m);
    return m;
  }

  @Override
  public void close() {
    managers.forEach(QueueManager::stop);
    stores.forEach(Storage::close);
  }
}
