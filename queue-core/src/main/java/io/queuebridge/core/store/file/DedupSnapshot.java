package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.store.support.DedupIndex.Remembered;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A queue's deduplication ids whose messages a truncation removed (BEHAVIOUR Q-DEDUP), so that the
 * ids outlive their messages across a restart: read at the queue's first deduplicated append after
 * an open, together with the messages still in the log.
 *
 * <p><b>Files</b>, in the queue's directory, each a {@link Blobs} envelope (magic {@code QBDD},
 * version 1) around a count (int), then per id: its UTF-8 bytes (int length, bytes), the offset it
 * was stored at (long), its message's creation time (epoch seconds long, nanos int); each replaced
 * atomically:
 *
 * <ul>
 *   <li>{@code queue.dedup}, the base: the oldest ids;
 *   <li>{@code queue.dedup.<from>}, a chunk: the ids of messages from offset {@code from} (the head
 *       the truncation that wrote it started at) up to the next file's.
 * </ul>
 *
 * <p><b>Why chunks</b>: a truncation writes the ids of what it removes as a chunk of its own, not
 * the whole window's ids again (a 5-minute window at 10,000 deduplicated messages a second is 3
 * million ids, over 100 MB, at every retention pass). Then, newest first, a chunk at least as large
 * as the file before it is merged with it into one file (the ids the queue's index still remembers
 * from the older one's start; into the base when the older one is the oldest), as a binary counter
 * carries: the files, ordered by offset, shrink from the oldest to the newest, so there are at most
 * about log2(ids / smallest chunk) of them, each id is rewritten about as many times over its
 * window, and an id the window dropped leaves the files at the next merge of its file, once as many
 * bytes came after it: the files stay bounded by about twice the window's ids.
 *
 * <p><b>Reading</b> takes every file and orders the ids by offset, so a later store of an id (after
 * its window) wins whatever file holds it. Crash safety follows: a chunk made durable before its
 * truncation ran repeats ids the log still holds, and a chunk a merge did not get to delete repeats
 * ids (or holds older stores of them) that the merged file has; either way reading gives the same
 * answer, and the next merge replaces it. Stores written before chunks existed have a base only,
 * read as before; a release before them reads the base alone.
 */
final class DedupSnapshot {
  static final String FILE = "queue.dedup";

  private static final String CHUNK_PREFIX = FILE + ".";

  private DedupSnapshot() {}

  static Path file(Path dir) {
    return dir.resolve(FILE);
  }

  /** The chunk of the truncation that started at offset {@code from}. */
  static Path chunk(Path dir, long from) {
    return dir.resolve(CHUNK_PREFIX + from);
  }

  /** The chunk files in {@code dir}, in no particular order. */
  static List<Path> chunks(Path dir) throws IOException {
    List<Path> out = new ArrayList<>();
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, CHUNK_PREFIX + "*")) {
      for (Path f : files) {
        String suffix = f.getFileName().toString().substring(CHUNK_PREFIX.length());
        if (!suffix.isEmpty() && suffix.chars().allMatch(c -> c >= '0' && c <= '9')) {
          out.add(f); // not "queue.dedup.<n>.tmp", a replace that did not finish
        }
      }
    }
    return out;
  }

  /**
   * The saved ids of the base and every chunk, ordered by offset; empty when the queue has none.
   *
   * @throws StoreCorruptedException if a file is damaged
   * @throws IOException if one cannot be read
   */
  static List<Remembered> read(String queue, Path dir) throws IOException {
    List<Remembered> out = new ArrayList<>(readFile(queue, file(dir)));
    for (Path chunk : chunks(dir)) {
      out.addAll(readFile(queue, chunk));
    }
    out.sort(Comparator.comparingLong(Remembered::offset));
    return out;
  }

  /** The ids of one file, empty when it does not exist. */
  static List<Remembered> readFile(String queue, Path f) throws IOException {
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

  /** The remembered ids whose message lies in {@code [from, to)}, as the queue's index has them. */
  @FunctionalInterface
  interface Ids {
    List<Remembered> between(long from, long to);
  }

  /**
   * Saves, durably, the ids of the messages a truncation from offset {@code from} to {@code to}
   * removes, before it removes them: as a chunk of their own (none when they have no ids); then
   * merges, newest first, every file at least as large as the one before it into that one (see the
   * class comment), deleting the files a merge replaced.
   */
  static void save(StoreIo io, Path dir, long from, long to, Ids ids) throws IOException {
    List<Remembered> removed = ids.between(from, to);
    if (removed.isEmpty()) {
      return;
    }
    Blobs.writeAtomically(io, chunk(dir, from), encode(removed));
    List<Path> files = new ArrayList<>(chunks(dir));
    files.sort(Comparator.comparingLong(DedupSnapshot::chunkStart));
    Path base = file(dir);
    if (Files.exists(base)) {
      files.add(0, base);
    }
    List<Long> sizes = new ArrayList<>();
    for (Path f : files) {
      sizes.add(Files.size(f));
    }
    boolean merged = false;
    for (int n = files.size(); n >= 2 && sizes.get(n - 1) >= sizes.get(n - 2); n--) {
      Path older = files.get(n - 2);
      Path newer = files.get(n - 1);
      boolean oldest = n == 2;
      Path into = oldest ? base : older;
      byte[] content = encode(ids.between(oldest ? Long.MIN_VALUE : chunkStart(older), to));
      Blobs.writeAtomically(io, into, content);
      for (Path replaced : new Path[] {older, newer}) {
        if (!replaced.equals(into)) {
          Files.deleteIfExists(replaced);
        }
      }
      files.set(n - 2, into);
      sizes.set(n - 2, (long) content.length);
      files.remove(n - 1);
      sizes.remove(n - 1);
      merged = true;
    }
    if (merged) {
      io.syncDirectory(dir);
    }
  }

  private static long chunkStart(Path chunk) {
    return Long.parseLong(chunk.getFileName().toString().substring(CHUNK_PREFIX.length()));
  }

  private static byte[] encode(List<Remembered> ids) {
    ByteSink payload = new ByteSink(4 + ids.size() * 48);
    payload.putInt(ids.size());
    for (Remembered r : ids) {
      payload.putString(r.id());
      payload.putLong(r.offset());
      payload.putLong(r.createdAt().getEpochSecond());
      payload.putInt(r.createdAt().getNano());
    }
    return Blobs.wrap(Blobs.DEDUP_MAGIC, payload.array(), payload.position());
  }
}
