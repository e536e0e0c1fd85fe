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
 * goes through one of these, so a test can wrap it to fail the Nth write or sync.
 *
 * <p><b>Interrupts.</b> A {@link FileChannel} is interruptible: interrupting a thread blocked in
 * one of its operations closes the channel for every thread. A durable append must not be
 * interruptible once started (DurableQueueStore contract), and one caller's interrupt must not
 * break a queue for everyone. So the default {@link WritableFile} writes through a {@code
 * FileChannel} (one {@code pwrite} per append) with the caller's interrupt status cleared for the
 * call and restored after it, and if an interrupt still closes the channel mid-write it reopens it
 * and writes again at the same position (positional writes are idempotent); syncs, truncation and
 * size go through a separate {@link RandomAccessFile} descriptor, which ignores interrupts (on
 * Linux an fsync through any descriptor flushes the file's dirty pages). Reads use their own
 * positional channels and recover the same way (see {@code ReadHandles}).
 *
 * <p>Implementations are thread-safe.
 */
interface StoreIo {
  /** The real thing; its errors name the file they are about. */
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
   * What went wrong in {@code e}, for a message that names the file itself: the reason of a {@link
   * java.nio.file.FileSystemException} without its file ({@code No space left on device}), else the
   * exception as text.
   */
  static String reason(IOException e) {
    if (e instanceof java.nio.file.FileSystemException f && f.getReason() != null) {
      return f.getReason();
    }
    return e.toString();
  }

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
      return new ChannelFile(file);
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

  /**
   * Writes through a {@link FileChannel} ({@code pwrite}), syncs through a {@link RandomAccessFile}
   * descriptor; see the interface comment for why. {@link #write} is called by one thread at a
   * time.
   */
  final class ChannelFile implements WritableFile {
    /** Largest slice of a frame handed to one positional write. */
    static final int WRITE_CHUNK = 1 << 20;

    private final Path path;
    private final RandomAccessFile raf;
    private volatile FileChannel channel;
    private volatile boolean closed;

    ChannelFile(Path path) throws IOException {
      this.path = path;
      this.raf = new RandomAccessFile(path.toFile(), "rw");
      try {
        this.channel = FileChannel.open(path, StandardOpenOption.WRITE);
      } catch (IOException e) {
        raf.close();
        throw e;
      }
    }

    @Override
    public void write(byte[] src, int off, int len, long position) throws IOException {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(src, off, len);
      boolean interrupted = Thread.interrupted();
      try {
        for (int reopened = 0; b.hasRemaining(); ) {
          try {
            // At most WRITE_CHUNK bytes per call: the JDK copies a heap buffer into a temporary
            // direct buffer of the size asked for, and a frame of many MiB would get a new one
            // (fresh memory, page faults) nearly every time instead of the cached one.
            b.limit(Math.min(off + len, b.position() + WRITE_CHUNK));
            channel.write(b, position + (b.position() - off));
          } catch (java.nio.channels.ClosedChannelException e) {
            // an interrupt closed the channel mid-write: reopen and write the rest again
            interrupted |= Thread.interrupted();
            if (closed || ++reopened > 3) {
              throw e;
            }
            channel = FileChannel.open(path, StandardOpenOption.WRITE);
          } finally {
            b.limit(off + len);
          }
        }
      } catch (IOException e) {
        throw named(e);
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }

    @Override
    public void force() throws IOException {
      try {
        raf.getFD().sync();
      } catch (IOException e) {
        throw named(e);
      }
    }

    @Override
    public void truncate(long size) throws IOException {
      try {
        raf.setLength(size);
      } catch (IOException e) {
        throw named(e);
      }
    }

    /**
     * {@code e} as an error naming this file: the JDK reports a failed write, fsync or truncation
     * by its cause alone ({@code No space left on device}, {@code Input/output error}), and every
     * store error built from it must say which file failed.
     */
    private IOException named(IOException e) {
      if (e instanceof java.nio.file.FileSystemException f && f.getFile() != null) {
        return e;
      }
      String reason = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
      java.nio.file.FileSystemException n =
          new java.nio.file.FileSystemException(path.toString(), null, reason);
      n.initCause(e);
      return n;
    }

    @Override
    public long size() throws IOException {
      return raf.length();
    }

    @Override
    public void close() throws IOException {
      closed = true;
      try {
        channel.close();
      } finally {
        raf.close();
      }
    }
  }
}
