package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.Storage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;

/**
 * The {@code file} store: a durable segmented log per queue in one local directory, with group
 * commit and crash recovery (see {@link FileStorage}). Found by {@link java.util.ServiceLoader}.
 *
 * <p><b>Configuration keys</b> (without the {@code queue.store.} prefix):
 *
 * <table>
 *   <caption>file store keys</caption>
 *   <tr><th>key</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code path}</td><td>(required)</td><td>the store directory; created owner-only
 *       ({@code rwx------}) if missing</td></tr>
 *   <tr><td>{@code segment.bytes}</td><td>67108864 (64 MiB)</td><td>roll to a new segment before
 *       a batch would take the active one past this size; 1024 .. 1073741824</td></tr>
 *   <tr><td>{@code segment.ms}</td><td>3600000 (1 h)</td><td>roll a non-empty segment once its
 *       first batch is this old (store clock); 0 = never by age</td></tr>
 *   <tr><td>{@code index.interval.bytes}</td><td>4096</td><td>bytes between sparse offset-index
 *       entries (the first batch of a segment is always indexed)</td></tr>
 *   <tr><td>{@code time.index.interval.ms}</td><td>1000</td><td>record-time step between
 *       time-index entries; the coarseness of {@code timeOffset}</td></tr>
 *   <tr><td>{@code sync.interval.ms}</td><td>1000</td><td>background fsync period for buffered
 *       appends and group changes; 0 = every append and group change is durable on return</td></tr>
 *   <tr><td>{@code max.open.read.files}</td><td>128</td><td>read channels kept open (LRU-ish,
 *       Caffeine); in-flight reads may briefly hold evicted ones</td></tr>
 *   <tr><td>{@code group.sync}</td><td>interval</td><td>{@code interval}: group changes are
 *       written on every call and fsynced by the background interval; {@code always}: fsynced
 *       on every call</td></tr>
 *   <tr><td>{@code verify.on.open}</td><td>sealed-once</td><td>which segments opening verifies
 *       frame by frame (framing, offset continuity, CRC-32C): {@code sealed-once} the newest
 *       segment of each queue and every sealed one not yet verified in its present size and
 *       modification time (recorded in the queue's {@code queue.verified} file, so a sealed
 *       segment is read once, not at every open); {@code all} every segment at every open;
 *       {@code newest} the newest segment only (older ones are verified only when read). Damage
 *       found in a sealed segment is reported ({@link FileStorage#recovery()}) and its offsets
 *       refused until {@link FileStores#repair} cuts it (BEHAVIOUR F-RECOVER)</td></tr>
 * </table>
 *
 * <p>Stateless and thread-safe.
 */
public final class FileStoreProvider implements QueueStoreProvider {

  /** For {@link java.util.ServiceLoader}. */
  public FileStoreProvider() {}

  @Override
  public String name() {
    return "file";
  }

  @Override
  public void validate(Map<String, String> config) {
    FileStoreConfig.parse(config);
  }

  /**
   * {@code file:} and the directory's real absolute path (symbolic links resolved; for a directory
   * not created yet, its nearest existing ancestor's real path plus the rest).
   */
  @Override
  public String identity(Map<String, String> config) {
    return "file:" + realPath(FileStoreConfig.parse(config).path());
  }

  /**
   * Opens the store, recovering it (see {@link FileStorage#recovery()}).
   *
   * @throws io.queuebridge.core.errors.StoreLockedException if it is open elsewhere
   * @throws io.queuebridge.core.errors.StoreCorruptedException if it is damaged beyond automatic
   *     repair
   */
  @Override
  public FileStorage open(Map<String, String> config) {
    return FileStorage.open(FileStoreConfig.parse(config), Clock.systemUTC(), StoreIo.DEFAULT);
  }

  /**
   * Opens the existing store in {@code path} for reading only, beside a writer that may hold it in
   * this or another process (or with none): takes no lock, creates and writes nothing (no recovery,
   * no repair, no index saved), and sees at each call what the writer has written so far, in whole
   * frames and records; a torn or half-written tail is not there yet. Every change is refused with
   * {@link io.queuebridge.core.errors.ReadOnlyStoreException}. Keys other than {@code path} are
   * accepted and checked; of them only {@code max.open.read.files} and the index intervals (of the
   * indexes it builds in memory) matter.
   *
   * @throws io.queuebridge.core.errors.StoreNotFoundException if the path does not exist, is not a
   *     directory, or holds no {@code qb-store} marker
   * @throws io.queuebridge.core.errors.StoreCorruptedException if the marker is damaged
   */
  @Override
  public Storage openReadOnly(Map<String, String> config) {
    return ReadOnlyFileStorage.open(FileStoreConfig.parse(config), StoreIo.DEFAULT);
  }

  static Path realPath(Path path) {
    Path abs = path.toAbsolutePath().normalize();
    Path existing = abs;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return abs;
    }
    try {
      return existing.toRealPath().resolve(existing.relativize(abs)).normalize();
    } catch (IOException e) {
      throw new InvalidConfigException(
          FileStoreConfig.PATH, path.toString(), "an accessible directory (" + e + ")");
    }
  }
}
