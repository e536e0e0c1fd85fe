package io.queuebridge.core.store.file;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.support.DedupIndex;
import io.queuebridge.core.store.support.QueueLog;
import io.queuebridge.core.store.support.StoreChecks;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * One queue's log in the file store (its {@link QueueLog}): segment files in the queue's directory,
 * appended to with group commit, recovered on open in O(newest segment). The log owns its parts and
 * routes every call to the one whose job it is; it only waits for appends itself ({@link
 * #awaitAppend}).
 *
 * <ul>
 *   <li>{@link SegmentSet}: the segments and the state every part shares (head, tail, checkpoint
 *       map, open or released), rolls;
 *   <li>{@link LogRecovery}: recovery on open;
 *   <li>{@link GroupCommitWriter}: appends (write combining, group commit, the background sync);
 *   <li>{@link StickyFailure}: a failed fsync refuses later appends until one works again;
 *   <li>{@link LogReader} and {@link IndexLoader}: reads, index use and rebuild;
 *   <li>{@link LogRetention}: time and size lookups, exact truncation ({@link LogHead}).
 * </ul>
 *
 * <p>Every {@link QueueLog} method throws {@link io.queuebridge.core.errors.StoreClosedException}
 * once the store was closed and {@link io.queuebridge.core.errors.QueueNotFoundException} once the
 * queue was deleted; {@link #close}, {@link #delete} and the background sync are no-ops then.
 *
 * <p>Thread-safe.
 */
final class SegmentedLog implements QueueLog {
  private final SegmentSet segments;
  private final GroupCommitWriter writer;
  private final LogReader reader;
  private final LogRetention retention;
  private final Object signal = new Object();
  private final LogEnv env;
  private final DedupIndex dedup;
  // The queue's deduplication window as configured: a truncation saves the ids it removes when on.
  private volatile Duration dedupWindow = Duration.ZERO;
  private volatile int waiters;

  private SegmentedLog(SegmentSet segments, LogEnv env, StickyFailure sticky) {
    this.segments = segments;
    this.env = env;
    this.dedup = new DedupIndex(this, this::savedDedupIds);
    this.writer = new GroupCommitWriter(segments, env, sticky, this::wakeWaiters);
    IndexLoader indexes = new IndexLoader(segments, env);
    this.reader = new LogReader(segments, env, indexes, seg -> seg.deleted);
    this.retention = new LogRetention(segments, env, indexes);
  }

  /**
   * Creates the first segment (base 0) of a new queue in the existing, empty {@code dir}.
   *
   * @throws IOException if a file cannot be created (those created are removed again)
   */
  static SegmentedLog create(String queue, Path dir, LogEnv env) throws IOException {
    StickyFailure sticky = new StickyFailure(queue, dir, env.syncs());
    return new SegmentedLog(SegmentSet.create(queue, dir, env, sticky), env, sticky);
  }

  /**
   * Opens the log in {@code dir}, recovering its newest segment ({@link LogRecovery}); what it
   * repaired goes into {@code report}.
   *
   * @throws io.queuebridge.core.errors.StoreCorruptedException if the log cannot be recovered
   * @throws IOException if a file cannot be read or repaired
   */
  static SegmentedLog open(String queue, Path dir, LogEnv env, RecoveryReport.Builder report)
      throws IOException {
    StickyFailure sticky = new StickyFailure(queue, dir, env.syncs());
    return new SegmentedLog(LogRecovery.recover(queue, dir, env, sticky, report), env, sticky);
  }

  /**
   * Returns once the write reached the OS (it survives a process kill); fsynced within {@code
   * sync.interval.ms}, or before returning when that is 0. Not interruptible.
   */
  @Override
  public long append(Message message) {
    return appendUninterruptibly(List.of(message));
  }

  /** As {@link #append(Message)}. */
  @Override
  public long appendBatch(List<Message> batch) {
    return appendUninterruptibly(batch);
  }

  /** Returns after a group-commit barrier covering the write: an fsync of its segment. */
  @Override
  public long appendAndSync(Message message) throws InterruptedException {
    return writer.append(List.of(message), Map.of(), true, true);
  }

  /**
   * Returns after a group-commit barrier covering the write. The checkpoints travel in the same
   * frame as the batch, so they are durable, or lost, together with it.
   */
  @Override
  public long appendBatchAndSync(List<Message> batch, Map<String, String> checkpoints)
      throws InterruptedException {
    return writer.append(batch, checkpoints, true, true);
  }

  private long appendUninterruptibly(List<Message> batch) {
    try {
      return writer.append(batch, Map.of(), false, false);
    } catch (InterruptedException e) {
      throw new AssertionError("uninterruptible append was interrupted", e);
    }
  }

  /** Background sync: a barrier through everything written to the active segment. */
  void syncActive() {
    writer.syncActive();
  }

  @Override
  public long head() {
    segments.checkOpen();
    return segments.head();
  }

  @Override
  public long tail() {
    segments.checkOpen();
    return segments.tail();
  }

  /** {@code tail - head}, read consistently enough (the head first). */
  @Override
  public long count() {
    segments.checkOpen();
    long h = segments.head();
    return segments.tail() - h;
  }

  @Override
  public DedupIndex dedupIndex() {
    return dedup;
  }

  /**
   * A copy of the checkpoint map as of the last batch written, consistent with what {@link #read}
   * can see: a batch whose barrier failed stays readable until the store is reopened (its messages
   * may or may not be in the log), and so do its checkpoints. After a reopen it is exactly what
   * survived, messages and checkpoints together.
   */
  @Override
  public Map<String, String> checkpoints() {
    segments.checkOpen();
    return new HashMap<>(segments.checkpoints());
  }

  /** See {@link LogReader#read}. */
  @Override
  public Message read(long offset) {
    segments.checkOpen();
    return reader.read(offset);
  }

  /** See {@link LogReader#readBatch}. */
  @Override
  public List<Message> readBatch(long start, int limit) {
    segments.checkOpen();
    return reader.readBatch(start, limit);
  }

  /**
   * Coarse: the base of the first batch, found through the time index, after which a record time
   * (createdAt, else the append time) reaches {@code time}. Never later than the exact answer; may
   * be earlier by up to one time-index interval's worth of batches. See {@link
   * LogRetention#timeOffset}.
   */
  @Override
  public long timeOffset(Instant time) {
    segments.checkOpen();
    return retention.timeOffset(Frames.millis(time));
  }

  /**
   * Whole segments: the base of the newest segment that does not fit in the budget together with
   * every newer segment (on-disk bytes). Under-trims, never over-trims. See {@link
   * LogRetention#sizeOffset}.
   */
  @Override
  public long sizeOffset(long retentionBytes) {
    segments.checkOpen();
    return retention.sizeOffset(retentionBytes);
  }

  /** The size of the queue's segment files (no I/O). */
  @Override
  public OptionalLong bytes() {
    segments.checkOpen();
    return OptionalLong.of(segments.bytes());
  }

  /**
   * Exact; see {@link LogRetention#truncate}. When the queue deduplicates (or did since the open),
   * first saves the ids of the messages it removes ({@link DedupSnapshot}), so that they are still
   * remembered after a restart (BEHAVIOUR Q-DEDUP).
   */
  @Override
  public void truncate(long minOffset) {
    Duration window = dedupWindow;
    if (window.compareTo(Duration.ZERO) > 0 || dedup.loaded()) {
      saveDedupIdsBelow(minOffset, window);
    }
    retention.truncate(minOffset);
  }

  /** Sets the queue's deduplication window (from its configuration: open, create, update). */
  void dedupWindow(Duration window) {
    this.dedupWindow = window;
  }

  private void saveDedupIdsBelow(long minOffset, Duration window) {
    long head = head();
    if (minOffset <= head) {
      return; // removes nothing: the ids below the head are saved already
    }
    if (!dedup.loaded()) {
      // No deduplicated append since the open: no window start from the manager yet. The newest
      // message's creation minus the window is no later than any start a later append uses.
      long tail = tail();
      Instant newest = tail > head ? read(tail - 1).createdAt() : null;
      Duration keep = window.compareTo(Duration.ZERO) > 0 ? window : QueueConfig.MAX_DEDUP_WINDOW;
      dedup.ensureLoaded(newest == null ? Instant.MIN : newest.minus(keep));
    }
    try {
      DedupSnapshot.save(env.io(), segments.dir, head, minOffset, dedup::rememberedBetween);
    } catch (IOException e) {
      throw new QueueStoreException(
          segments.queue,
          "saving the deduplication ids of queue " + segments.queue + " failed: " + e,
          e);
    }
  }

  private List<DedupIndex.Remembered> savedDedupIds() {
    try {
      return DedupSnapshot.read(segments.queue, segments.dir);
    } catch (IOException e) {
      throw new QueueStoreException(
          segments.queue,
          "reading the deduplication ids of queue " + segments.queue + " failed: " + e,
          e);
    }
  }

  /**
   * Waits, without polling, until the tail is beyond {@code offset} or {@code timeout} passes;
   * woken by every write, by {@link #close} and by {@link #delete}.
   *
   * @return whether the tail moved beyond {@code offset}
   * @throws InterruptedException if interrupted while waiting
   */
  @Override
  public boolean awaitAppend(long offset, Duration timeout) throws InterruptedException {
    segments.checkOpen();
    if (segments.tail() > offset) {
      return true;
    }
    long deadline = System.nanoTime() + StoreChecks.awaitNanos(timeout);
    synchronized (signal) {
      waiters++;
      try {
        while (segments.tail() <= offset) {
          segments.checkOpen();
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          TimeUnit.NANOSECONDS.timedWait(signal, left);
        }
        return true;
      } finally {
        waiters--;
      }
    }
  }

  private void wakeWaiters() {
    if (waiters > 0) {
      synchronized (signal) {
        signal.notifyAll();
      }
    }
  }

  private void wakeAll() {
    synchronized (signal) {
      signal.notifyAll();
    }
  }

  /** Makes buffered appends durable and releases the files. Idempotent. */
  void close() {
    if (segments.close()) {
      wakeAll();
    }
  }

  /** Marks the log deleted and releases its files; the caller removes the directory. Idempotent. */
  void delete() {
    if (segments.delete()) {
      wakeAll();
    }
  }

  // ---------------------------------------------------------------- for tests

  int segmentCount() {
    return segments.count();
  }

  List<Segment> segmentsForTest() {
    return segments.segmentsForTest();
  }

  Segment activeForTest() {
    return segments.active();
  }
}
