package io.queuebridge.core.store.file;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One segment of a queue's log: the {@code .log} file of frames ({@link Frames}) starting at {@link
 * #baseOffset}, its sparse offset index ({@code .idx}), time index ({@code .tix}) and checkpoint
 * snapshot ({@code .cpt}).
 *
 * <p><b>Lifecycle.</b> The newest segment is <em>active</em>: it has a writer and takes appends. A
 * roll syncs it, makes a new active segment and <em>seals</em> it: index files written, writer
 * closed; a sealed segment never changes again and is read through {@link ReadHandles}.
 *
 * <p><b>Concurrency.</b> Appends ({@link #recordAppend}, {@link #write}) happen under the queue's
 * append lock. Readers use the volatile {@link #size}/{@link #endOffset} and the indexes' published
 * views without locks. The group-commit barrier ({@link #syncThrough}) has its own lock and never
 * holds the append lock while syncing.
 *
 * <p><b>Group commit</b> (SEMANTICS §2.4.8, §7 items 15–18). {@code syncThrough(target)}:
 *
 * <ol>
 *   <li>if offsets below {@code target} are known durable, return (no I/O);
 *   <li>if {@code target} is covered by a barrier that <em>failed</em>, throw: a write covered by a
 *       failed fsync is never acknowledged, not even after a later fsync succeeds (on Linux a
 *       failed fsync may drop the dirty pages, so a later success proves nothing about them);
 *   <li>if a barrier is in flight, wait for it and start over: it may have begun before our write
 *       (no borrowed barrier);
 *   <li>else lead: capture {@code covered = endOffset} (every write that completed before now),
 *       release the lock, fsync, re-take the lock, record success ({@code syncedThrough = covered})
 *       or failure (failure hook first — the queue's sticky error — then the poisoned range), wake
 *       the waiters.
 * </ol>
 *
 * The barrier targets this segment object, so a write is synced in the segment that took it even if
 * the log rolled meanwhile; rolling itself runs a barrier through the segment's end before it
 * closes the writer, so a sealed segment is always fully durable.
 */
final class Segment {
  /** Observes barriers; implemented by the queue log. */
  interface SyncObserver {
    void synced();

    void syncFailed(IOException e);
  }

  /** The segment was closed (store closed or queue deleted) before a barrier could cover it. */
  static final class ClosedSegmentException extends IOException {
    ClosedSegmentException(String message) {
      super(message);
    }
  }

  final long baseOffset;
  final Path logFile;
  final Path indexFile;
  final Path timeIndexFile;
  final Path checkpointFile;
  private final SyncObserver observer;

  /** Bytes of valid frames in the file; readers never look beyond it. */
  volatile long size;

  /** Offset after the last record written (for sealed segments: the next segment's base). */
  volatile long endOffset;

  /** Largest record time in the segment (running maximum), Long.MIN_VALUE when unknown/empty. */
  volatile long maxTime = Long.MIN_VALUE;

  volatile boolean sealed;
  volatile boolean deleted;

  // Active segment only, under the append lock.
  long firstAppendTime = Long.MIN_VALUE;
  private long lastIndexedPosition = Long.MIN_VALUE;
  private long lastTimeIndexed = Long.MIN_VALUE;

  /** In-memory indexes of the active segment; null for a sealed one (see QueueLog's cache). */
  volatile SparseIndex offsetIndex;

  volatile SparseIndex timeIndex;

  // Group commit state, guarded by syncLock.
  private final ReentrantLock syncLock = new ReentrantLock();
  private final Condition syncDone = syncLock.newCondition();
  private StoreIo.WritableFile writer;
  private long syncedThrough;
  private boolean syncing;
  private long failedThrough = Long.MIN_VALUE;
  private IOException failure;

  Segment(long baseOffset, Path dir, SyncObserver observer) {
    this.baseOffset = baseOffset;
    String name = fileName(baseOffset);
    this.logFile = dir.resolve(name + ".log");
    this.indexFile = dir.resolve(name + ".idx");
    this.timeIndexFile = dir.resolve(name + ".tix");
    this.checkpointFile = dir.resolve(name + ".cpt");
    this.observer = observer;
    this.endOffset = baseOffset;
    this.syncedThrough = baseOffset;
  }

  /** Zero-padded 20-digit base offset, so lexical order is numeric order. */
  static String fileName(long baseOffset) {
    return String.format("%020d", baseOffset);
  }

  /** Makes this the active segment, writing through {@code w}. */
  void activate(StoreIo.WritableFile w, long recoveredSize, long recoveredEnd) {
    this.writer = w;
    this.size = recoveredSize;
    this.endOffset = recoveredEnd;
    this.sealed = false;
    if (offsetIndex == null) {
      offsetIndex = new SparseIndex();
      timeIndex = new SparseIndex();
    }
  }

  boolean isEmpty() {
    return size == 0;
  }

  /** Writes a sealed frame at the end; the caller holds the append lock. */
  void write(byte[] frame, int len) throws IOException {
    writer.write(frame, 0, len, size);
  }

  /** Cuts the file back to {@link #size} after a failed write; caller holds the append lock. */
  void restoreSize() throws IOException {
    if (writer.size() != size) {
      writer.truncate(size);
    }
  }

  /**
   * Records a frame written (or recovered) at {@link #size}: indexes, times, size, end offset. The
   * caller holds the append lock (or is recovering, single-threaded).
   */
  void recordAppend(
      long base,
      int count,
      int len,
      long appendTime,
      long frameMaxTime,
      int indexInterval,
      long timeInterval) {
    long pos = size;
    if (lastIndexedPosition == Long.MIN_VALUE || pos - lastIndexedPosition >= indexInterval) {
      offsetIndex.add(base, pos);
      lastIndexedPosition = pos;
    }
    long running = Math.max(maxTime, frameMaxTime);
    if (lastTimeIndexed == Long.MIN_VALUE || running - lastTimeIndexed >= timeInterval) {
      timeIndex.add(running, base);
      lastTimeIndexed = running;
    }
    if (firstAppendTime == Long.MIN_VALUE) {
      firstAppendTime = appendTime;
    }
    maxTime = running;
    size = pos + len;
    endOffset = base + count;
  }

  /** Adds the final time-index entry so the last key is the segment's maximum. */
  void completeTimeIndex(long lastBatchBase) {
    if (timeIndex != null && maxTime != Long.MIN_VALUE && maxTime > lastTimeIndexed) {
      timeIndex.add(maxTime, lastBatchBase);
      lastTimeIndexed = maxTime;
    }
  }

  /**
   * Blocks until every offset below {@code target} is durable, sharing barriers with concurrent
   * callers (group commit). Not interruptible: a barrier in progress completes.
   *
   * @throws ClosedSegmentException if the segment was closed before a barrier covered the target
   * @throws IOException if the barrier covering the target failed
   */
  void syncThrough(long target) throws IOException {
    syncLock.lock();
    try {
      while (true) {
        if (target <= failedThrough) {
          throw new IOException(
              "fsync of "
                  + logFile
                  + " failed; writes below offset "
                  + target
                  + " were not made durable",
              failure);
        }
        if (syncedThrough >= target) {
          return;
        }
        if (syncing) {
          syncDone.awaitUninterruptibly();
          continue;
        }
        StoreIo.WritableFile w = writer;
        if (w == null) {
          throw new ClosedSegmentException("segment " + logFile + " is closed");
        }
        syncing = true;
        long covered = endOffset;
        IOException err = null;
        syncLock.unlock();
        try {
          w.force();
        } catch (IOException e) {
          err = e;
        } finally {
          syncLock.lock();
        }
        syncing = false;
        if (err == null) {
          syncedThrough = Math.max(syncedThrough, covered);
          observer.synced();
        } else {
          observer.syncFailed(err); // sticky error first, then wake waiters
          failure = err;
          failedThrough = Math.max(failedThrough, covered);
        }
        syncDone.signalAll();
      }
    } finally {
      syncLock.unlock();
    }
  }

  /** Whether every written offset is known durable. */
  boolean fullySynced() {
    syncLock.lock();
    try {
      return syncedThrough >= endOffset;
    } finally {
      syncLock.unlock();
    }
  }

  /**
   * A plain fsync outside group commit, for the sticky-failure retry under the append lock. Does
   * not mark anything durable: waiters still need their own barrier.
   */
  void forceNow() throws IOException {
    StoreIo.WritableFile w;
    syncLock.lock();
    try {
      w = writer;
    } finally {
      syncLock.unlock();
    }
    if (w == null) {
      throw new ClosedSegmentException("segment " + logFile + " is closed");
    }
    w.force();
  }

  /**
   * Closes the writer once no barrier is in flight. Idempotent. After this, barriers that are not
   * already covered fail with {@link ClosedSegmentException}.
   */
  void closeWriter() throws IOException {
    StoreIo.WritableFile w;
    syncLock.lock();
    try {
      while (syncing) {
        syncDone.awaitUninterruptibly();
      }
      w = writer;
      writer = null;
      syncDone.signalAll();
    } finally {
      syncLock.unlock();
    }
    if (w != null) {
      w.close();
    }
  }

  /** The active writer's file size as the OS sees it (may exceed {@link #size} after a failure). */
  long fileSize() throws IOException {
    return writer.size();
  }

  void truncateFile(long newSize) throws IOException {
    writer.truncate(newSize);
  }

  void forceUnshared() throws IOException {
    writer.force();
  }

  /** Marks offsets below {@code end} durable (after recovery made them so). */
  void markSynced(long end) {
    syncLock.lock();
    try {
      syncedThrough = Math.max(syncedThrough, end);
    } finally {
      syncLock.unlock();
    }
  }

  @Override
  public String toString() {
    return logFile.toString();
  }
}
