package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.StoreClosedException;
import io.queuebridge.core.errors.StoreCorruptedException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The segments of one queue's log and the state its parts share: the segments by base offset, the
 * newest one <em>active</em> (it takes the appends); the offsets {@code [head, tail)} readable in
 * them; the checkpoint map as of the tail; and whether the log is still open. The head is the first
 * segment's base, or the logical head ({@link LogHead}) when an exact truncation moved it inside
 * that segment. {@link LogRecovery} fills a set from the directory, {@link GroupCommitWriter}
 * appends to it, {@link LogReader} reads it, {@link LogRetention} removes its oldest segments.
 *
 * <p><b>Concurrency.</b> Every change (an append's write and the tail it publishes, a roll, the
 * removal of a segment, releasing the files) happens under {@link #appendLock}. Readers take no
 * lock: they read the volatile head, tail, checkpoint map and active segment and the concurrent map
 * of segments; the tail is published only after the write it covers.
 *
 * <p><b>Roll</b> ({@link #roll}): a barrier through the outgoing segment's end; the new segment's
 * checkpoint snapshot written (tmp, fsync, rename) and its {@code .log} created, then the directory
 * fsynced; the switch; then the old segment sealed (index files written atomically, writer closed).
 * So a sealed segment is always fully durable, and a crash during a roll leaves at most an empty
 * newest segment without its snapshot, which recovery removes.
 *
 * <p><b>Broken.</b> A failed write is undone by cutting the file back to its last good size. If
 * even that fails, the active segment's file ends in bytes nobody vouches for: from then on nothing
 * is written to it or rolled from it (every attempt throws the same {@link QueueStoreException})
 * until the store is reopened and recovery cuts them.
 *
 * <p><b>Release.</b> {@link #close} and {@link #delete} release the files once; afterwards every
 * use of the log throws {@link StoreClosedException} or {@link QueueNotFoundException} ({@link
 * #checkOpen}).
 */
final class SegmentSet {
  private static final Logger LOG = LoggerFactory.getLogger(SegmentSet.class);
  private static final int OPEN = 0;
  private static final int DELETED = 1;
  private static final int CLOSED = 2;

  final String queue;
  final Path dir;
  private final LogEnv env;
  private final Segment.SyncObserver observer;

  /** Serialises every change of the log: appends' writes, rolls, truncation, release. */
  final ReentrantLock appendLock = new ReentrantLock();

  private final ConcurrentSkipListMap<Long, Segment> segments = new ConcurrentSkipListMap<>();
  private volatile Segment active;
  private volatile long head;
  private volatile long logicalHead;
  private volatile long tail;
  private volatile Map<String, String> checkpoints = Map.of();
  private volatile QueueStoreException broken;
  private volatile int state = OPEN;

  /**
   * Damage found in sealed segments when the store was opened ({@link LogRecovery}), oldest first;
   * only ranges that end above the head are kept. Never grows after opening: a truncation past a
   * range drops it, a repair cuts it while the store is closed.
   */
  private volatile List<RecoveryReport.Damage> damage = List.of();

  /**
   * An empty set for the log in {@code dir}; {@link #add} and {@link #start} fill it. Every segment
   * of the set reports its barriers to {@code observer}.
   */
  SegmentSet(String queue, Path dir, LogEnv env, Segment.SyncObserver observer) {
    this.queue = queue;
    this.dir = dir;
    this.env = env;
    this.observer = observer;
  }

  /**
   * The set of a new queue: creates the first segment (base 0, empty checkpoint map) in the
   * existing, empty {@code dir} and fsyncs the directory.
   *
   * @throws IOException if a file cannot be created (the files created are removed again)
   */
  static SegmentSet create(String queue, Path dir, LogEnv env, Segment.SyncObserver observer)
      throws IOException {
    SegmentSet set = new SegmentSet(queue, dir, env, observer);
    Segment first = set.newSegment(0, Map.of());
    set.add(first);
    set.start(first, 0, Map.of(), 0);
    return set;
  }

  // ---------------------------------------------------------------- filling (single-threaded)

  /** A segment object for {@code base} in this set's directory; touches no file. */
  Segment segment(long base) {
    return new Segment(base, dir, observer);
  }

  /** Adds a segment (oldest first); touches no file. */
  void add(Segment s) {
    segments.put(s.baseOffset, s);
  }

  /**
   * Makes {@code newest}, the last segment added, the active one, holding everything up to {@code
   * tail}, with {@code checkpoints} (not copied) as the checkpoint map; the head is the first
   * segment's base or {@code logicalHead}, whichever is higher, and never above the tail.
   */
  void start(Segment newest, long tail, Map<String, String> checkpoints, long logicalHead) {
    this.active = newest;
    this.tail = tail;
    this.checkpoints = checkpoints;
    this.logicalHead = Math.min(logicalHead, tail);
    this.head = computeHead();
  }

  private long computeHead() {
    return Math.max(segments.firstKey(), logicalHead);
  }

  /** Records the damage recovery found in sealed segments, oldest first. */
  void setDamage(List<RecoveryReport.Damage> found) {
    damage = List.copyOf(found);
    pruneDamage();
  }

  /**
   * Makes {@code next}, a segment the log's writer rolled to, the active one; the caller holds the
   * append lock. Only for a reader beside the writer ({@link LogFollower}): the set follows what
   * the writer did.
   */
  void followRoll(Segment next) {
    segments.put(next.baseOffset, next);
    active = next;
  }

  // ---------------------------------------------------------------- reads (no lock)

  /** The first readable offset. */
  long head() {
    return head;
  }

  /** The offset the next append gets. */
  long tail() {
    return tail;
  }

  Segment active() {
    return active;
  }

  /** The checkpoint map as of the tail (unmodifiable). */
  Map<String, String> checkpoints() {
    return checkpoints;
  }

  /** The damaged ranges still readable offsets would fall in, oldest first (see the field). */
  List<RecoveryReport.Damage> damage() {
    return damage;
  }

  /** The first damaged range that ends above {@code offset}, or null when there is none. */
  RecoveryReport.Damage damageFrom(long offset) {
    for (RecoveryReport.Damage d : damage) {
      if (d.toOffset() > offset) {
        return d;
      }
    }
    return null;
  }

  /**
   * The error a read of {@code offset}, inside the damaged range {@code d}, fails with: names the
   * queue, the segment file, the byte position, the range and the way out.
   */
  StoreCorruptedException unservable(RecoveryReport.Damage d, long offset) {
    return new StoreCorruptedException(
        queue,
        d.file().toString(),
        d.position(),
        d.reason()
            + "; offset "
            + offset
            + " of queue '"
            + queue
            + "' lies in the range ["
            + d.fromOffset()
            + ", "
            + d.toOffset()
            + ") found damaged when the store was opened, which is not served until the store is"
            + " repaired ("
            + REPAIR_HINT
            + ")");
  }

  /** How to repair a file store, for errors. */
  static final String REPAIR_HINT =
      "queue-bridge repair --store-type file --store path=DIR, or FileStores.repair";

  /** The segment whose range starts at or below {@code offset}, or null below the first one. */
  Segment floor(long offset) {
    Map.Entry<Long, Segment> e = segments.floorEntry(offset);
    return e == null ? null : e.getValue();
  }

  /** The base offset of the segment after {@code seg}, or null when none follows it. */
  Long nextBase(Segment seg) {
    return segments.higherKey(seg.baseOffset);
  }

  /** The segments, oldest first (a weakly consistent view). */
  Collection<Segment> oldestFirst() {
    return segments.values();
  }

  /** The segments, newest first (a weakly consistent view). */
  Collection<Segment> newestFirst() {
    return segments.descendingMap().values();
  }

  int count() {
    return segments.size();
  }

  /** Bytes of frames held by the segments (their {@code .log} files), the cut-off part included. */
  long bytes() {
    long sum = 0;
    for (Segment s : segments.values()) {
      sum += s.size;
    }
    return sum;
  }

  /** The persisted logical head (0 when none was written). */
  long logicalHead() {
    return logicalHead;
  }

  List<Segment> segmentsForTest() {
    return List.copyOf(segments.values());
  }

  // ---------------------------------------------------------------- changes (append lock held)

  /** Publishes the tail after a write covering it; the caller holds the append lock. */
  void setTail(long newTail) {
    tail = newTail;
  }

  /** Publishes the checkpoint map (unmodifiable); the caller holds the append lock. */
  void setCheckpoints(Map<String, String> newCheckpoints) {
    checkpoints = newCheckpoints;
  }

  /**
   * Writes {@code bytes[0..len)}, sealed frames, at the end of {@code seg}, the active segment; the
   * caller holds the append lock. On failure the file is cut back to its last good size, so nothing
   * of the write stays; if that fails too the set is broken (see the class comment).
   *
   * @throws QueueStoreException if the write failed (nothing was appended)
   */
  void write(Segment seg, byte[] bytes, int len) {
    try {
      seg.write(bytes, len);
    } catch (IOException e) {
      undoWrite(seg, e);
      throw new QueueStoreException(
          queue,
          "append to queue " + queue + " failed writing " + seg.logFile + ": " + StoreIo.reason(e),
          e);
    }
  }

  private void undoWrite(Segment seg, IOException cause) {
    try {
      seg.restoreSize();
    } catch (IOException e) {
      e.addSuppressed(cause);
      broken =
          new QueueStoreException(
              queue,
              "queue "
                  + queue
                  + " refuses appends: a failed write to "
                  + seg.logFile
                  + " could not be undone ("
                  + e
                  + "); reopen the store to recover",
              e);
    }
  }

  /**
   * Checks that the log may be written: open and not broken.
   *
   * @throws QueueNotFoundException if the queue was deleted
   * @throws StoreClosedException if the store was closed
   * @throws QueueStoreException if the set is broken
   */
  void checkWritable() {
    checkOpen();
    if (broken != null) {
      throw broken;
    }
  }

  /**
   * Checks that appends may be taken: the log is open and holds no damaged range. Messages appended
   * after a damaged range would be cut with it by the repair, so none is accepted until then.
   *
   * @throws QueueNotFoundException if the queue was deleted
   * @throws StoreClosedException if the store was closed
   * @throws StoreCorruptedException naming the first damaged range
   */
  void checkAppendable() {
    checkOpen();
    List<RecoveryReport.Damage> d = damage;
    if (!d.isEmpty()) {
      RecoveryReport.Damage first = d.get(0);
      throw new StoreCorruptedException(
          queue,
          first.file().toString(),
          first.position(),
          first.reason()
              + "; offsets ["
              + first.fromOffset()
              + ", "
              + first.toOffset()
              + ") of queue '"
              + queue
              + "' cannot be served, so appends to it are refused until the store is repaired ("
              + REPAIR_HINT
              + ") or the range is truncated away");
    }
  }

  private void pruneDamage() {
    List<RecoveryReport.Damage> d = damage;
    if (!d.isEmpty() && d.get(0).toOffset() <= head) {
      damage = d.stream().filter(x -> x.toOffset() > head).toList();
    }
  }

  /**
   * Continues in a new, empty active segment at the tail (see the class comment); the caller holds
   * the append lock and the active segment is not empty. Failing to seal the old segment is only
   * logged: its indexes are rebuilt when used.
   *
   * @throws IOException if the barrier or the new segment's files failed (the old segment stays
   *     active; files created for the new one are removed again)
   */
  void roll() throws IOException {
    Segment old = active;
    old.syncThrough(old.endOffset);
    Segment next = newSegment(tail, checkpoints);
    segments.put(next.baseOffset, next);
    active = next;
    seal(old);
  }

  /** Creates segment files at {@code base}: snapshot, log, directory sync. */
  private Segment newSegment(long base, Map<String, String> cp) throws IOException {
    Segment s = segment(base);
    ByteSink payload = new ByteSink(64);
    payload.putLong(base).putInt(cp.size());
    for (Map.Entry<String, String> e : new TreeMap<>(cp).entrySet()) {
      payload.putString(e.getKey()).putString(e.getValue());
    }
    Blobs.writeAtomically(
        env.io(),
        s.checkpointFile,
        Blobs.wrap(Blobs.CHECKPOINT_MAGIC, payload.array(), payload.position()));
    StoreIo.WritableFile w;
    try {
      w = env.io().openWritable(s.logFile, true);
    } catch (IOException e) {
      Files.deleteIfExists(s.checkpointFile);
      throw e;
    }
    try {
      env.io().syncDirectory(dir);
    } catch (IOException e) {
      w.close();
      Files.deleteIfExists(s.logFile);
      Files.deleteIfExists(s.checkpointFile);
      throw e;
    }
    s.activate(w, 0, base);
    s.markSynced(base);
    return s;
  }

  private void seal(Segment s) {
    s.completeTimeIndex();
    SparseIndex offsets = s.offsetIndex;
    SparseIndex times = s.timeIndex;
    try {
      if (s.fileSize() != s.size) {
        s.truncateFile(s.size);
        s.forceUnshared();
      }
    } catch (IOException e) {
      LOG.warn(
          "queue {}: could not trim {} to {} bytes: {}", queue, s.logFile, s.size, e.toString());
    }
    try {
      Blobs.writeAtomically(
          env.io(), s.indexFile, offsets.toFile(Blobs.OFFSET_INDEX_MAGIC, s.baseOffset));
      Blobs.writeAtomically(
          env.io(), s.timeIndexFile, times.toFile(Blobs.TIME_INDEX_MAGIC, s.baseOffset));
    } catch (IOException e) {
      LOG.warn(
          "queue {}: could not write the indexes of {} (rebuilt on use): {}",
          queue,
          s.logFile,
          e.toString());
    }
    env.sealedIndexes().put(s, new LogEnv.SegmentIndexes(offsets, times));
    s.sealed = true;
    s.offsetIndex = null;
    s.timeIndex = null;
    try {
      s.closeWriter();
    } catch (IOException e) {
      LOG.warn("queue {}: closing {} failed: {}", queue, s.logFile, e.toString());
    }
  }

  /**
   * Moves the logical head up to {@code newHead} (never down), at most the tail; the caller holds
   * the append lock and has persisted it.
   */
  void setLogicalHead(long newHead) {
    if (newHead > logicalHead) {
      logicalHead = newHead;
      head = computeHead();
      pruneDamage();
    }
  }

  /**
   * Removes {@code seg}, the oldest segment and not the active one, from the set and moves the head
   * to the next segment's base if the logical head lies below it; the caller holds the append lock
   * and deletes the files.
   */
  void removeOldest(Segment seg) {
    segments.remove(seg.baseOffset);
    head = computeHead();
    pruneDamage();
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * @throws QueueNotFoundException if the queue was deleted
   * @throws StoreClosedException if the store was closed
   */
  void checkOpen() {
    int s = state;
    if (s == DELETED) {
      throw new QueueNotFoundException(queue);
    }
    if (s == CLOSED) {
      throw new StoreClosedException(env.store());
    }
  }

  boolean isOpen() {
    return state == OPEN;
  }

  /**
   * Makes buffered appends durable (a failure is only logged) and releases the files; afterwards
   * {@link #checkOpen} reports the store closed.
   *
   * @return false if the set was already released (nothing done)
   */
  boolean close() {
    appendLock.lock();
    try {
      if (state != OPEN) {
        return false;
      }
      Segment a = active;
      try {
        a.syncThrough(a.endOffset);
      } catch (IOException e) {
        LOG.warn("queue {}: final fsync of {} failed: {}", queue, a.logFile, e.toString());
      }
      state = CLOSED;
      release();
      return true;
    } finally {
      appendLock.unlock();
    }
  }

  /**
   * Releases the files without syncing them (the caller removes the directory); afterwards {@link
   * #checkOpen} reports the queue missing.
   *
   * @return false if the set was already released (nothing done)
   */
  boolean delete() {
    appendLock.lock();
    try {
      if (state != OPEN) {
        return false;
      }
      state = DELETED;
      release();
      return true;
    } finally {
      appendLock.unlock();
    }
  }

  private void release() {
    for (Segment s : segments.values()) {
      env.handles().invalidate(s);
      env.sealedIndexes().invalidate(s);
    }
    try {
      active.closeWriter();
    } catch (IOException e) {
      LOG.warn("queue {}: closing {} failed: {}", queue, active.logFile, e.toString());
    }
  }
}
