package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.StoreCorruptedException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.zip.CRC32C;

/**
 * Small whole files (store marker, queue configuration, checkpoint snapshot, indexes, logical head,
 * verified segments) share one envelope, and are replaced atomically. Stateless and thread-safe.
 *
 * <p><b>Envelope</b> (big-endian, 16-byte header):
 *
 * <pre>
 *   0  int    magic     the file kind (see the constants)
 *   4  short  version   format version of that kind, 1 for all today
 *   6  short  reserved  0
 *   8  int    length    payload length; the file is exactly 16 + length bytes
 *  12  int    crc       CRC-32C of the payload
 *  16         payload
 * </pre>
 *
 * <p><b>Atomic replace</b> ({@link #writeAtomically}): write {@code <name>.tmp}, fsync it, rename
 * it over the target, fsync the directory. Why: a crash leaves either the old or the new file,
 * complete, and once the call returns the new one survives a machine crash. A replace that fails
 * before the rename (a full disk) removes its temporary file and leaves the target as it was.
 */
final class Blobs {
  static final int HEADER = 16;

  /** "QBST": the store marker, {@code qb-store}. */
  static final int STORE_MAGIC = 0x51425354;

  /** "QBQC": a queue's configuration, {@code queue.cfg} (JSON payload). */
  static final int QUEUE_CONFIG_MAGIC = 0x51425143;

  /** "QBCP": the checkpoint snapshot of a segment, {@code <base>.cpt}. */
  static final int CHECKPOINT_MAGIC = 0x51424350;

  /** "QBIX": a segment's offset index, {@code <base>.idx}. */
  static final int OFFSET_INDEX_MAGIC = 0x51424958;

  /** "QBTX": a segment's time index, {@code <base>.tix}. */
  static final int TIME_INDEX_MAGIC = 0x51425458;

  /** "QBHD": a queue's logical head, {@code queue.head}. */
  static final int HEAD_MAGIC = 0x51424844;

  /** "QBVF": the sealed segments of a queue verified so far, {@code queue.verified}. */
  static final int VERIFIED_MAGIC = 0x51425646;

  /** "QBDD": the deduplication ids of truncated messages, {@code queue.dedup}. */
  static final int DEDUP_MAGIC = 0x51424444;

  static final int VERSION = 1;

  private Blobs() {}

  /** The whole file content for {@code payload}. */
  static byte[] wrap(int magic, byte[] payload, int payloadLen) {
    ByteSink s = new ByteSink(HEADER + payloadLen);
    CRC32C crc = new CRC32C();
    crc.update(payload, 0, payloadLen);
    s.putInt(magic).putShort(VERSION).putShort(0).putInt(payloadLen).putInt((int) crc.getValue());
    s.putBytes(payload, 0, payloadLen);
    return s.toByteArray();
  }

  /**
   * The payload of {@code content} read from {@code file}.
   *
   * @throws StoreCorruptedException naming the file and what is wrong: not this kind of file, a
   *     newer version, a wrong length, a CRC mismatch
   */
  static byte[] unwrap(int magic, String kind, Path file, byte[] content, String queue) {
    if (content.length < HEADER) {
      throw new StoreCorruptedException(
          queue,
          file.toString(),
          content.length,
          kind + " is " + content.length + " bytes, shorter than its 16-byte header");
    }
    int m = ByteSource.getIntAt(content, 0);
    if (m != magic) {
      throw new StoreCorruptedException(
          queue,
          file.toString(),
          0,
          String.format("not a %s: magic 0x%08X, expected 0x%08X", kind, m, magic));
    }
    int version = (content[4] & 0xFF) << 8 | (content[5] & 0xFF);
    if (version != VERSION) {
      throw new StoreCorruptedException(
          queue,
          file.toString(),
          4,
          kind
              + " has format version "
              + version
              + " but this build reads version "
              + VERSION
              + (version > VERSION ? " (written by a newer version; upgrade to open it)" : ""));
    }
    int len = ByteSource.getIntAt(content, 8);
    if (len != content.length - HEADER) {
      throw new StoreCorruptedException(
          queue,
          file.toString(),
          8,
          kind + " declares a " + len + "-byte payload but holds " + (content.length - HEADER));
    }
    CRC32C crc = new CRC32C();
    crc.update(content, HEADER, len);
    if ((int) crc.getValue() != ByteSource.getIntAt(content, 12)) {
      throw new StoreCorruptedException(
          queue, file.toString(), HEADER, kind + " fails its CRC-32C check");
    }
    byte[] payload = new byte[len];
    System.arraycopy(content, HEADER, payload, 0, len);
    return payload;
  }

  /** Replaces {@code target} with {@code content}: tmp, fsync, rename, fsync directory. */
  static void writeAtomically(StoreIo io, Path target, byte[] content) throws IOException {
    Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    try {
      try (StoreIo.WritableFile f = io.openWritable(tmp, true)) {
        f.write(content, 0, content.length, 0);
        f.force();
      }
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      deleteQuietly(tmp, e);
      throw e;
    }
    io.syncDirectory(target.getParent());
  }

  /**
   * Removes the temporary file of a failed replace (on a full disk it holds space the next write
   * needs), keeping {@code cause} as the error; a failure to remove it is added to {@code cause}.
   */
  static void deleteQuietly(Path tmp, IOException cause) {
    try {
      Files.deleteIfExists(tmp);
    } catch (IOException e) {
      cause.addSuppressed(e);
    }
  }
}
