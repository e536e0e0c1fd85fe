package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.StoreLockedException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one-opener lock of a store directory (BEHAVIOUR S-LOCK): an OS file lock on {@code
 * qb-store.lock} keeps other processes out, a static registry of the directories open in this JVM
 * keeps out a second instance here (an OS lock cannot tell two channels of one JVM apart). Held by
 * a writable {@link FileStorage} and by {@link FileStores#repair}.
 *
 * <p>Thread-safe; {@link #close} is idempotent.
 */
final class StoreLock implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(StoreLock.class);

  /** Directories open in this JVM (an OS file lock does not exclude a second channel of ours). */
  private static final Map<Path, Boolean> OPEN = new ConcurrentHashMap<>();

  private final Path dir;
  private FileChannel channel;
  private FileLock lock;

  private StoreLock(Path dir, FileChannel channel, FileLock lock) {
    this.dir = dir;
    this.channel = channel;
    this.lock = lock;
  }

  /**
   * Locks the store directory {@code real} (real, absolute path); {@code writePid} records this
   * process's id in the lock file for the error another opener gets (a dry run leaves the file's
   * bytes as they are).
   *
   * @throws StoreLockedException naming the directory and the holder if it is open elsewhere
   * @throws IOException if the lock file cannot be opened or written
   */
  static StoreLock acquire(Path real, boolean writePid) throws IOException {
    if (OPEN.putIfAbsent(real, Boolean.TRUE) != null) {
      throw new StoreLockedException(real.toString(), "another open instance in this JVM");
    }
    FileChannel ch = null;
    try {
      ch =
          FileChannel.open(
              real.resolve(FileStorage.LOCK),
              StandardOpenOption.CREATE,
              StandardOpenOption.READ,
              StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = ch.tryLock();
      } catch (OverlappingFileLockException e) {
        // this JVM holds it through a copy of these classes in another class loader
        throw new StoreLockedException(
            real.toString(), "another open instance in this JVM (loaded by another class loader)");
      }
      if (lock == null) {
        String holder = holder(ch);
        throw new StoreLockedException(
            real.toString(), "another process" + (holder.isEmpty() ? "" : " (" + holder + ")"));
      }
      if (writePid) {
        ch.truncate(0);
        ch.write(
            ByteBuffer.wrap(
                ("pid " + ProcessHandle.current().pid() + "\n")
                    .getBytes(StandardCharsets.US_ASCII)),
            0);
      }
      return new StoreLock(real, ch, lock);
    } catch (IOException | RuntimeException e) {
      closeChannel(ch);
      OPEN.remove(real);
      throw e;
    }
  }

  private static String holder(FileChannel ch) {
    try {
      ByteBuffer b = ByteBuffer.allocate(64);
      ch.read(b, 0);
      return new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII).trim();
    } catch (IOException e) {
      return "";
    }
  }

  private static void closeChannel(FileChannel ch) {
    if (ch != null) {
      try {
        ch.close();
      } catch (IOException ignored) {
        // already failing
      }
    }
  }

  /** Releases the lock and the directory. Idempotent. */
  @Override
  public synchronized void close() {
    if (channel == null) {
      return;
    }
    try {
      lock.release();
    } catch (IOException e) {
      LOG.warn("file store {}: releasing the lock failed: {}", dir, e.toString());
    }
    closeChannel(channel);
    channel = null;
    lock = null;
    OPEN.remove(dir);
  }
}
