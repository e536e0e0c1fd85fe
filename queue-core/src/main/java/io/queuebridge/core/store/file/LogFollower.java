package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.ReadOnlyStoreException;
import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.support.QueueLog;
import io.queuebridge.core.store.support.StoreChecks;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;

/**
 * One queue's log read beside its writer, which may be another process ({@link
 * ReadOnlyFileStorage}): the same segment files, read without a lock and without writing anything.
 *
 * <p><b>What a call sees.</b> Every call first brings the view up to date ({@link #refresh}), then
 * answers from it like the writer's log would: the reads, indexes and lookups are the writer's own
 * parts ({@link LogReader}, {@link IndexLoader}, {@link LogRetention}) over a {@link SegmentSet}
 * that this class keeps in step with the files. The tail only ever covers whole frames that pass
 * every check of {@link FrameScan}: a frame the writer is still writing, or a torn one a crashed
 * writer left, is simply not there yet. The head is the first segment still on disk, or the
 * persisted logical head ({@link LogHead}) when it is higher.
 *
 * <p><b>Refresh</b>, in this order, so that the tail never lags a head the writer wrote after its
 * data: the head file when its {@link FileStamp} changed; then the growth of the newest segment
 * since the last call, scanned frame by frame from where the last scan stopped, and each roll the
 * writer made (a segment file at the scanned tail), whose predecessor is then sealed here too; then
 * the oldest segments whose files are gone (deleted by retention). An idle refresh costs a few
 * {@code stat} calls, whatever the size of the log. A segment deleted while a read is inside it
 * reads as truncated: the read goes on from the new head ({@link LogReader}'s {@code gone} hook).
 * When the files no longer match the view (the newest segment vanished or shrank: the writer's
 * recovery cut a tail, or retention overtook a reader that stayed away), the view is built again
 * from a listing of the directory, as on first use, in O(newest segment). Only then can the tail go
 * back: when the writer cut data this view had seen (its recovery after a machine crash lost
 * unsynced frames, or it undid a write that failed after reaching the file).
 *
 * <p><b>Waiting.</b> No notification crosses processes: {@link #awaitAppend} refreshes and parks, 1
 * ms at first, doubling up to {@value #MAX_POLL_MS} ms between looks.
 *
 * <p>Every mutator throws {@link ReadOnlyStoreException} (the store refuses them before they get
 * here). Thread-safe: refreshes are serialised by one lock; reads run without it on the view they
 * got.
 */
final class LogFollower implements QueueLog {
  private static final Pattern SEGMENT = Pattern.compile("\\d{20}\\.log");
  private static final int LOAD_ATTEMPTS = 10;
  static final long MAX_POLL_MS = 32;

  private static final Segment.SyncObserver NO_BARRIERS =
      new Segment.SyncObserver() {
        @Override
        public void synced() {}

        @Override
        public void syncFailed(IOException e) {}
      };

  /** The parts that answer reads, over one segment set. */
  private record View(SegmentSet segments, LogReader reader, LogRetention lookups) {}

  private final String queue;
  private final Path dir;
  private final LogEnv env;
  private final Runnable checkOpen;
  private final ReentrantLock lock = new ReentrantLock();
  private volatile View view;
  private FileStamp headStamp; // guarded by lock
  private long persistedHead; // guarded by lock

  /**
   * @param checkOpen throws once the store was closed or the queue is gone; called by every method
   */
  LogFollower(String queue, Path dir, LogEnv env, Runnable checkOpen) {
    this.queue = queue;
    this.dir = dir;
    this.env = env;
    this.checkOpen = checkOpen;
  }

  // ---------------------------------------------------------------- reads

  @Override
  public Message read(long offset) {
    return refresh().reader().read(offset);
  }

  @Override
  public List<Message> readBatch(long start, int limit) {
    return refresh().reader().readBatch(start, limit);
  }

  @Override
  public long head() {
    return refresh().segments().head();
  }

  @Override
  public long tail() {
    return refresh().segments().tail();
  }

  @Override
  public long count() {
    SegmentSet s = refresh().segments();
    long h = s.head();
    return s.tail() - h;
  }

  @Override
  public Map<String, String> checkpoints() {
    return new HashMap<>(refresh().segments().checkpoints());
  }

  /** As the writer's log answers (see {@link LogRetention#timeOffset}). */
  @Override
  public long timeOffset(Instant time) {
    return refresh().lookups().timeOffset(Frames.millis(time));
  }

  /** As the writer's log answers (see {@link LogRetention#sizeOffset}). */
  @Override
  public long sizeOffset(long retentionBytes) {
    return refresh().lookups().sizeOffset(retentionBytes);
  }

  /** The size of the queue's segment files, as far as this view has followed them. */
  @Override
  public OptionalLong bytes() {
    return OptionalLong.of(refresh().segments().bytes());
  }

