package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.StoreCorruptedException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * A queue's logical head, {@code queue.head} in the queue's directory: the first offset a reader
 * may see, written by an exact truncation that cuts inside a segment. Whole segments below it are
 * deleted as before; the part of the first kept segment below it stays on disk but is never
 * returned. The file is absent until the first truncation writes it, so a store written before the
 * file existed opens exactly as before (the head is the first segment's base).
 *
 * <p><b>Format</b>: the {@link Blobs} envelope, magic {@code "QBHD"}, version 1, with an 8-byte
 * big-endian payload: the head offset. Replaced atomically ({@link Blobs#writeAtomically}: tmp,
 * fsync, rename, directory fsync), so a reader beside the writer sees the old or the new value,
 * never a torn one.
 *
 * <p>Stateless and thread-safe.
 */
final class LogHead {
  static final String FILE = "queue.head";

  private LogHead() {}

  /** The head file of the queue whose log is in {@code dir}. */
  static Path file(Path dir) {
    return dir.resolve(FILE);
  }

  /**
   * The persisted head, or empty when the queue has no head file.
   *
   * @throws StoreCorruptedException if the file is damaged or holds a negative offset
   * @throws IOException if it cannot be read
   */
  static OptionalLong read(String queue, Path dir) throws IOException {
    Path f = file(dir);
    byte[] content;
    try {
      content = Files.readAllBytes(f);
    } catch (NoSuchFileException e) {
      return OptionalLong.empty();
    }
    byte[] payload = Blobs.unwrap(Blobs.HEAD_MAGIC, "queue head", f, content, queue);
    if (payload.length != Long.BYTES) {
      throw new StoreCorruptedException(
          queue,
          f.toString(),
          Blobs.HEADER,
          "queue head holds " + payload.length + " payload bytes, expected " + Long.BYTES);
    }
    long head = ByteSource.getLongAt(payload, 0);
    if (head < 0) {
      throw new StoreCorruptedException(
          queue, f.toString(), Blobs.HEADER, "queue head is " + head + ", expected an offset >= 0");
    }
    return OptionalLong.of(head);
  }

  /** Replaces the head file of the log in {@code dir} with {@code head}, durably. */
  static void write(StoreIo io, Path dir, long head) throws IOException {
    ByteSink payload = new ByteSink(Long.BYTES);
    payload.putLong(head);
    Blobs.writeAtomically(
        io, file(dir), Blobs.wrap(Blobs.HEAD_MAGIC, payload.array(), payload.position()));
  }
}
