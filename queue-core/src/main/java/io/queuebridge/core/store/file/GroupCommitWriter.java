package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.Message;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The appends of one queue's log: write combining with one writer at a time, then group commit for
 * the callers who asked for durability (see {@link #append}).
 *
 * <p><b>Concurrency.</b> A frame is encoded by its caller before any lock is taken; it is only
 * sealed (offset, time, CRC) and written under the set's append lock, together with every other
 * frame queued meanwhile, and the tail is published after the write. Durability barriers run after
 * the lock is released, on the segment that took the write ({@link Segment#syncThrough}). Rolls
 * happen under the lock before a write that would take the active segment past {@code
 * segment.bytes}, or once its first batch is {@code segment.ms} old.
 *
 * <p><b>Failures.</b> Before writing, the writer checks that the log is open and not broken and
 * retries a recorded sync failure ({@link StickyFailure}); a refused or failed write fails every
 * frame it would have written, and nothing of it stays in the file (or, when that cannot be undone,
 * the log is broken: {@link SegmentSet#write}). A durable frame whose barrier fails is reported
 * failed to its caller (the write must not be acknowledged) unless an earlier barrier had already
 * made it durable.
 */
final class GroupCommitWriter {
  private static final int MAX_COMBINED_BYTES = 4 << 20;

  private final String queue;
  private final LogEnv env;
  private final FileStoreConfig config;
  private final SegmentSet segments;
  private final StickyFailure sticky;
  private final Runnable appended;
  private final ConcurrentLinkedQueue<Request> pending = new ConcurrentLinkedQueue<>();

  /** Whether some caller holds the writer role (see {@link #append}). */
  private final AtomicBoolean writerActive = new AtomicBoolean();

  /** The writer while it waits for a barrier before writing (see {@link #writeRound}), or null. */
  private volatile Thread barrierWaiter;

  /**
   * A writer appending to {@code segments}, retrying {@code sticky} before it writes, and running
   * {@code appended} after every round that wrote something (to wake readers waiting for appends).
   */
  GroupCommitWriter(SegmentSet segments, LogEnv env, StickyFailure sticky, Runnable appended) {
    this.queue = segments.queue;
    this.env = env;
    this.config = env.config();
    this.segments = segments;
    this.sticky = sticky;
    this.appended = appended;
  }

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
   * @param messages the batch: not empty, no null element, not changed by the caller meanwhile
   * @param cp checkpoints to merge (not null; empty for none)
   * @param durable whether to return only after a barrier covers the frame
   * @param interruptible whether an interrupt that arrives before the frame was taken for writing
   *     cancels the append (nothing written, {@link InterruptedException})
   * @return the first offset
   * @throws InterruptedException if {@code interruptible} and interrupted before the frame was
   *     taken for writing (nothing written)
   * @throws io.queuebridge.core.errors.QueueNotFoundException if the queue was deleted (nothing
   *     written)
   * @throws io.queuebridge.core.errors.StoreClosedException if the store was closed (nothing
   *     written)
   * @throws QueueStoreException if the log refuses writes or the write failed (nothing written), or
   *     if the barrier of a durable append failed (the frame may or may not be in the log; it must
   *     not be acknowledged)
   * @throws io.queuebridge.core.errors.StoreCorruptedException if the log holds a range found
   *     damaged on open (nothing written; BEHAVIOUR F-RECOVER)
   */
  long append(
      List<Message> messages, Map<String, String> cp, boolean durable, boolean interruptible)
      throws InterruptedException {
    segments.checkAppendable();
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
        segments.active().awaitBarrier(() -> !onlyDurableQueued());
      } finally {
        barrierWaiter = null;
      }
    }
    List<Request> written;
    try {
      segments.appendLock.lock();
      try {
        written = combine();
      } finally {
        segments.appendLock.unlock();
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
      appended.run();
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
    Segment seg = segments.active();
    long base = segments.tail();
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
    segments.write(seg, bytes, len);
    Map<String, String> cp = null;
    for (int k = from; k < to; k++) {
      Request q = batch.get(k);
      Frames.Encoded f = q.frame;
      long b = segments.tail();
      seg.recordAppend(
          b,
          f.count,
          f.length(),
          now,
          f.maxTime(now),
          config.indexIntervalBytes(),
          config.timeIndexIntervalMs());
      if (!q.cp.isEmpty()) {
        if (cp == null) {
          cp = new LinkedHashMap<>(segments.checkpoints());
        }
        cp.putAll(q.cp);
      }
      q.base = b;
      q.segment = seg;
      segments.setTail(b + f.count);
    }
    if (cp != null) {
      segments.setCheckpoints(Collections.unmodifiableMap(cp));
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

  /** Refuses to write while the log is closed, deleted or broken, or its last sync failed. */
  private void checkWritable() {
    segments.checkWritable();
    sticky.retry(segments.active());
  }

  private void barrier(Segment seg, long base, long end) {
    try {
      seg.syncThrough(end);
    } catch (Segment.ClosedSegmentException e) {
      segments.checkOpen();
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
    Segment a = segments.active();
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
        segments.roll();
      } catch (IOException e) {
        throw new QueueStoreException(
            queue, "rolling a new segment for queue " + queue + " failed: " + e, e);
      }
    }
  }

  /** Background sync: a barrier through everything written to the active segment. */
  void syncActive() {
    Segment a = segments.active();
    if (!segments.isOpen() || a.fullySynced()) {
      return;
    }
    try {
      a.syncThrough(a.endOffset);
    } catch (IOException e) {
      // recorded as the sticky failure by the observer; the next append retries
    }
  }
}
