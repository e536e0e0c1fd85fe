package io.queuebridge.core.store.file;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * Operations on a file store directory as a whole, beside opening it ({@link FileStoreProvider}).
 * Stateless and thread-safe.
 */
public final class FileStores {
  private FileStores() {}

  /**
   * Repairs the damage found in sealed segments of the store in {@code dir} (BEHAVIOUR F-RECOVER):
   * every segment of every queue is read frame by frame (whatever was verified before), and each
   * queue with damage is truncated to the last valid frame before its first damaged one — that
   * segment keeps the frames before the bad one, every later segment of the queue is deleted — and
   * its consumer groups are clamped to the new tail ({@link RepairReport.GroupClamp}). Queues
   * without damage, and a torn tail of a newest segment (cut at every open anyway), are left as
   * they are. Never runs implicitly: opening a damaged store only reports the damage.
   *
   * <p>Takes the store's lock for the whole run, so it is refused while a writer holds the store,
   * and no writer opens it meanwhile. A dry run changes no byte of the store (not even the lock
   * file's content, where a writable open records its process id) and reports exactly what the
   * repair would cut. A repair cut short by a crash leaves a store that opens, reports what damage
   * is left and can be repaired again: the groups are clamped first, then the segments after the
   * damaged one are deleted newest first, then the damaged one is truncated.
   *
   * @param dir the store directory
   * @param dryRun whether to report only, changing nothing
   * @return what was (or would be) cut
   * @throws io.queuebridge.core.errors.StoreNotFoundException if {@code dir} is not an existing
   *     store (nothing is created)
   * @throws io.queuebridge.core.errors.StoreLockedException if another process or an open instance
   *     in this JVM holds the store
   * @throws io.queuebridge.core.errors.StoreCorruptedException if damage that the repair cannot cut
   *     is found (a damaged queue configuration, group log or head file, a frame of a newer format
   *     version, a missing checkpoint snapshot of the segment that would become the newest)
   * @throws io.queuebridge.core.errors.QueueStoreException for other I/O failures
   */
  public static RepairReport repair(Path dir, boolean dryRun) {
    Objects.requireNonNull(dir, "dir");
    return FileStoreRepair.run(FileStoreConfig.defaults(dir), StoreIo.DEFAULT, dryRun);
  }

  /**
   * {@link #repair(Path, boolean)} of the store a provider configuration names: its keys are
   * checked as {@link FileStoreProvider#validate} checks them, and only {@code path} is used.
   *
   * @throws io.queuebridge.core.errors.InvalidConfigException naming the first bad key
   */
  public static RepairReport repair(Map<String, String> config, boolean dryRun) {
    return FileStoreRepair.run(FileStoreConfig.parse(config), StoreIo.DEFAULT, dryRun);
  }
}
