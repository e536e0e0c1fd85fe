package io.queuebridge.core.store.file;

import java.io.Closeable;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The store's I/O seam: every write, sync and truncation of a store file and every directory sync
 * goes through one of these, so a test can wrap it to fail the Nth write or sync (STYLE 19).
 *
 * <p><b>Why writes are not {@link FileChannel} writes.</b> A {@code FileChannel} is interruptible:
 * interrupting a thread blocked in {@code write} or {@code force} closes the channel for every
 * thread. A durable append must not be interruptible once started (DurableQueueStore contract), and
 * one caller's interrupt must not break a queue for everyone, so writes and syncs use {@link
 * RandomAccessFile} ({@code pwrite}-like seek+write under the append lock, {@code fsync} through
 * its descriptor), which ignores interrupts. Reads use positional {@code FileChannel} reads and
 * recover from a channel closed by an interrupt (see {@code ReadHandles}).
 *
 * <p>Implementations are thread-safe.
 */
interface StoreIo {
  /** The real thing. */
  StoreIo DEFAULT = new DefaultStoreIo();

  /**
   * Opens {@code file} for reading and writing.
   *
   * @param createNew create the file, failing if it exists; else it must exist
   */
  WritableFile openWritable(Path file, boolean createNew) throws IOException;

  /** Opens {@code file} read-only for positional reads. */
  FileChannel openReadable(Path file) throws IOException;

  /** Makes the directory's entries (creations, renames, deletions) durable. */
  void syncDirectory(Path dir) throws IOException;

  /**
   * A file written at explicit positions. {@link #write} and {@link #truncate} are called by one
   * thread at a time (the owner's lock); {@link #force} may run concurrently with them.
   */
  interface WritableFile extends Closeable {
    /** Writes all {@code len} bytes at {@code position}. */
    void write(byte[] src, int off, int len, long position) throws IOException;

    /** Flushes the file's data and metadata to the device (fsync). */
    void force() throws IOException;

    /** Cuts the file to {@code size} bytes. */
    void truncate(long size) throws IOException;

    /** The file's current size. */
    long size() throws IOException;
  }

  /** Plain files; directory sync via a read-only channel's {@code force} (POSIX). */
  final class DefaultStoreIo implements StoreIo {
    private static final boolean WINDOWS =
        System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).startsWith("windows");

    @Override
    public WritableFile openWritable(Path file, boolean createNew) throws IOException {
      if (createNew) {
        Files.createFile(file);
      } else if (!Files.isRegularFile(file)) {
        throw new java.nio.file.NoSuchFileException(file.toString());
      }
      return new RafFile(new RandomAccessFile(file.toFile(), "rw"));
    }

    @Override
    public FileChannel openReadable(Path file) throws IOException {
      return FileChannel.open(file, StandardOpenOption.READ);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
      if (WINDOWS) {
        return; // directories cannot be opened for sync there; NTFS journals metadata itself
      }
      try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
        ch.force(true);
      }
    }
  }

  /** A {@link RandomAccessFile}: neither writes nor syncs react to interrupts. */
  final class RafFile implements WritableFile {
    private final RandomAccessFile raf;

    RafFile(RandomAccessFile raf) {
      this.raf = raf;
    }

    @Override
    public void write(byte[] src, int off, int len, long position) throws IOException {
      raf.seek(position);
      raf.write(src, off, len);
    }

    @Override
    public void force() throws IOException {
      raf.getFD().sync();
    }

    @Override
    public void truncate(long size) throws IOException {
      raf.setLength(size);
    }

    @Override
    public long size() throws IOException {
      return raf.length();
    }

    @Override
    public void close() throws IOException {
      raf.close();
    }
  }
}
