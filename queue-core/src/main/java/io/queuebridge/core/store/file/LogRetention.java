package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.QueueStoreException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Retention of one queue's log: where to cut by time or size, and the cut itself. The lookups are
 * coarse (segment and time-index granularity), never later than the exact answer and never
 * over-trimming. {@link #truncate} is exact: the head becomes the requested offset, persisted as
 * the queue's logical head ({@link LogHead}) when it falls inside a segment, and the segments that
 * lie wholly below it are deleted.
 *
 * <p>Thread-safe: the lookups take no lock; {@link #truncate} runs under the append lock.
 */
final class LogRetention {
  private static final Logger LOG = LoggerFactory.getLogger(LogRetention.class);

  private final String queue;
  private final LogEnv env;
  private final SegmentSet segments;
  private final IndexLoader indexes;

  LogRetention(SegmentSet segments, LogEnv env, IndexLoader indexes) {
    this.queue = segments.queue;
    this.env = env;
    this.segments = segments;
    this.indexes = indexes;
  }

  /**
   * The first offset of the first batch whose running maximum record time reaches {@code
   * timeMillis}, found through the time indexes: never later than the exact answer; the tail when
   * no record reaches it. The caller checked that the log is open.
   *
   * @throws QueueStoreException if a time index cannot be read
   */
  long timeOffset(long timeMillis) {
    for (Segment seg : segments.oldestFirst()) {
      long segMax = indexes.maxTime(seg);
      if (segMax == Long.MIN_VALUE || segMax < timeMillis) {
        continue;
      }
      SparseIndex.View tv;
      try {
        tv = indexes.times(seg);
      } catch (IOException e) {
        throw new QueueStoreException(
            queue, "reading the time index of " + seg.logFile + " failed", e);
      }
      int k = tv.ceiling(timeMillis);
      long answer;
      if (k == 0 || tv.size == 0) {
        answer = seg.baseOffset;
      } else if (k >= tv.size) {
        answer = tv.lastValue();
      } else {
        answer = tv.values[k - 1];
      }
      return Math.max(answer, segments.head());
    }
    return segments.tail();
  }

  /**
   * The base of the newest segment that does not fit in {@code retentionBytes} (not negative)
   * together with every newer one; the head when everything fits. Never over-trims. The caller
   * checked that the log is open.
   */
  long sizeOffset(long retentionBytes) {
    long sum = 0;
    for (Segment seg : segments.newestFirst()) {
      sum += seg.size;
      if (sum > retentionBytes) {
        return Math.max(seg.baseOffset, segments.head());
      }
    }
    return segments.head();
  }

  /**
   * Moves the head to {@code minOffset} (clamped to the tail) and deletes the whole segments below
   * it. When the new head is not a segment's base, it is first persisted in the head file, so that
   * the messages below it stay unreadable after a reopen; when everything goes and the active
   * segment is not empty, the log first continues in a fresh segment at the tail, so that the old
   * one can go too. Failing to delete a file or to fsync the directory afterwards is only logged:
   * the segment is gone from the log either way.
   *
   * @throws io.queuebridge.core.errors.QueueNotFoundException if the queue was deleted
   * @throws io.queuebridge.core.errors.StoreClosedException if the store was closed
   * @throws QueueStoreException if the log is broken, or the roll or the head file failed (nothing
   *     was removed)
   */
  void truncate(long minOffset) {
    segments.appendLock.lock();
    try {
      segments.checkOpen();
      long t = segments.tail();
      long min = Math.min(minOffset, t);
      if (min <= segments.head()) {
        return;
      }
      if (min >= t && !segments.active().isEmpty()) {
        segments.checkWritable();
        try {
          segments.roll(); // everything goes: continue in a fresh segment at the tail
        } catch (IOException e) {
          throw new QueueStoreException(queue, "truncating queue " + queue + " failed: " + e, e);
        }
      }
      Segment holder = segments.floor(min);
      boolean persisted = false;
      if (holder == null || holder.baseOffset != min) {
        try {
          LogHead.write(env.io(), segments.dir, min);
          persisted = true;
        } catch (IOException e) {
          throw new QueueStoreException(
              queue,
              "truncating queue "
                  + queue
                  + " to offset "
                  + min
                  + " failed writing "
                  + LogHead.file(segments.dir)
                  + ": "
                  + e,
              e);
        }
      }
      segments.setLogicalHead(min);
      boolean deleted = false;
      boolean leftovers = false;
      Segment active = segments.active();
      for (Segment seg : new ArrayList<>(segments.oldestFirst())) {
        if (seg == active) {
          break;
        }
        Long next = segments.nextBase(seg);
        if (next == null || next > min) {
          break;
        }
        segments.removeOldest(seg);
        leftovers |= !deleteFiles(seg);
        deleted = true;
      }
      if (leftovers && !persisted) {
        // a segment file that could not be deleted would bring its messages back on reopen
        try {
          LogHead.write(env.io(), segments.dir, min);
        } catch (IOException e) {
          LOG.warn(
              "queue {}: could not write {} after a failed deletion: {}",
              queue,
              LogHead.file(segments.dir),
              e.toString());
        }
      }
      if (deleted) {
        try {
          env.io().syncDirectory(segments.dir);
        } catch (IOException e) {
          LOG.warn("queue {}: directory sync after truncation failed: {}", queue, e.toString());
        }
      }
    } finally {
      segments.appendLock.unlock();
    }
  }

  /** Deletes the segment's files; false if its {@code .log} file could not be deleted. */
  private boolean deleteFiles(Segment seg) {
    seg.deleted = true;
    env.handles().invalidate(seg);
    env.sealedIndexes().invalidate(seg);
    boolean logGone = true;
    for (Path p : List.of(seg.logFile, seg.indexFile, seg.timeIndexFile, seg.checkpointFile)) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException e) {
        LOG.warn("queue {}: could not delete {}: {}", queue, p, e.toString());
        logGone &= !p.equals(seg.logFile);
      }
    }
    return logGone;
  }
}
