package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.StoreCorruptedException;
import java.io.IOException;
import java.util.Map;

/**
 * Walks the frames of a segment file in order, checking each one's framing, length, CRC, format
 * version and offset continuity, and records every whole, valid frame in the segment ({@link
 * Segment#recordFrame}: indexes, times, size, end offset). It stops at the first frame that is torn
 * (the file ends inside it), damaged or out of sequence, and says why; what lies beyond is not
 * trusted. Recovery cuts the file there; a reader beside the writer treats it as not written yet.
 *
 * <p>Stateless and thread-safe; one call per scan.
 */
final class FrameScan {
  private FrameScan() {}

  /**
   * Where a scan stopped.
   *
   * @param position bytes of whole, valid frames from the start of the file
   * @param endOffset the offset after the last valid frame
   * @param problem why the scan stopped before the end of the file; null when it reached the end
   */
  record Result(long position, long endOffset, String problem) {}

  /**
   * Scans {@code seg}'s frames from byte {@code pos}, where a frame for offset {@code expected}
   * starts, up to {@code fileSize}; merges each frame's checkpoints into {@code checkpoints}. No
   * frame may hold offsets past {@code limit}: the next segment's base for a sealed segment, {@link
   * Long#MAX_VALUE} for the newest.
   *
   * @throws StoreCorruptedException for a whole frame of another format version: refused, never cut
   *     or skipped
   * @throws IOException if the file cannot be read
   */
  static Result scan(
      String queue,
      Segment seg,
      ChunkReader.Input in,
      long pos,
      long expected,
      long fileSize,
      long limit,
      FileStoreConfig config,
      Map<String, String> checkpoints)
      throws IOException {
    ChunkReader r = new ChunkReader(in, fileSize, 1 << 20);
    String problem = null;
    while (pos < fileSize) {
      int at = r.fill(pos, Frames.HEADER);
      if (at < 0) {
        problem = "torn frame header (" + (fileSize - pos) + " bytes at the end)";
        break;
      }
      byte[] b = r.buffer();
      if (Frames.magic(b, at) != Frames.MAGIC) {
        problem = String.format("bad frame magic 0x%08X", Frames.magic(b, at));
        break;
      }
      Frames.FrameHeader h = Frames.header(b, at);
      if (h.length() < Frames.HEADER) {
        problem = "bad frame length " + h.length();
        break;
      }
      if (h.length() > fileSize - pos) {
        problem = "torn frame: declares " + h.length() + " bytes, " + (fileSize - pos) + " remain";
        break;
      }
      at = r.fill(pos, h.length());
      b = r.buffer();
      if (at < 0) {
        problem = "short read of a " + h.length() + "-byte frame";
        break;
      }
      if (Frames.crc(b, at, h.length()) != h.crc()) {
        problem = "CRC-32C mismatch in the frame of offset " + h.baseOffset();
        break;
      }
      if (h.version() != Frames.VERSION) {
        throw seg.corruption(queue, pos, Frames.versionProblem(h.version()));
      }
      if (h.baseOffset() != expected || h.count() < 1) {
        // magic and length passed above: this names the offsets
        problem = Frames.describeBadFrame(b, at, h, pos, fileSize, expected);
        break;
      }
      if (h.endOffset() > limit) {
        problem =
            "frame of offsets ["
                + h.baseOffset()
                + ", "
                + h.endOffset()
                + ") runs past offset "
                + limit
                + ", where the next segment starts";
        break;
      }
      Map<String, String> delta;
      try {
        delta = Frames.checkpoints(b, at, h);
      } catch (FormatException e) {
        problem = "undecodable checkpoint section: " + e.getMessage();
        break;
      }
      checkpoints.putAll(delta);
      seg.recordFrame(h, config);
      expected = h.endOffset();
      pos += h.length();
    }
    return new Result(pos, expected, problem);
  }
}
