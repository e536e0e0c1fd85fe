package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.store.support.DedupIndex.Remembered;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A queue's deduplication ids whose messages a truncation removed (BEHAVIOUR Q-DEDUP), {@code
 * queue.dedup} in the queue's directory: written before every truncation of a queue that
 * deduplicates, so that the ids outlive their messages across a restart; read at the queue's first
 * deduplicated append after an open, together with the messages still in the log.
 *
 * <p>Format: the envelope of {@link Blobs} (magic {@code QBDD}, version 1) around a count (int),
 * then per id: its UTF-8 bytes (int length, bytes), the offset it was stored at (long), its
 * message's creation time (epoch seconds long, nanos int). Replaced atomically. Absent in stores
 * written before it existed, which open as before (nothing was truncated away then).
 */
final class DedupSnapshot {
  static final String FILE = "queue.dedup";

  private DedupSnapshot() {}

  static Path file(Path dir) {
    return dir.resolve(FILE);
  }

  /**
   * The saved ids, empty when the queue has no snapshot.
   *
   * @throws StoreCorruptedException if the file is damaged
   * @throws IOException if it cannot be read
   */
  static List<Remembered> read(String queue, Path dir) throws IOException {
    Path f = file(dir);
    byte[] content;
    try {
      content = Files.readAllBytes(f);
    } catch (NoSuchFileException e) {
      return List.of();
    }
    byte[] payload = Blobs.unwrap(Blobs.DEDUP_MAGIC, "dedup snapshot", f, content, queue);
    try {
      ByteSource in = new ByteSource(payload, 0, payload.length);
      int n = in.getInt();
      List<Remembered> out = new ArrayList<>(Math.max(0, Math.min(n, 1 << 16)));
      for (int i = 0; i < n; i++) {
        String id = in.getString();
        long offset = in.getLong();
        long seconds = in.getLong();
        int nanos = in.getInt();
        out.add(new Remembered(id, offset, Instant.ofEpochSecond(seconds, nanos)));
      }
      return out;
    } catch (RuntimeException e) {
      throw new StoreCorruptedException(
          queue, f.toString(), Blobs.HEADER, "dedup snapshot cannot be decoded: " + e);
    }
  }

  /** Replaces the snapshot of the log in {@code dir} with {@code ids}, durably. */
  static void write(StoreIo io, Path dir, List<Remembered> ids) throws IOException {
    ByteSink payload = new ByteSink(4 + ids.size() * 48);
    payload.putInt(ids.size());
    for (Remembered r : ids) {
      payload.putString(r.id());
      payload.putLong(r.offset());
      payload.putLong(r.createdAt().getEpochSecond());
      payload.putInt(r.createdAt().getNano());
    }
    Blobs.writeAtomically(
        io, file(dir), Blobs.wrap(Blobs.DEDUP_MAGIC, payload.array(), payload.position()));
  }
}
