package io.queuebridge.core.store.file;

import io.queuebridge.core.Message;
import io.queuebridge.core.errors.OffsetOutOfRangeException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.StoreClosedException;
import io.queuebridge.core.errors.StoreCorruptedException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One queue's segmented log (BEHAVIOUR S-FILE): segments in a {@link ConcurrentSkipListMap} by base
 * offset, the newest one active.
 *
 * <p><b>Concurrency.</b> Appends, rolls and truncation are serialised by {@code appendLock}; a
 * frame is encoded before the lock is taken and only sealed (offset, time, CRC) and written under
 * it, together with every other frame queued meanwhile (write combining, see {@link #append}).
 * Durability barriers run after the lock is released, on the segment that took the write ({@link
 * Segment#syncThrough}). Readers take no lock: they read {@link #tail} (volatile, published after
 * the write), find the segment with {@code floorEntry}, and read through {@link ReadHandles}.
 *
 * <p><b>Sticky failure</b> (BEHAVIOUR F-BARRIER). A failed barrier (a caller's or the background
 * sync's) records the error before its waiters wake. The next append retries an fsync under the
 * append lock and is refused while it keeps failing. A failed write is undone by cutting the file
 * back to its last good size; if even that fails the log refuses appends until the store is
 * reopened (recovery then cuts the torn frame).
 *
 * <p><b>Recovery</b> (BEHAVIOUR F-RECOVER), in O(newest segment): only the newest segment is
 * scanned, verifying framing, continuity and CRC of every frame; a torn or corrupt tail is cut
 * (logged at WARN, reported) and the cut fsynced before appends resume. Older segments are trusted
 * until read and verified frame by frame (CRC) when read; damage there fails the read with {@link
 * StoreCorruptedException} naming file and position. Indexes are hints, rebuilt when missing or
 * damaged. The checkpoint map is the newest segment's snapshot ({@code .cpt}, written when the
 * segment was created) plus the deltas carried by its frames.
 *
 * <p><b>Roll</b> (BEHAVIOUR F-BARRIER, F-ROLL): barrier through the outgoing segment's end; write
 * the new segment's checkpoint snapshot (tmp, fsync, rename), create its {@code .log}, fsync the
 * directory; switch; then seal the old one (index files written atomically, writer closed).
 */
final class QueueLog {
  private static final Logger LOG = LoggerFactory.getLogger(QueueLog.class);
  private static final Pattern SEGMENT = Pattern.compile("\\d{20}\\.log");
  private static final int OPEN = 0;
  private static final int DELETED = 1;
  private static final int CLOSED = 2;

  final String queue;
  final Path dir;
  private final LogEnv env;
  private final FileStoreConfig config;
  private final ConcurrentSkipListMap<Long, Segment> segments = new ConcurrentSkipListMap<>();
  private final ReentrantLock appendLock = new ReentrantLock();
  private final ConcurrentLinkedQueue<Request> pending = new ConcurrentLinkedQueue<>();

  /** Whether some caller holds the writer role (see {@link #append}). */
  private final AtomicBoolean writerActive = new AtomicBoolean();

  /** The writer while it waits for a barrier before writing (see {@link #writeRound}), or null. */
  private volatile Thread barrierWaiter;

  private static final int MAX_COMBINED_BYTES = 4 << 20;
  private final Object signal = new Object();
  private final Segment.SyncObserver observer;

  private volatile Segment active;
  private volatile long head;
  private volatile long tail;
  private volatile Map<String, String> checkpoints = Map.of();
  private volatile IOException sticky;
  private volatile QueueStoreException broken;
  private volatile int state = OPEN;
  private volatile int waiters;
  private long lastBatchBase = -1; // append lock

  private QueueLog(String queue, Path dir, LogEnv env) {
    this.queue = queue;
    this.dir = dir;
    this.env = env;
    this.config = env.config();
    this.observer =
        new Segment.SyncObserver() {
          @Override
          public void synced() {
            env.syncs().increment();
          }

          @Override
          public void syncFailed(IOException e) {
            sticky = e;
            LOG.warn("fsync failed for queue {} in {}: {}", queue, dir, e.toString());
          }
        };
  }

  // ---------------------------------------------------------------- create / open

  /** Creates the first segment (base 0) of a new queue in the existing, empty {@code dir}. */
  static QueueLog create(String queue, Path dir, LogEnv env) throws IOException {
    QueueLog log = new QueueLog(queue, dir, env);
    Segment s = log.newSegment(0, Map.of());
    log.segments.put(0L, s);
    log.active = s;
    log.head = 0;
    log.tail = 0;
    return log;
  }

  /** Opens the log in {@code dir}, recovering its newest segment. */
  static QueueLog open(String queue, Path dir, LogEnv env, RecoveryReport.Builder report)
      throws IOException {
    QueueLog log = new QueueLog(queue, dir, env);
    log.recover(report);
    return log;
  }

  private void recover(RecoveryReport.Builder report) throws IOException {
    TreeMap<Long, Path> logs = new TreeMap<>();
    List<Path> cpts = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        String name = p.getFileName().toString();
        if (name.endsWith(".tmp")) {
          Files.deleteIfExists(p);
          report.removed(p);
        } else if (SEGMENT.matcher(name).matches()) {
          logs.put(Long.parseLong(name.substring(0, 20)), p);
        } else if (name.endsWith(".cpt")) {
          cpts.add(p);
        }
      }
    }
    for (Path cpt : cpts) { // a crash between snapshot and segment creation leaves a lone .cpt
      String name = cpt.getFileName().toString();
      String base = name.substring(0, name.length() - 4);
      if (!Files.exists(cpt.resolveSibling(base + ".log"))) {
        Files.deleteIfExists(cpt);
        report.removed(cpt);
      }
    }
    if (logs.isEmpty()) {
      throw new StoreCorruptedException(
          queue, dir.toString(), -1, "the queue's directory holds no segment file (*.log)");
    }
    // A roll that crashed before its directory sync can leave an empty newest segment without its
    // checkpoint snapshot: nothing was ever appended to it, so the previous segment is the newest.
    while (logs.size() > 1) {
      Map.Entry<Long, Path> last = logs.lastEntry();
      Segment probe = new Segment(last.getKey(), dir, observer);
      if (Files.size(last.getValue()) == 0 && !Files.exists(probe.checkpointFile)) {
        Files.deleteIfExists(probe.logFile);
        Files.deleteIfExists(probe.indexFile);
        Files.deleteIfExists(probe.timeIndexFile);
        env.io().syncDirectory(dir);
        report.removed(probe.logFile);
        logs.pollLastEntry();
      } else {
        break;
      }
    }
    Long prev = null;
    for (Map.Entry<Long, Path> e : logs.entrySet()) {
      Segment s = new Segment(e.getKey(), dir, observer);
      if (prev != null) {
        Segment older = segments.get(prev);
        older.endOffset = s.baseOffset;
      }
      s.sealed = true;
      s.size = Files.size(e.getValue());
      segments.put(s.baseOffset, s);
      prev = s.baseOffset;
    }
    Segment newest = segments.lastEntry().getValue();
    Map<String, String> cp = readCheckpointSnapshot(newest);
    scanNewest(newest, cp, report);
    head = segments.firstKey();
  }

  private Map<String, String> readCheckpointSnapshot(Segment s) throws IOException {
    byte[] content;
    try {
      content = Files.readAllBytes(s.checkpointFile);
    } catch (NoSuchFileException e) {
      throw new StoreCorruptedException(
          queue,
          s.checkpointFile.toString(),
          -1,
          "the checkpoint snapshot of the newest segment is missing");
    }
    byte[] payload =
        Blobs.unwrap(
            Blobs.CHECKPOINT_MAGIC, "checkpoint snapshot", s.checkpointFile, content, queue);
    try {
      ByteSource src = new ByteSource(payload, 0, payload.length);
      long base = src.getLong();
      if (base != s.baseOffset) {
        throw new FormatException("snapshot is for base offset " + base, 0);
      }
      int n = src.getInt();
      Map<String, String> map = new HashMap<>();
      for (int i = 0; i < n; i++) {
        map.put(src.getString(), src.getString());
      }
      return map;
    } catch (FormatException e) {
      throw new StoreCorruptedException(
          queue,
          s.checkpointFile.toString(),
          Blobs.HEADER + e.position(),
          "bad checkpoint snapshot: " + e.getMessage());
    }
  }

  /**
   * Scans the newest segment: every frame's framing, CRC, version and offset continuity; cuts the
   * file at the first bad frame; rebuilds its indexes and checkpoint map; makes it active.
   */
  private void scanNewest(Segment s, Map<String, String> cp, RecoveryReport.Builder report)
      throws IOException {
    s.activate(null, 0, s.baseOffset);
    s.offsetIndex.clear();
    s.timeIndex.clear();
    long fileSize;
    long pos = 0;
    long expected = s.baseOffset;
    String problem = null;
    try (FileChannel ch = env.io().openReadable(s.logFile)) {
      fileSize = ch.size();
      ChunkReader r = new ChunkReader(ch::read, fileSize, 1 << 20);
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
          problem =
              "torn frame: declares "
                  + h.length()
                  + " bytes, "
                  + (fileSize - pos)
                  + " remain in the file";
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
          throw new StoreCorruptedException(
              queue,
              s.logFile.toString(),
              pos,
              "frame format version "
                  + h.version()
                  + " (this build reads version "
                  + Frames.VERSION
                  + "; the store was written by a newer version, upgrade to open it)");
        }
        if (h.baseOffset() != expected || h.count() < 1) {
          problem =
              "frame has base offset "
                  + h.baseOffset()
                  + " and "
                  + h.count()
                  + " records where offset "
                  + expected
                  + " was expected";
          break;
        }
        Map<String, String> delta;
        try {
          delta = Frames.checkpoints(b, at, h);
        } catch (FormatException e) {
          problem = "undecodable checkpoint section: " + e.getMessage();
          break;
        }
        cp.putAll(delta);
        s.recordAppend(
            h.baseOffset(),
            h.count(),
            h.length(),
            h.appendTime(),
            h.maxTime(),
            config.indexIntervalBytes(),
            config.timeIndexIntervalMs());
        lastBatchBase = h.baseOffset();
        expected = h.endOffset();
        pos += h.length();
      }
    }
    StoreIo.WritableFile w = env.io().openWritable(s.logFile, false);
    try {
      if (problem != null) {
        long cut = fileSize - pos;
        LOG.warn(
            "queue {}: cut {} bytes from the tail of {} at byte {}: {} (never acknowledged)",
            queue,
            cut,
            s.logFile,
            pos,
            problem);
        w.truncate(pos);
        w.force();
        env.io().syncDirectory(dir);
        report.logCut(new RecoveryReport.Cut(queue, s.logFile, pos, cut, problem));
      }
    } catch (IOException e) {
      w.close();
      throw e;
    }
    s.activate(w, pos, expected);
    if (problem != null) {
      s.markSynced(expected);
    }
    active = s;
    tail = expected;
    checkpoints = Collections.unmodifiableMap(new LinkedHashMap<>(cp));
  }

  /** Creates segment files at {@code base}: snapshot, log, directory sync. */
  private Segment newSegment(long base, Map<String, String> cp) throws IOException {
    Segment s = new Segment(base, dir, observer);
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

  // ---------------------------------------------------------------- append

  /** One caller's frame on its way into the log (write combining). */
  private static final class Request {
    static final int WAITING = 0;
    static final int TAKEN = 1;
    static final int DONE = 2;
    static final int FAILED = 3;
    static final int CANCELLED = 4;
    static final int LEAD = 5; // still queued; its caller has been handed the writer role

    final Frames.Encoded frame;
    final Map<String, String> cp;
    final boolean durable;
    final Thread thread = Thread.currentThread();
    final AtomicInteger state = new AtomicInteger(WAITING);
    // results, published by the state write
    long base;
    Segment segment;
    RuntimeException error;

    Request(Frames.Encoded frame, Map<String, String> cp, boolean durable) {
      this.frame = frame;
      this.cp = cp;
      this.durable = durable;
    }

    long end() {
      return base + frame.count;
    }

    boolean finished() {
      int s = state.get();
      return s == DONE || s == FAILED;
    }

    /** Finished or cancelled: no writer touches the frame any more. */
    boolean settled() {
      int s = state.get();
      return s == DONE || s == FAILED || s == CANCELLED;
    }
  }

  /**
   * Appends one frame holding {@code messages} and merging {@code cp} into the checkpoint map.
   *
   * <p><b>Write combining with one writer at a time.</b> The caller queues its encoded frame. At
   * most one caller at a time is the <em>writer</em> ({@link #writerActive}): it takes the append
   * lock, writes every queued frame (its own and those queued meanwhile) with one write, releases
   * the lock, hands the writer role to one queued caller ({@link #handOff}), then runs the barrier
   * for the durable frames it wrote ({@link Segment#syncThrough}, outside the lock, shared with
   * every other barrier) and only then wakes their callers. Every other caller parks once, until
   * its frame is written (and, if durable, covered by a barrier) or until it is handed the writer
   * role. A writer that finds a barrier in flight and only durable frames queued first waits for
   * that barrier, so that the frames queued while an fsync runs are written together and the next
   * fsync starts as soon as the previous one ends; a plain (non-durable) append that queues up
   * meanwhile cuts the wait short, so plain appends never wait for an fsync. So under contention
   * one lock acquisition, one write and one fsync serve many appends, and each caller parks about
   * once per append. Offsets follow queue order; each frame stays its own frame (its own CRC and
   * checkpoints).
   *
   * @param durable whether to return only after a barrier covers the frame
   * @param interruptible whether an interrupt that arrives before the frame was taken for writing
   *     cancels the append (nothing written, {@link InterruptedException})
   * @return the first offset
   */
  long append(
      List<Message> messages, Map<String, String> cp, boolean durable, boolean interruptible)
      throws InterruptedException {
    // The frame is encoded into this thread's reused buffer; it goes back once no writer can still
    // touch the frame (always, unless an Error left the request queued).
    ByteSink buffer = Frames.borrowSink(Frames.estimate(messages, cp));
    Request r = null;
    try {
      r = new Request(Frames.encode(messages, cp, buffer), cp, durable || config.syncEveryAppend());
      return append(r, interruptible);
    } finally {
      if (r == null || r.settled()) {
        Frames.releaseSink(buffer);
      }
    }
  }

  private long append(Request r, boolean interruptible) throws InterruptedException {
    pending.add(r);
    if (!r.durable) {
      Thread w = barrierWaiter;
      if (w != null) {
        LockSupport.unpark(w); // the writer waiting for a barrier writes us now instead
      }
    }
    boolean interrupted = false;
    try {
      while (!r.finished()) {
        int st = r.state.get();
        if (st == Request.LEAD
            || (st == Request.WAITING && writerActive.compareAndSet(false, true))) {
          writeRound();
          continue;
        }
        LockSupport.park(this);
        if (Thread.interrupted()) {
          if (interruptible && cancel(r)) {
            throw new InterruptedException(
                "interrupted before appending to queue " + queue + "; nothing was written");
          }
          interrupted = true; // already being written: finish, keep the interrupt
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    if (r.state.get() == Request.FAILED) {
      throw r.error;
    }
    return r.base;
  }

  /**
   * Withdraws a request not yet taken for writing; passes the writer role on if it had been handed
   * to this request.
   */
  private boolean cancel(Request r) {
    if (r.state.compareAndSet(Request.WAITING, Request.CANCELLED)) {
      pending.remove(r);
      return true;
    }
    if (r.state.compareAndSet(Request.LEAD, Request.CANCELLED)) {
      pending.remove(r);
      handOff();
      return true;
    }
    return false;
  }

  /**
   * One turn as the writer (the caller holds the writer role): writes every queued frame, hands the
   * role on, then syncs and releases the durable frames written.
   */
  private void writeRound() {
    if (onlyDurableQueued()) {
      // what queues up meanwhile rides the next barrier, in one write; a plain append that queues
      // up meanwhile unparks us (see append) so that it never waits for an fsync
      barrierWaiter = Thread.currentThread();
      try {
        active.awaitBarrier(() -> !onlyDurableQueued());
      } finally {
        barrierWaiter = null;
      }
    }
    List<Request> written;
    try {
      appendLock.lock();
      try {
        written = combine();
      } finally {
        appendLock.unlock();
      }
    } finally {
      handOff(); // even after an unexpected error: the queued frames need a writer
    }
    syncAndRelease(written);
  }

  /** Whether something is queued and every queued frame is durable (nobody waits for a write). */
  private boolean onlyDurableQueued() {
    boolean any = false;
    for (Request q : pending) {
      if (!q.durable) {
        return false;
      }
      any = true;
    }
    return any;
  }

  /**
   * Passes the writer role to the first caller still waiting, or gives it up when nobody waits. A
   * caller queues its frame before it tries to take the role, and the role is given up before the
   * queue is looked at again, so a queued frame never waits for nobody.
   */
  private void handOff() {
    while (true) {
      for (Request q : pending) {
        if (q.state.compareAndSet(Request.WAITING, Request.LEAD)) {
          wake(q);
          return;
        }
      }
      writerActive.set(false);
      if (!anyWaiting() || !writerActive.compareAndSet(false, true)) {
        return;
      }
    }
  }

  private boolean anyWaiting() {
    for (Request q : pending) {
      if (q.state.get() == Request.WAITING) {
        return true;
      }
    }
    return false;
  }

  /**
   * Runs the barriers for durable frames a writer wrote (outside the append lock), then wakes their
   * callers with the outcome. Frames are in offset order; one barrier per segment covers a run of
   * them (it is shared with any other in flight).
   */
  private void syncAndRelease(List<Request> written) {
    int i = 0;
    while (i < written.size()) {
      Segment seg = written.get(i).segment;
      int j = i;
      while (j < written.size() && written.get(j).segment == seg) {
        j++;
      }
      boolean ok;
      try {
        seg.syncThrough(written.get(j - 1).end());
        ok = true;
      } catch (IOException e) {
        ok = false;
      }
      for (int k = i; k < j; k++) {
        Request q = written.get(k);
        if (ok) {
          q.state.set(Request.DONE);
        } else {
          try {
            barrier(
                seg, q.base, q.end()); // this frame's own verdict (an earlier barrier may cover it)
            q.state.set(Request.DONE);
          } catch (RuntimeException e) {
            q.error = e;
            q.state.set(Request.FAILED);
          }
        }
        wake(q);
      }
      i = j;
    }
  }

  /**
   * Writes every queued frame; the caller holds the append lock. Non-durable frames are released at
   * once; the durable ones written are returned for {@link #syncAndRelease}.
   */
  private List<Request> combine() {
    List<Request> batch = new ArrayList<>();
    List<Request> written = new ArrayList<>();
    int bytes = 0;
    Request r;
    while (bytes < MAX_COMBINED_BYTES && (r = pending.poll()) != null) {
      if (r.state.compareAndSet(Request.WAITING, Request.TAKEN)
          || r.state.compareAndSet(Request.LEAD, Request.TAKEN)) {
        batch.add(r);
        bytes += r.frame.length();
      }
    }
    if (batch.isEmpty()) {
      return written;
    }
    int i = 0;
    try {
      checkWritable();
      while (i < batch.size()) {
        i = writeRun(batch, i, written);
      }
    } catch (RuntimeException e) {
      for (; i < batch.size(); i++) {
        fail(batch.get(i), e);
      }
    }
    if (!batch.isEmpty()) {
      wakeWaiters();
    }
    return written;
  }

  /**
   * Writes {@code batch[from..]} up to the next roll with one write; returns the index after the
   * last request written.
   */
  private int writeRun(List<Request> batch, int from, List<Request> written) {
    long now = env.clock().millis();
    maybeRoll(now, batch.get(from).frame.length());
    Segment seg = active;
    long base = tail;
    long size = seg.size;
    int to = from;
    int len = 0;
    while (to < batch.size()) {
      Frames.Encoded f = batch.get(to).frame;
      if (to > from && size + len + f.length() > config.segmentBytes()) {
        break; // the rest goes to the next segment
      }
      Frames.seal(f, base, now);
      base += f.count;
      len += f.length();
      to++;
    }
    byte[] bytes;
    if (to - from == 1) {
      bytes = batch.get(from).frame.bytes();
    } else {
      bytes = new byte[len];
      int at = 0;
      for (int k = from; k < to; k++) {
        Frames.Encoded f = batch.get(k).frame;
        System.arraycopy(f.bytes(), 0, bytes, at, f.length());
        at += f.length();
      }
    }
    try {
      seg.write(bytes, len);
    } catch (IOException e) {
      undoWrite(seg, e);
      throw new QueueStoreException(
          queue, "append to queue " + queue + " failed writing " + seg.logFile + ": " + e, e);
    }
    Map<String, String> cp = null;
    for (int k = from; k < to; k++) {
      Request q = batch.get(k);
      Frames.Encoded f = q.frame;
      long b = tail;
      seg.recordAppend(
          b,
          f.count,
          f.length(),
          now,
          f.maxTime(now),
          config.indexIntervalBytes(),
          config.timeIndexIntervalMs());
      lastBatchBase = b;
      if (!q.cp.isEmpty()) {
        if (cp == null) {
          cp = new LinkedHashMap<>(checkpoints);
        }
        cp.putAll(q.cp);
      }
      q.base = b;
      q.segment = seg;
      tail = b + f.count;
    }
    if (cp != null) {
      checkpoints = Collections.unmodifiableMap(cp);
    }
    for (int k = from; k < to; k++) {
      Request q = batch.get(k);
      if (q.durable) {
        written.add(q);
      } else {
        q.state.set(Request.DONE);
        wake(q);
      }
    }
    return to;
  }

  private static void fail(Request r, RuntimeException e) {
    r.error = e;
    r.state.set(Request.FAILED);
    wake(r);
  }

  /** Wakes a request's caller unless it is us (no stray permit for our next park). */
  private static void wake(Request r) {
    if (r.thread != Thread.currentThread()) {
      LockSupport.unpark(r.thread);
    }
  }

  private void checkWritable() {
    checkState();
    if (broken != null) {
      throw broken;
    }
    IOException previous = sticky;
    if (previous != null) {
      try {
        active.forceNow();
        sticky = null;
        LOG.info("queue {}: fsync works again after an earlier failure", queue);
      } catch (IOException e) {
        throw new QueueStoreException(
            queue,
            "previous sync failure persists for queue "
                + queue
                + " ("
                + previous
                + "); retry failed: "
                + e,
            e);
      }
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

  private void barrier(Segment seg, long base, long end) {
    try {
      seg.syncThrough(end);
    } catch (Segment.ClosedSegmentException e) {
      checkState();
      throw new QueueStoreException(
          queue, "durability barrier for offsets [" + base + ", " + end + ") was cut short", e);
    } catch (IOException e) {
      throw new QueueStoreException(
          queue,
          "durability barrier for offsets ["
              + base
              + ", "
              + end
              + ") of queue "
              + queue
              + " failed; the write must not be acknowledged: "
              + e.getMessage(),
          e);
    }
  }

  private void maybeRoll(long now, int nextFrameLength) {
    Segment a = active;
    if (a.isEmpty()) {
      return;
    }
    boolean bySize = a.size + nextFrameLength > config.segmentBytes();
    boolean byAge =
        config.segmentMs() > 0
            && a.firstAppendTime != Long.MIN_VALUE
            && now - a.firstAppendTime >= config.segmentMs();
    if (bySize || byAge) {
      try {
        roll();
      } catch (IOException e) {
        throw new QueueStoreException(
            queue, "rolling a new segment for queue " + queue + " failed: " + e, e);
      }
    }
  }

  /** Caller holds the append lock; the active segment is not empty. */
  private void roll() throws IOException {
    Segment old = active;
    old.syncThrough(old.endOffset);
    Segment next = newSegment(tail, checkpoints);
    segments.put(next.baseOffset, next);
    active = next;
    seal(old);
  }

  private void seal(Segment s) {
    s.completeTimeIndex(lastBatchBase);
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

  /** Background sync: a barrier through everything written to the active segment. */
  void syncActive() {
    Segment a = active;
    if (state != OPEN || a.fullySynced()) {
      return;
    }
    try {
      a.syncThrough(a.endOffset);
    } catch (IOException e) {
      // recorded as the sticky failure by the observer; the next append retries
    }
  }

  // ---------------------------------------------------------------- read

  long head() {
    checkState();
    return head;
  }

  long tail() {
    checkState();
    return tail;
  }

  /** {@code [head, tail]} read consistently enough for {@code count}. */
  long count() {
    checkState();
    long h = head;
    return tail - h;
  }

  Map<String, String> checkpoints() {
    checkState();
    return new HashMap<>(checkpoints);
  }

  Message read(long offset) {
    checkState();
    long t = tail;
    long h = head;
    if (offset < h || offset >= t) {
      throw new OffsetOutOfRangeException(queue, offset, h, t);
    }
    List<Message> one = readBatch(offset, 1, true);
    if (one.isEmpty() || one.get(0).offset() != offset) {
      throw new OffsetOutOfRangeException(queue, offset, head, tail);
    }
    return one.get(0);
  }

  List<Message> readBatch(long start, int limit) {
    checkState();
    return readBatch(start, limit, false);
  }

  private List<Message> readBatch(long start, int limit, boolean exact) {
    List<Message> out = new ArrayList<>(Math.min(limit, 1024));
    long offset = Math.max(start, head);
    int stalls = 0;
    while (out.size() < limit) {
      long t = tail;
      if (offset >= t) {
        break;
      }
      Map.Entry<Long, Segment> e = segments.floorEntry(offset);
      if (e == null) { // truncated meanwhile
        if (exact) {
          break;
        }
        offset = Math.max(offset, head);
        if (++stalls > 100) {
          break;
        }
        continue;
      }
      Segment seg = e.getValue();
      Long nextBase = segments.higherKey(seg.baseOffset);
      long until = nextBase != null ? Math.min(nextBase, t) : Math.min(seg.endOffset, t);
      int before = out.size();
      try {
        readSegment(seg, offset, until, limit - out.size(), out, true);
      } catch (NoSuchFileException ex) {
        if (!seg.deleted) {
          throw corrupt(seg, -1, "segment file is missing", ex);
        }
      } catch (IOException ex) {
        if (seg.deleted) {
          continue;
        }
        throw new QueueStoreException(queue, "reading " + seg.logFile + " failed: " + ex, ex);
      }
      int got = out.size() - before;
      if (got == 0) {
        if (seg.deleted) {
          if (exact) {
            break;
          }
          offset = Math.max(offset, head);
          if (++stalls > 100) {
            break;
          }
          continue;
        }
        throw corrupt(seg, -1, "offset " + offset + " is missing from the segment", null);
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
    SparseIndex.View idx = offsetIndex(seg);
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
          throw corrupt(
              seg,
              pos,
              "the file ends (valid size "
                  + valid
                  + " bytes) before offset "
                  + from
                  + " (expected up to "
                  + until
                  + ")",
              null);
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
          throw corrupt(seg, pos, describeBadFrame(b, at, h, pos, valid, expected), null);
        }
        first = false;
        if (from < h.endOffset()) {
          at = r.fill(pos, h.length());
          b = r.buffer();
          if (at < 0) {
            throw corrupt(seg, pos, "short read of a " + h.length() + "-byte frame", null);
          }
          if (Frames.crc(b, at, h.length()) != h.crc()) {
            throw corrupt(
                seg, pos, "CRC-32C mismatch in the frame of offset " + h.baseOffset(), null);
          }
          if (h.version() != Frames.VERSION) {
            throw corrupt(
                seg,
                pos,
                "frame format version "
                    + h.version()
                    + " (this build reads version "
                    + Frames.VERSION
                    + ")",
                null);
          }
          int skip = (int) (from - h.baseOffset());
          int want = (int) Math.min(Math.min(max - taken, until - from), h.count() - skip);
          List<Message> decoded;
          try {
            decoded = Frames.decode(b, at, h, skip, want);
          } catch (FormatException e) {
            throw corrupt(
                seg, pos + e.position() - at, "undecodable record: " + e.getMessage(), null);
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
      LOG.warn("queue {}: offset index of {} is damaged; rebuilding it", queue, seg.logFile);
      env.sealedIndexes().put(seg, rebuildIndexes(seg));
      readSegment(seg, from, until, max, out, false);
    }
  }

  private static String describeBadFrame(
      byte[] b, int at, Frames.FrameHeader h, long pos, long valid, long expected) {
    if (Frames.magic(b, at) != Frames.MAGIC) {
      return String.format("bad frame magic 0x%08X", Frames.magic(b, at));
    }
    if (h.length() < Frames.HEADER || h.length() > valid - pos) {
      return "bad frame length " + h.length() + " (" + (valid - pos) + " bytes remain)";
    }
    return "frame has base offset "
        + h.baseOffset()
        + " and "
        + h.count()
        + " records where offset "
        + expected
        + " was expected";
  }

  private StoreCorruptedException corrupt(Segment seg, long pos, String reason, Throwable cause) {
    StoreCorruptedException e =
        new StoreCorruptedException(queue, seg.logFile.toString(), pos, reason);
    if (cause != null) {
      e.initCause(cause);
    }
    return e;
  }

  /** The offset index of a segment: in memory for the active one, cached for sealed ones. */
  private SparseIndex.View offsetIndex(Segment seg) throws IOException {
    SparseIndex live = seg.offsetIndex;
    if (live != null) {
      return live.view();
    }
    return sealedIndexes(seg).offsets().view();
  }

  private SparseIndex.View timeIndex(Segment seg) throws IOException {
    SparseIndex live = seg.timeIndex;
    if (live != null) {
      return live.view();
    }
    return sealedIndexes(seg).times().view();
  }

  private LogEnv.SegmentIndexes sealedIndexes(Segment seg) throws IOException {
    LogEnv.SegmentIndexes cached = env.sealedIndexes().getIfPresent(seg);
    if (cached != null) {
      return cached;
    }
    LogEnv.SegmentIndexes loaded = loadIndexes(seg);
    env.sealedIndexes().put(seg, loaded);
    return loaded;
  }

  /** Loads a sealed segment's index files; rebuilds them when missing or damaged. */
  private LogEnv.SegmentIndexes loadIndexes(Segment seg) throws IOException {
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
    return rebuildIndexes(seg);
  }

  private SparseIndex loadIndex(Path file, int magic, Segment seg, boolean offsets)
      throws IOException {
    byte[] payload = Blobs.unwrap(magic, "segment index", file, Files.readAllBytes(file), queue);
    return SparseIndex.parse(payload, seg.baseOffset, offsets, offsets ? 0 : seg.baseOffset);
  }

  /** Scans a sealed segment's frame headers to rebuild both indexes, then saves them. */
  private LogEnv.SegmentIndexes rebuildIndexes(Segment seg) throws IOException {
    env.indexRebuilds().increment();
    Segment scratch = new Segment(seg.baseOffset, dir, observer);
    scratch.activate(null, 0, seg.baseOffset);
    long pos = 0;
    long expected = seg.baseOffset;
    long last = seg.baseOffset;
    try (ReadHandles.Reader reader = env.handles().reader(seg)) {
      ChunkReader r = new ChunkReader(reader::read, seg.size, 1 << 20);
      while (expected < seg.endOffset) {
        int at = r.fill(pos, Frames.HEADER);
        if (at < 0) {
          throw corrupt(
              seg,
              pos,
              "the file ends before offset " + expected + " while rebuilding its index",
              null);
        }
        byte[] b = r.buffer();
        Frames.FrameHeader h = Frames.header(b, at);
        if (Frames.magic(b, at) != Frames.MAGIC
            || h.length() < Frames.HEADER
            || h.length() > seg.size - pos
            || h.baseOffset() != expected
            || h.count() < 1) {
          throw corrupt(seg, pos, describeBadFrame(b, at, h, pos, seg.size, expected), null);
        }
        scratch.recordAppend(
            h.baseOffset(),
            h.count(),
            h.length(),
            h.appendTime(),
            h.maxTime(),
            config.indexIntervalBytes(),
            config.timeIndexIntervalMs());
        last = h.baseOffset();
        expected = h.endOffset();
        pos += h.length();
      }
    }
    scratch.completeTimeIndex(last);
    seg.maxTime = scratch.maxTime;
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

  // ---------------------------------------------------------------- retention

  /**
   * The first offset of the first batch whose running maximum record time reaches {@code
   * timeMillis}, found through the time indexes: never later than the exact answer.
   */
  long timeOffset(long timeMillis) {
    checkState();
    for (Segment seg : segments.values()) {
      long segMax = segmentMaxTime(seg);
      if (segMax == Long.MIN_VALUE || segMax < timeMillis) {
        continue;
      }
      SparseIndex.View tv;
      try {
        tv = timeIndex(seg);
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
      return Math.max(answer, head);
    }
    return tail;
  }

  private long segmentMaxTime(Segment seg) {
    if (!seg.sealed || seg.maxTime != Long.MIN_VALUE) {
      return seg.maxTime;
    }
    try {
      sealedIndexes(seg);
      if (seg.maxTime == Long.MIN_VALUE) {
        SparseIndex.View tv = sealedIndexes(seg).times().view();
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
   * The base of the newest segment that does not fit in {@code retentionBytes} together with every
   * newer one; the head when everything fits. Never over-trims.
   */
  long sizeOffset(long retentionBytes) {
    checkState();
    long sum = 0;
    for (Segment seg : segments.descendingMap().values()) {
      sum += seg.size;
      if (sum > retentionBytes) {
        return Math.max(seg.baseOffset, head);
      }
    }
    return head;
  }

  /** Deletes whole segments below {@code minOffset} (BEHAVIOUR S-FILE). */
  void truncate(long minOffset) {
    appendLock.lock();
    try {
      checkState();
      long t = tail;
      long min = Math.min(minOffset, t);
      if (min <= head) {
        return;
      }
      if (min >= t && !active.isEmpty()) {
        if (broken != null) {
          throw broken;
        }
        try {
          roll(); // everything goes: continue in a fresh segment at the tail
        } catch (IOException e) {
          throw new QueueStoreException(queue, "truncating queue " + queue + " failed: " + e, e);
        }
      }
      boolean deleted = false;
      for (Segment seg : new ArrayList<>(segments.values())) {
        if (seg == active) {
          break;
        }
        Long next = segments.higherKey(seg.baseOffset);
        if (next == null || next > min) {
          break;
        }
        segments.remove(seg.baseOffset);
        head = segments.firstKey();
        deleteFiles(seg);
        deleted = true;
      }
      if (deleted) {
        try {
          env.io().syncDirectory(dir);
        } catch (IOException e) {
          LOG.warn("queue {}: directory sync after truncation failed: {}", queue, e.toString());
        }
      }
    } finally {
      appendLock.unlock();
    }
  }

  private void deleteFiles(Segment seg) {
    seg.deleted = true;
    env.handles().invalidate(seg);
    env.sealedIndexes().invalidate(seg);
    for (Path p : List.of(seg.logFile, seg.indexFile, seg.timeIndexFile, seg.checkpointFile)) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException e) {
        LOG.warn("queue {}: could not delete {}: {}", queue, p, e.toString());
      }
    }
  }

  // ---------------------------------------------------------------- waiting

  boolean awaitAppend(long offset, Duration timeout) throws InterruptedException {
    checkState();
    if (tail > offset) {
      return true;
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (signal) {
      waiters++;
      try {
        while (tail <= offset) {
          checkState();
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

  // ---------------------------------------------------------------- lifecycle

  private void checkState() {
    int s = state;
    if (s == DELETED) {
      throw new QueueNotFoundException(queue);
    }
    if (s == CLOSED) {
      throw new StoreClosedException(env.store());
    }
  }

  /** Makes buffered appends durable and releases the files. Idempotent. */
  void close() {
    appendLock.lock();
    try {
      if (state != OPEN) {
        return;
      }
      Segment a = active;
      try {
        a.syncThrough(a.endOffset);
      } catch (IOException e) {
        LOG.warn("queue {}: final fsync of {} failed: {}", queue, a.logFile, e.toString());
      }
      state = CLOSED;
      closeAll();
    } finally {
      appendLock.unlock();
    }
    wakeAll();
  }

  /** Marks the log deleted and releases its files; the caller removes the directory. */
  void delete() {
    appendLock.lock();
    try {
      if (state != OPEN) {
        return;
      }
      state = DELETED;
      closeAll();
    } finally {
      appendLock.unlock();
    }
    wakeAll();
  }

  private void closeAll() {
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

  private void wakeAll() {
    synchronized (signal) {
      signal.notifyAll();
    }
  }

  // ---------------------------------------------------------------- for tests

  int segmentCount() {
    return segments.size();
  }

  List<Segment> segmentsForTest() {
    return List.copyOf(segments.values());
  }

  Segment activeForTest() {
    return active;
  }
}
