package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.StoreCorruptedException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The offset and time indexes of one queue's segments, for reads and time lookups. The active
 * segment's are in memory; a sealed segment's come from the store-wide cache ({@link
 * LogEnv#sealedIndexes}), else from its {@code .idx} and {@code .tix} files. Indexes are hints:
 * files that are missing, damaged or inconsistent with the segment are rebuilt by scanning the
 * segment's frame headers and saved again (a failure to save is only logged; a read-only store
 * keeps them in memory only), and a reader that finds an index pointing at the wrong place has it
 * rebuilt ({@link #rebuildDamaged}).
 *
 * <p>Called by concurrent readers without a lock: two of them may load or rebuild one segment's
 * indexes at once; either result is correct (the cache keeps the last), and saving is best effort.
 */
final class IndexLoader {
  private static final Logger LOG = LoggerFactory.getLogger(IndexLoader.class);

  private final String queue;
  private final LogEnv env;
  private final FileStoreConfig config;
  private final SegmentSet segments;

  IndexLoader(SegmentSet segments, LogEnv env) {
    this.queue = segments.queue;
    this.env = env;
    this.config = env.config();
    this.segments = segments;
  }

  /**
   * The offset index of {@code seg}: in memory for the active one, cached or loaded for sealed
   * ones.
   *
   * @throws StoreCorruptedException if a rebuild finds the segment itself damaged
   * @throws IOException if the segment cannot be read
   */
  SparseIndex.View offsets(Segment seg) throws IOException {
    SparseIndex live = seg.offsetIndex;
    if (live != null) {
      return live.view();
    }
    return sealed(seg).offsets().view();
  }

  /** The time index of {@code seg}; as {@link #offsets}. */
  SparseIndex.View times(Segment seg) throws IOException {
    SparseIndex live = seg.timeIndex;
    if (live != null) {
      return live.view();
    }
    return sealed(seg).times().view();
  }

  /**
   * The largest record time in {@code seg}, {@link Long#MIN_VALUE} when it has none; for a sealed
   * segment learnt from its time index the first time it is asked.
   *
   * @throws QueueStoreException if the time index cannot be read
   */
  long maxTime(Segment seg) {
    if (!seg.sealed || seg.maxTime != Long.MIN_VALUE) {
      return seg.maxTime;
    }
    try {
      sealed(seg);
      if (seg.maxTime == Long.MIN_VALUE) {
        SparseIndex.View tv = sealed(seg).times().view();
        if (tv.size > 0) {
          seg.maxTime = tv.lastKey();
        }
      }
      return seg.maxTime;
    } catch (IOException e) {
      throw new QueueStoreException(
          queue, "reading the time index of " + seg.logFile + " failed", e);
    }
  }

  /**
   * Rebuilds the indexes of the sealed segment {@code seg} after a read found its offset index
   * pointing at the wrong place, and caches them.
   *
   * @throws StoreCorruptedException if the segment itself is damaged
   * @throws IOException if the segment cannot be read
   */
  void rebuildDamaged(Segment seg) throws IOException {
    LOG.warn("queue {}: offset index of {} is damaged; rebuilding it", queue, seg.logFile);
    env.sealedIndexes().put(seg, rebuild(seg));
  }

  private LogEnv.SegmentIndexes sealed(Segment seg) throws IOException {
    LogEnv.SegmentIndexes cached = env.sealedIndexes().getIfPresent(seg);
    if (cached != null) {
      return cached;
    }
    LogEnv.SegmentIndexes loaded = load(seg);
    env.sealedIndexes().put(seg, loaded);
    return loaded;
  }

  /** Loads a sealed segment's index files; rebuilds them when missing or damaged. */
  private LogEnv.SegmentIndexes load(Segment seg) throws IOException {
    try {
      SparseIndex offsets = loadIndex(seg.indexFile, Blobs.OFFSET_INDEX_MAGIC, seg, true);
      SparseIndex times = loadIndex(seg.timeIndexFile, Blobs.TIME_INDEX_MAGIC, seg, false);
      if (offsets.size() > 0 && times.size() > 0) {
        SparseIndex.View ov = offsets.view();
        if (ov.keys[0] == seg.baseOffset
            && ov.lastKey() < seg.endOffset
            && ov.lastValue() < seg.size) {
          seg.maxTime = times.view().lastKey();
          return new LogEnv.SegmentIndexes(offsets, times);
        }
      }
      LOG.warn("queue {}: indexes of {} are inconsistent; rebuilding them", queue, seg.logFile);
    } catch (NoSuchFileException e) {
      LOG.info("queue {}: index of {} is missing; rebuilding it", queue, seg.logFile);
    } catch (StoreCorruptedException | FormatException e) {
      LOG.warn(
          "queue {}: index of {} is damaged ({}); rebuilding it",
          queue,
          seg.logFile,
          e.getMessage());
    }
    return rebuild(seg);
  }

  private SparseIndex loadIndex(Path file, int magic, Segment seg, boolean offsets)
      throws IOException {
    byte[] payload = Blobs.unwrap(magic, "segment index", file, Files.readAllBytes(file), queue);
    return SparseIndex.parse(payload, seg.baseOffset, offsets, offsets ? 0 : seg.baseOffset);
  }

  /** Scans a sealed segment's frame headers to rebuild both indexes, then saves them. */
  private LogEnv.SegmentIndexes rebuild(Segment seg) throws IOException {
    env.indexRebuilds().increment();
    Segment scratch = segments.segment(seg.baseOffset);
    scratch.activate(null, 0, seg.baseOffset);
    long pos = 0;
    long expected = seg.baseOffset;
    // a segment found damaged on open is indexed up to its first bad frame: what lies beyond is
    // never read (LogReader)
    long stop = seg.size;
    for (RecoveryReport.Damage d : segments.damage()) {
      if (d.file().equals(seg.logFile)) {
        stop = Math.min(stop, d.position());
      }
    }
    try (ReadHandles.Reader reader = env.handles().reader(seg)) {
      ChunkReader r = new ChunkReader(reader::read, seg.size, 1 << 20);
      while (expected < seg.endOffset && pos < stop) {
        int at = r.fill(pos, Frames.HEADER);
        if (at < 0) {
          throw seg.corruption(
              queue,
              pos,
              "the file ends before offset " + expected + " while rebuilding its index");
        }
        byte[] b = r.buffer();
        Frames.FrameHeader h = Frames.header(b, at);
        if (Frames.magic(b, at) != Frames.MAGIC
            || h.length() < Frames.HEADER
            || h.length() > seg.size - pos
            || h.baseOffset() != expected
            || h.count() < 1) {
          throw seg.corruption(
              queue, pos, Frames.describeBadFrame(b, at, h, pos, seg.size, expected));
        }
        scratch.recordFrame(h, config);
        expected = h.endOffset();
        pos += h.length();
      }
    }
    scratch.completeTimeIndex();
    seg.maxTime = scratch.maxTime;
    if (!env.writable()) {
      return new LogEnv.SegmentIndexes(scratch.offsetIndex, scratch.timeIndex);
    }
    try {
      Blobs.writeAtomically(
          env.io(),
          seg.indexFile,
          scratch.offsetIndex.toFile(Blobs.OFFSET_INDEX_MAGIC, seg.baseOffset));
      Blobs.writeAtomically(
          env.io(),
          seg.timeIndexFile,
          scratch.timeIndex.toFile(Blobs.TIME_INDEX_MAGIC, seg.baseOffset));
    } catch (IOException e) {
      LOG.warn(
          "queue {}: could not save the rebuilt indexes of {}: {}",
          queue,
          seg.logFile,
          e.toString());
    }
    return new LogEnv.SegmentIndexes(scratch.offsetIndex, scratch.timeIndex);
  }
}
