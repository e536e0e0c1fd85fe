package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.OffsetOutOfRangeException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.message.Message;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Reads one queue's log. Takes no lock: it reads the tail (published after the write it covers),
 * finds the segment holding an offset, starts at the nearest offset-index entry ({@link
 * IndexLoader}) and reads the file through {@link ReadHandles}.
 *
 * <p><b>Verification.</b> Every frame read is checked for framing and offset continuity, and every
 * frame decoded for its CRC and format version: a record whose CRC does not match is never
 * returned; damage fails the read with a {@link StoreCorruptedException} naming the file and the
 * byte position. An index that points a read at the wrong place is rebuilt and the read retried
 * once. A segment deleted by a concurrent truncation is skipped (its offsets are gone). A range
 * that opening found damaged ({@link SegmentSet#damage}) is never read: a batch stops before it, a
 * read inside it fails with a {@link StoreCorruptedException} naming the damage, even where an
 * index could lead past the bad frame (BEHAVIOUR F-RECOVER).
 *
 * <p>Thread-safe.
 */
final class LogReader {
  private final String queue;
  private final LogEnv env;
  private final SegmentSet segments;
  private final IndexLoader indexes;
  private final Predicate<Segment> gone;

  /**
   * @param gone whether a segment whose file could not be read was deleted by a truncation (its
   *     offsets are gone, the read goes on past them); asked only after a failed or empty read, and
   *     may drop the segment from {@code segments} (a reader beside the writer finds out this way)
   */
  LogReader(SegmentSet segments, LogEnv env, IndexLoader indexes, Predicate<Segment> gone) {
    this.queue = segments.queue;
    this.env = env;
    this.segments = segments;
    this.indexes = indexes;
    this.gone = gone;
  }

  /**
   * The message at {@code offset}; the caller checked that the log is open.
   *
   * @throws OffsetOutOfRangeException if {@code offset} is outside {@code [head, tail)} or was
   *     truncated away meanwhile
   * @throws StoreCorruptedException if the frame holding it is damaged
   * @throws QueueStoreException if the segment cannot be read
   */
  Message read(long offset) {
    long t = segments.tail();
    long h = segments.head();
    if (offset < h || offset >= t) {
      throw new OffsetOutOfRangeException(queue, offset, h, t);
    }
    List<Message> one = readBatch(offset, 1, true);
    if (one.isEmpty() || one.get(0).offset() != offset) {
      throw new OffsetOutOfRangeException(queue, offset, segments.head(), segments.tail());
    }
    return one.get(0);
  }

  /**
   * Up to {@code limit} (positive) messages from {@code max(start, head)} in offset order, fewer at
   * the tail; the caller checked that the log is open.
   *
   * @throws StoreCorruptedException if a frame to return is damaged, or {@code start} lies in a
   *     range found damaged on open (a batch that reaches such a range ends before it)
   * @throws QueueStoreException if a segment cannot be read
   */
  List<Message> readBatch(long start, int limit) {
    return readBatch(start, limit, false);
  }

  private List<Message> readBatch(long start, int limit, boolean exact) {
    List<Message> out = new ArrayList<>(Math.min(limit, 1024));
    long offset = Math.max(start, segments.head());
    int stalls = 0;
    while (out.size() < limit) {
      long t = segments.tail();
      if (offset >= t) {
        break;
      }
      Segment seg = segments.floor(offset);
      if (seg == null) { // truncated meanwhile
        if (exact) {
          break;
        }
        offset = Math.max(offset, segments.head());
        if (++stalls > 100) {
          break;
        }
        continue;
      }
      RecoveryReport.Damage damaged = segments.damageFrom(offset);
      if (damaged != null && damaged.fromOffset() <= offset) {
        if (!out.isEmpty()) {
          break; // what lies before the damage
        }
        throw segments.unservable(damaged, offset);
      }
      Long nextBase = segments.nextBase(seg);
      long until = nextBase != null ? Math.min(nextBase, t) : Math.min(seg.endOffset, t);
      if (damaged != null) {
        until = Math.min(until, damaged.fromOffset());
      }
      int before = out.size();
      try {
        readSegment(seg, offset, until, limit - out.size(), out, true);
      } catch (NoSuchFileException ex) {
        if (!gone.test(seg)) {
          StoreCorruptedException missing = seg.corruption(queue, -1, "segment file is missing");
          missing.initCause(ex);
          throw missing;
        }
      } catch (IOException ex) {
        if (gone.test(seg)) {
          continue;
        }
        throw new QueueStoreException(queue, "reading " + seg.logFile + " failed: " + ex, ex);
      }
      int got = out.size() - before;
      if (got == 0) {
        if (gone.test(seg)) {
          if (exact) {
            break;
          }
          offset = Math.max(offset, segments.head());
          if (++stalls > 100) {
            break;
          }
          continue;
        }
        throw seg.corruption(queue, -1, "offset " + offset + " is missing from the segment");
      }
      offset += got;
    }
    return out;
  }

  /**
   * Reads messages {@code [from, until)} of {@code seg} (at most {@code max}) into {@code out},
   * verifying each frame's framing, continuity and CRC before decoding it.
   */
  private void readSegment(
      Segment seg, long from, long until, int max, List<Message> out, boolean mayRebuild)
      throws IOException {
    SparseIndex.View idx = indexes.offsets(seg);
    int i = idx.floor(from);
    long pos = i < 0 ? 0 : idx.values[i];
    long expected = i < 0 ? seg.baseOffset : idx.keys[i];
    long valid = seg.size;
    int chunk = max == 1 ? 8192 : 65536;
    int taken = 0;
    boolean rebuild = false;
    try (ReadHandles.Reader reader = env.handles().reader(seg)) {
      ChunkReader r = new ChunkReader(reader::read, valid, chunk);
      boolean first = true;
      while (taken < max && from < until) {
        int at = r.fill(pos, Frames.HEADER);
        if (at < 0) {
          throw seg.corruption(
              queue,
              pos,
              "the file ends (valid size "
                  + valid
                  + " bytes) before offset "
                  + from
                  + " (expected up to "
                  + until
                  + ")");
        }
        byte[] b = r.buffer();
        Frames.FrameHeader h = Frames.header(b, at);
        boolean framingOk =
            Frames.magic(b, at) == Frames.MAGIC
                && h.length() >= Frames.HEADER
                && h.length() <= valid - pos
                && h.baseOffset() == expected
                && h.count() >= 1;
        if (!framingOk) {
          if (first && i >= 0 && mayRebuild && seg.sealed) {
            rebuild = true; // the index pointed at the wrong place: it is damaged
            break;
          }
          throw seg.corruption(queue, pos, Frames.describeBadFrame(b, at, h, pos, valid, expected));
        }
        first = false;
        if (from < h.endOffset()) {
          at = r.fill(pos, h.length());
          b = r.buffer();
          if (at < 0) {
            throw seg.corruption(queue, pos, "short read of a " + h.length() + "-byte frame");
          }
          if (Frames.crc(b, at, h.length()) != h.crc()) {
            throw seg.corruption(
                queue, pos, "CRC-32C mismatch in the frame of offset " + h.baseOffset());
          }
          if (h.version() != Frames.VERSION) {
            throw seg.corruption(queue, pos, Frames.versionProblem(h.version()));
          }
          int skip = (int) (from - h.baseOffset());
          int want = (int) Math.min(Math.min(max - taken, until - from), h.count() - skip);
          List<Message> decoded;
          try {
            decoded = Frames.decode(b, at, h, skip, want);
          } catch (FormatException e) {
            throw seg.corruption(
                queue, pos + e.position() - at, "undecodable record: " + e.getMessage());
          }
          out.addAll(decoded);
          taken += decoded.size();
          from += decoded.size();
        }
        pos += h.length();
        expected = h.endOffset();
      }
    }
    if (rebuild) {
      indexes.rebuildDamaged(seg);
      readSegment(seg, from, until, max, out, false);
    }
  }
}
