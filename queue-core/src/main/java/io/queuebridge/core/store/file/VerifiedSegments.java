package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.StoreCorruptedException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sealed segments of one queue that opening has verified frame by frame, each with the state of
 * its file then: {@code queue.verified} in the queue's directory. With {@code
 * verify.on.open=sealed-once} (the default) opening skips a sealed segment whose file still has the
 * recorded identity, size and modification time, so each sealed segment is read once after it was
 * sealed, not at every open (BEHAVIOUR F-RECOVER).
 *
 * <p><b>Format</b>: the {@link Blobs} envelope, magic {@code "QBVF"}, version 1; the payload is an
 * {@code int} count, then per segment {@code long} base offset, {@code long} size, {@code long}
 * modification time seconds, {@code int} nanoseconds and a string: the file's identity ({@code
 * (dev=…,ino=…)} on Linux, empty where the file system has none). Replaced atomically ({@link
 * Blobs#writeAtomically}). A missing or damaged file means that nothing was verified: every sealed
 * segment is scanned again and the file written anew, so losing it costs one full scan, never a
 * wrong answer.
 *
 * <p><b>What a stamp cannot see</b>: a change that keeps the file's size and modification time (a
 * bit flipped at rest by the device, or a tool that restores the time). Reads still verify every
 * frame they return, and {@code verify.on.open=all} rescans every segment at every open.
 *
 * <p>Stateless and thread-safe.
 */
final class VerifiedSegments {
  private static final Logger LOG = LoggerFactory.getLogger(VerifiedSegments.class);
  static final String FILE = "queue.verified";

  private VerifiedSegments() {}

  /**
   * A segment file's state when it was verified.
   *
   * @param base the segment's base offset
   * @param size its size in bytes
   * @param modified its modification time
   * @param key its identity as text, empty where the file system has none
   */
  record Stamp(long base, long size, Instant modified, String key) {

    /**
     * The state of the segment file {@code file} of base {@code base} now.
     *
     * @throws IOException if it cannot be read (a missing file included)
     */
    static Stamp of(long base, Path file) throws IOException {
      BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
      Object key = a.fileKey();
      return new Stamp(
          base, a.size(), a.lastModifiedTime().toInstant(), key == null ? "" : key.toString());
    }
  }

  /** The file of the queue whose log is in {@code dir}. */
  static Path file(Path dir) {
    return dir.resolve(FILE);
  }

  /**
   * The stamps recorded for the queue whose log is in {@code dir}, by base offset; empty when the
   * file is missing, and when it is damaged (logged: its segments are verified again).
   *
   * @throws IOException if it cannot be read
   */
  static Map<Long, Stamp> read(String queue, Path dir) throws IOException {
    Path f = file(dir);
    byte[] content;
    try {
      content = Files.readAllBytes(f);
    } catch (NoSuchFileException e) {
      return Map.of();
    }
    try {
      byte[] payload =
          Blobs.unwrap(Blobs.VERIFIED_MAGIC, "verified-segments file", f, content, queue);
      ByteSource src = new ByteSource(payload, 0, payload.length);
      int n = src.getInt();
      if (n < 0 || n > payload.length) {
        throw new FormatException("bad count " + n, 0);
      }
      Map<Long, Stamp> out = new HashMap<>();
      for (int i = 0; i < n; i++) {
        long base = src.getLong();
        long size = src.getLong();
        long seconds = src.getLong();
        int nanos = src.getInt();
        String key = src.getString();
        out.put(base, new Stamp(base, size, Instant.ofEpochSecond(seconds, nanos), key));
      }
      if (src.remaining() != 0) {
        throw new FormatException(src.remaining() + " trailing bytes", src.position());
      }
      return out;
    } catch (StoreCorruptedException | FormatException | java.time.DateTimeException e) {
      LOG.warn(
          "queue {}: {} is damaged ({}); its sealed segments are verified again",
          queue,
          f,
          e.getMessage());
      return Map.of();
    }
  }

  /** Replaces the file of the queue whose log is in {@code dir} with {@code stamps}, durably. */
  static void write(StoreIo io, Path dir, Collection<Stamp> stamps) throws IOException {
    ByteSink payload = new ByteSink(16 + stamps.size() * 64);
    Map<Long, Stamp> sorted = new TreeMap<>();
    for (Stamp s : stamps) {
      sorted.put(s.base(), s);
    }
    payload.putInt(sorted.size());
    for (Stamp s : sorted.values()) {
      payload
          .putLong(s.base())
          .putLong(s.size())
          .putLong(s.modified().getEpochSecond())
          .putInt(s.modified().getNano())
          .putString(s.key());
    }
    Blobs.writeAtomically(
        io, file(dir), Blobs.wrap(Blobs.VERIFIED_MAGIC, payload.array(), payload.position()));
  }
}