  /**
   * Polls: refreshes, then parks for 1 ms, doubling up to {@value #MAX_POLL_MS} ms, until the tail
   * is beyond {@code offset} or {@code timeout} passes.
   *
   * @throws InterruptedException if interrupted while waiting (or on entry)
   */
  @Override
  public boolean awaitAppend(long offset, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + StoreChecks.awaitNanos(timeout);
    long pause = TimeUnit.MILLISECONDS.toNanos(1);
    while (true) {
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      if (tail() > offset) {
        return true;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      LockSupport.parkNanos(this, Math.min(left, pause));
      pause = Math.min(pause * 2, TimeUnit.MILLISECONDS.toNanos(MAX_POLL_MS));
    }
  }

  // ---------------------------------------------------------------- refused

  private ReadOnlyStoreException refused(String operation) {
    return new ReadOnlyStoreException(env.store(), operation + " to queue '" + queue + "'");
  }

  @Override
  public long append(Message message) {
    throw refused("append");
  }

  @Override
  public long appendBatch(List<Message> batch) {
    throw refused("appendBatch");
  }

  @Override
  public long appendAndSync(Message message) {
    throw refused("appendAndSync");
  }

  @Override
  public long appendBatchAndSync(List<Message> batch, Map<String, String> checkpoints) {
    throw refused("appendBatchAndSync");
  }

  @Override
  public void truncate(long minOffset) {
    throw refused("truncate");
  }

  // ---------------------------------------------------------------- following the files

  /** The view, brought up to date with the files (see the class comment). */
  private View refresh() {
    checkOpen.run();
    lock.lock();
    try {
      View v = view;
      if (v != null && advance(v)) {
        return v;
      }
      View next = load();
      view = next;
      if (v != null) {
        release(v);
      }
      return next;
    } catch (IOException e) {
      throw new QueueStoreException(
          queue, "reading queue " + queue + " in " + dir + " beside its writer failed: " + e, e);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Brings {@code v} up to date; false when the files no longer match it and it must be built
   * again.
   */
  private boolean advance(View v) throws IOException {
    SegmentSet s = v.segments();
    long logicalHead = readHead();
    while (true) {
      Segment newest = s.active();
      long fileSize;
      try {
        fileSize = Files.size(newest.logFile);
      } catch (NoSuchFileException e) {
        return false; // deleted (everything truncated and a newer segment exists): list again
      }
      if (fileSize < newest.size) {
        return false; // cut by the writer (its recovery): what was seen may be gone
      }
      if (fileSize > newest.size) {
        scan(s, newest, fileSize);
      }
      if (newest.size < fileSize) {
        break; // stopped at a frame being written (or torn): nothing follows it yet
      }
      if (s.tail() == newest.baseOffset) {
        break; // empty: the writer rolls only from a segment that holds something
      }
      Segment next = s.segment(s.tail());
      if (!Files.exists(next.logFile)) {
        break;
      }
      seal(newest); // the writer rolled: the newest segment is complete
      next.activate(null, 0, next.baseOffset);
      s.followRoll(next);
    }
    dropVanished(s);
    s.setLogicalHead(Math.min(logicalHead, s.tail()));
    return true;
  }

  /** Scans the frames {@code newest} gained, up to {@code fileSize}, and publishes them. */
  private void scan(SegmentSet s, Segment newest, long fileSize) throws IOException {
    Map<String, String> cp = new LinkedHashMap<>(s.checkpoints());
    FrameScan.Result r;
    try (ReadHandles.Reader in = env.handles().reader(newest)) {
      r =
          FrameScan.scan(
              queue,
              newest,
              in::read,
              newest.size,
              newest.endOffset,
              fileSize,
              Long.MAX_VALUE,
              env.config(),
              cp);
    }
    if (r.endOffset() > s.tail()) {
      if (!cp.equals(s.checkpoints())) {
        s.setCheckpoints(Collections.unmodifiableMap(cp));
      }
      s.setTail(r.endOffset());
    }
  }

  /** Seals the segment the writer rolled away from, as the writer's roll does (in memory). */
  private void seal(Segment s) {
    s.completeTimeIndex();
    env.sealedIndexes().put(s, new LogEnv.SegmentIndexes(s.offsetIndex, s.timeIndex));
    s.sealed = true;
    s.offsetIndex = null;
    s.timeIndex = null;
  }

  /** Drops the oldest segments whose files the writer deleted; the head moves past them. */
  private void dropVanished(SegmentSet s) {
    for (Segment seg : new ArrayList<>(s.oldestFirst())) {
      if (seg == s.active() || Files.exists(seg.logFile)) {
        return;
      }
      drop(s, seg);
    }
  }

  private void drop(SegmentSet s, Segment seg) {
    seg.deleted = true;
    s.removeOldest(seg);
    env.handles().invalidate(seg);
    env.sealedIndexes().invalidate(seg);
  }

  /**
   * {@link LogReader}'s hook: whether {@code seg}, which a read could not find or read, was deleted
   * by the writer; if so, it and the segments before it leave the current view.
   */
  private boolean gone(Segment seg) {
    if (seg.deleted) {
      return true;
    }
    if (Files.exists(seg.logFile)) {
      return false;
    }
    lock.lock();
    try {
      View v = view;
      if (v != null && v.segments().floor(seg.baseOffset) == seg && seg != v.segments().active()) {
        for (Segment older : new ArrayList<>(v.segments().oldestFirst())) {
          drop(v.segments(), older);
          if (older == seg) {
            break;
          }
        }
      }
      seg.deleted = true;
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** The persisted logical head, read again only when its file changed; 0 when there is none. */
  private long readHead() throws IOException {
    Path f = LogHead.file(dir);
    FileStamp now = FileStamp.of(f);
    if (now == null) {
      headStamp = null;
      return persistedHead; // never written, or the queue is being deleted: keep what was seen
    }
    if (!now.equals(headStamp)) {
      persistedHead = Math.max(persistedHead, LogHead.read(queue, dir).orElse(0));
      headStamp = now;
    }
    return persistedHead;
  }

  /** Builds the view from a listing of the directory, retrying while the writer changes it. */
  private View load() throws IOException {
    for (int attempt = 1; ; attempt++) {
      View v = loadOnce();
      if (v != null) {
        return v;
      }
      if (!Files.isDirectory(dir)) {
        throw new QueueNotFoundException(queue);
      }
      if (attempt == LOAD_ATTEMPTS) {
        throw new QueueStoreException(
            queue,
            "reading queue "
                + queue
                + " beside its writer failed: its segment files in "
                + dir
                + " changed on each of "
                + LOAD_ATTEMPTS
                + " attempts to list them (expected a listing that holds still for a moment)");
      }
    }
  }

  /** One attempt at {@link #load}; null when a file listed was gone by the time it was read. */
  private View loadOnce() throws IOException {
    TreeMap<Long, Path> logs = new TreeMap<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        String name = p.getFileName().toString();
        if (SEGMENT.matcher(name).matches()) {
          logs.put(Long.parseLong(name.substring(0, 20)), p);
        }
      }
    } catch (NoSuchFileException e) {
      throw new QueueNotFoundException(queue);
    }
    if (logs.isEmpty()) {
      return null; // between a roll's new segment and the deletion of the old ones, or deleted
    }
    SegmentSet s = new SegmentSet(queue, dir, env, NO_BARRIERS);
    // what the writer's recovery would drop: an empty newest segment without its snapshot
    while (logs.size() > 1) {
      Segment probe = s.segment(logs.lastKey());
      if (Files.size(logs.lastEntry().getValue()) == 0 && !Files.exists(probe.checkpointFile)) {
        logs.pollLastEntry();
      } else {
        break;
      }
    }
    long logicalHead = readHead();
    Segment newest = null;
    try {
      for (Map.Entry<Long, Path> e : logs.entrySet()) {
        Segment seg = s.segment(e.getKey());
        if (newest != null) {
          newest.endOffset = seg.baseOffset;
        }
        seg.sealed = true;
        seg.size = Files.size(e.getValue());
        s.add(seg);
        newest = seg;
      }
      Map<String, String> cp;
      try {
        cp = new LinkedHashMap<>(LogRecovery.readCheckpointSnapshot(queue, newest));
      } catch (StoreCorruptedException e) {
        if (!Files.exists(newest.logFile)) {
          return null; // deleted with its snapshot after the listing
        }
        throw e;
      }
      newest.activate(null, 0, newest.baseOffset);
      long fileSize = Files.size(newest.logFile);
      FrameScan.Result r;
      try (ReadHandles.Reader in = env.handles().reader(newest)) {
        r =
            FrameScan.scan(
                queue,
                newest,
                in::read,
                0,
                newest.baseOffset,
                fileSize,
                Long.MAX_VALUE,
                env.config(),
                cp);
      }
      s.start(newest, r.endOffset(), Collections.unmodifiableMap(cp), 0);
    } catch (NoSuchFileException e) {
      for (Segment seg : s.oldestFirst()) {
        env.handles().invalidate(seg);
      }
      return null; // deleted after the listing
    }
    IndexLoader indexes = new IndexLoader(s, env);
    View v =
        new View(s, new LogReader(s, env, indexes, this::gone), new LogRetention(s, env, indexes));
    dropVanished(s);
    s.setLogicalHead(Math.min(logicalHead, s.tail()));
    return v;
  }

  /** Releases what a replaced view holds (read channels, cached indexes). */
  private void release(View v) {
    for (Segment seg : v.segments().oldestFirst()) {
      env.handles().invalidate(seg);
      env.sealedIndexes().invalidate(seg);
    }
  }

  /** Releases the current view's files. Idempotent; the store refuses calls afterwards. */
  void close() {
    lock.lock();
    try {
      View v = view;
      if (v != null) {
        release(v);
      }
    } finally {
      lock.unlock();
    }
  }
}
