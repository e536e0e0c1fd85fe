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
 *   <li>{@code queue.dedup}, the base: the remembered ids below the head of the truncation that
 *       last compacted;
 *   <li>{@code queue.dedup.<from>}, a chunk per later truncation: only the ids of the messages it
 *       removed, from offset {@code from} (the head it started at).
 * </ul>
 *
 * <p>Why chunks: a truncation then writes what it removes, not the whole window's ids (a 5-minute
 * window at 10,000 deduplicated messages a second is 3 million ids, over 100 MB, at every retention
 * pass). Once {@value #MAX_CHUNKS} chunks exist, the next truncation merges them into one, or, when
 * they hold as many bytes as the base, writes a new base (the ids the window still remembers) and
 * deletes them: a truncation costs about what it removes, the files stay bounded by the window's
 * ids and their count by {@value #MAX_CHUNKS}.
 *
 * <p><b>Reading</b> takes every file and orders the ids by offset, so a later store of an id (after
 * its window) wins whatever file holds it. Crash safety follows: a chunk made durable before its
 * truncation ran repeats ids the log still holds, and chunks a merge or compaction did not get to
 * delete repeat ids (or hold older stores of them) that the file written in their place has; either
 * way reading gives the same answer. Stores written before chunks existed have a base only, read as
 * before.
 */
final class DedupSnapshot {
  static final String FILE = "queue.dedup";

  /** Chunks kept before a truncation compacts them into a new base. */
  static final int MAX_CHUNKS = 16;

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
   * removes, before it removes them: as a chunk of their own (none when they have no ids). When
   * {@value #MAX_CHUNKS} chunks exist already, it writes instead either one chunk in their place
   * (the ids from the lowest chunk's start to {@code to}), or, once the chunks have grown as large
   * as the base, a new base (every id below {@code to}), and then deletes the chunks it replaced.
   * So every id is rewritten a few times over its window, not at every truncation.
   */
  static void save(StoreIo io, Path dir, long from, long to, Ids ids) throws IOException {
    List<Path> chunks = chunks(dir);
    if (chunks.size() < MAX_CHUNKS) {
      List<Remembered> removed = ids.between(from, to);
      if (!removed.isEmpty()) {
        Blobs.writeAtomically(io, chunk(dir, from), encode(removed));
      }
      return;
    }
    long chunkBytes = 0;
    long lowest = from;
    for (Path c : chunks) {
      chunkBytes += Files.size(c);
      lowest = Math.min(lowest, chunkStart(c));
    }
    Path base = file(dir);
    Path kept;
    if (chunkBytes >= (Files.exists(base) ? Files.size(base) : 0)) {
      Blobs.writeAtomically(io, base, encode(ids.between(Long.MIN_VALUE, to)));
      kept = base;
    } else {
      kept = chunk(dir, lowest);
      Blobs.writeAtomically(io, kept, encode(ids.between(lowest, to)));
    }
    for (Path c : chunks) {
      if (!c.equals(kept)) {
        Files.deleteIfExists(c);
      }
    }
    io.syncDirectory(dir);
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
