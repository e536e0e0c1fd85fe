package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.StoreCorruptedException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

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
 * views without locks. The group-commit barrier ({@link #syncThrough}) takes no lock at all (a
 * compare-and-set elects the leader) and never runs under the append lock.
 *
 * <p><b>Group commit</b>: concurrent callers share one fsync, and no caller is told "durable" by a
 * barrier that started before its write. {@code syncThrough(target)}:
 *
 * <ol>
 *   <li>if the write ending at {@code target} lies in a <em>poisoned</em> range — covered by a
 *       barrier that failed and not durable before it — throw: such a write is never acknowledged,
 *       not even after a later fsync succeeds (on Linux a failed fsync may drop the dirty pages, so
 *       a later success proves nothing about them);
 *   <li>if offsets below {@code target} are known durable, return (no I/O);
 *   <li>if a barrier is in flight, wait for it and start over: it may have begun before our write
 *       (no borrowed barrier);
 *   <li>else lead (compare-and-set the in-flight barrier from none to ours): capture {@code covered
 *       = endOffset} (every write that completed before now), fsync, record success ({@code
 *       syncedThrough = covered}) or failure (failure hook first — the queue's sticky error — then
 *       the poisoned range), clear the in-flight slot, wake the waiters.
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
  private long lastBatchBase = -1;
  private long lastIndexedPosition = Long.MIN_VALUE;
  private long lastTimeIndexed = Long.MIN_VALUE;

  /** In-memory indexes of the active segment; null for a sealed one (see {@link IndexLoader}). */
  volatile SparseIndex offsetIndex;

  volatile SparseIndex timeIndex;

  /**
   * One fsync in flight and the threads waiting for it. The leader wakes each waiter itself ({@link
   * LockSupport#unpark}), so they resume in parallel and mostly return without touching shared
   * state, instead of handing a lock to each other one by one.
   */
  private static final class Barrier {
    final ConcurrentLinkedQueue<Thread> waiters = new ConcurrentLinkedQueue<>();
    volatile boolean done;

    /**
     * Waits until done; not interruptible (an interrupt is kept for the caller). The waiter adds
     * itself before checking {@code done}, and the leader sets {@code done} before it unparks the
     * waiters it finds, so no waiter is missed.
     */
    void await() {
      await(() -> false);
    }

    /** As {@link #await()}, but also returns (not done) once {@code giveUp} holds. */
    void await(BooleanSupplier giveUp) {
      waiters.add(Thread.currentThread());
      boolean interrupted = false;
      while (!done && !giveUp.getAsBoolean()) {
        LockSupport.park(this);
        interrupted |= Thread.interrupted();
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }

    void complete() {
      done = true;
      for (Thread t : waiters) {
        LockSupport.unpark(t);
      }
    }
  }

  /** In place of a barrier once the writer is closed: nothing more can be synced. */
  private static final Barrier CLOSED = new Barrier();

  static {
    CLOSED.done = true;
  }

  // Group commit state. Only the thread that installed a barrier in inFlight writes
  // syncedThrough, poisoned and failure, so barriers (and their updates) never overlap.
  private final AtomicReference<Barrier> inFlight = new AtomicReference<>();
  private volatile StoreIo.WritableFile writer;
  private volatile long syncedThrough;

  /**
   * Offset ranges {@code (from, through]} covered by a failed barrier and not durable before it, as
   * pairs {@code [from0, through0, from1, through1, ...]}; replaced, never changed in place.
   */
  private volatile long[] poisoned = new long[0];

  private volatile IOException failure;

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

  /**
   * A {@link StoreCorruptedException} naming this segment's file and the byte position ({@code -1}
   * for the file as a whole) where {@code reason} was found.
   */
  StoreCorruptedException corruption(String queue, long pos, String reason) {
    return new StoreCorruptedException(queue, logFile.toString(), pos, reason);
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
    lastBatchBase = base;
    maxTime = running;
    size = pos + len;
    endOffset = base + count;
  }

  /**
   * {@link #recordAppend} for a frame read back from the file (recovery, index rebuild), with the
   * append time and record times its header carries.
   */
  void recordFrame(Frames.FrameHeader h, FileStoreConfig config) {
    recordAppend(
        h.baseOffset(),
        h.count(),
        h.length(),
        h.appendTime(),
        h.maxTime(),
        config.indexIntervalBytes(),
        config.timeIndexIntervalMs());
  }

  /**
   * Adds the final time-index entry (pointing at the last batch recorded) so the last key is the
   * segment's maximum.
   */
  void completeTimeIndex() {
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
    while (true) {
      if (isPoisoned(target)) {
        throw new IOException(
            "fsync of "
                + logFile
                + " failed; writes below offset "
                + target
                + " were not made durable",
            failure);
      }
      if (syncedThrough >= target) {
        return; // covered: no I/O
      }
      Barrier b = inFlight.get();
      if (b == CLOSED) {
        throw new ClosedSegmentException("segment " + logFile + " is closed");
      }
      if (b != null) {
        b.await(); // it may have begun before our write: wait, then look again
        continue;
      }
      Barrier mine = new Barrier();
      if (inFlight.compareAndSet(null, mine)) {
        lead(mine);
      }
    }
  }

  /**
   * Waits for the barrier in flight, if any, to end (without starting one), or until {@code giveUp}
   * holds; {@code giveUp} is checked before the first park and after every wake-up, so the caller
   * unparks the waiting thread to make it look again. Not interruptible (an interrupt is kept for
   * the caller).
   */
  void awaitBarrier(BooleanSupplier giveUp) {
    Barrier b = inFlight.get();
    if (b != null && b != CLOSED) {
      b.await(giveUp);
    }
  }

  /** Runs one barrier; the caller installed {@code b} in {@link #inFlight}. */
  private void lead(Barrier b) {
    long covered = endOffset; // every write that completed before now
    IOException err = null;
    try {
      writer.force();
    } catch (IOException e) {
      err = e;
    }
    if (err == null) {
      syncedThrough = Math.max(syncedThrough, covered);
      observer.synced();
    } else {
      observer.syncFailed(err); // the sticky error first, then wake the waiters
      failure = err;
      long[] old = poisoned;
      long[] next = java.util.Arrays.copyOf(old, old.length + 2);
      next[old.length] = syncedThrough; // what was durable before this barrier stays durable
      next[old.length + 1] = covered;
      poisoned = next;
    }
    inFlight.set(null);
    b.complete();
  }

  /** Whether the write ending at {@code target} was covered by a failed barrier. */
  private boolean isPoisoned(long target) {
    long[] p = poisoned;
    for (int i = 0; i < p.length; i += 2) {
      if (p[i] < target && target <= p[i + 1]) {
        return true;
      }
    }
    return false;
  }

  /** Whether every written offset is known durable. */
  boolean fullySynced() {
    return syncedThrough >= endOffset;
  }

  /**
   * A plain fsync outside group commit, for the sticky-failure retry under the append lock. Does
   * not mark anything durable: waiters still need their own barrier.
   */
  void forceNow() throws IOException {
    StoreIo.WritableFile w = writer;
    if (w == null) {
      throw new ClosedSegmentException("segment " + logFile + " is closed");
    }
    w.force();
  }

  /**
   * Closes the writer once no barrier is in flight. Idempotent; the caller holds the append lock.
   * Afterwards, barriers that are not already covered fail with {@link ClosedSegmentException}.
   */
  void closeWriter() throws IOException {
    while (true) {
      Barrier b = inFlight.get();
      if (b == CLOSED) {
        return;
      }
      if (b != null) {
        b.await();
      } else if (inFlight.compareAndSet(null, CLOSED)) {
        break;
      }
    }
    StoreIo.WritableFile w = writer;
    writer = null;
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

  /** Marks offsets below {@code end} durable (after recovery made them so); single-threaded. */
  void markSynced(long end) {
    syncedThrough = Math.max(syncedThrough, end);
  }

  @Override
  public String toString() {
    return logFile.toString();
  }
}
