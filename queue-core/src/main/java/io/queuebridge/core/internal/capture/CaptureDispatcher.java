package io.queuebridge.core.internal.capture;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs topic-capture appends off the publisher's thread (BEHAVIOUR Q-CAPD). Internal to the queue
 * core: {@link io.queuebridge.core.QueueManager} owns one; it is public only because it lives in
 * its own package.
 *
 * <p><b>Lanes.</b> W lanes, each a bounded FIFO of depth D drained by one daemon worker thread. A
 * job for queue {@code q} always goes to lane {@code FNV-1a-32(q) mod W} (unsigned), so the appends
 * to one queue happen in enqueue order, and a stalled queue stalls only its own lane (and the
 * queues hashed to it, until their jobs start dropping).
 *
 * <p><b>Never blocking, never silent.</b> {@link #enqueue} never waits for space: a full lane drops
 * the <em>new</em> job, so each queue keeps a gap-free prefix of its captures. Every job ends in
 * exactly one of three ways: run (and if it throws, counted in {@link #failures()}), or counted in
 * {@link #dropped()} (full lane, enqueue after stop, past the drain deadline, swept at stop). The
 * drop log is rate-limited to one line per 10 s, and so is the failure log (a failing store would
 * otherwise log once per captured message); the counters count every one.
 *
 * <p><b>Concurrency.</b> Enqueue holds the read side of a closed-flag lock across its offer; {@link
 * #stop} takes the write side to set the flag, so once the flag is set no enqueue is mid-flight and
 * none is ever accepted again. Workers then drain their lanes until the drain deadline (stop time +
 * drain timeout) and drop what remains after it; stop waits at most the drain timeout for them,
 * then sweeps every lane, counting leftovers as dropped. A job a worker is inside when stop gives
 * up waiting is not counted: its outcome is not known yet, and the worker records it when it
 * finishes. Appends cannot be interrupted, so such a worker may outlive stop; {@link #stop} reports
 * it.
 *
 * <p>All methods are thread-safe. Jobs accepted before {@link #start} wait in their lanes.
 */
public final class CaptureDispatcher {
  private static final Logger LOG = LoggerFactory.getLogger(CaptureDispatcher.class);
  private static final long LOG_INTERVAL_MILLIS = 10_000;
  private static final int FNV_OFFSET_BASIS = 0x811c9dc5;
  private static final int FNV_PRIME = 0x01000193;

  /** One unit of capture work: appending one message to one queue. */
  @FunctionalInterface
  public interface Job {
    /**
     * Does the work on a worker thread. Throwing counts one capture failure; to count a drop
     * instead (for a refusal that means "never attempted"), call {@link #recordDropped} and return.
     */
    void run() throws Exception;
  }

  private final String name;
  private final Lane[] lanes;
  private final Thread[] workers;
  private final long drainTimeoutNanos;
  private final LongSupplier nanoTicker;
  private final LongAdder dropped = new LongAdder();
  private final LongAdder failures = new LongAdder();
  private final DropLogLimiter dropLog;
  private final DropLogLimiter failureLog;
  private final ReentrantReadWriteLock closeLock = new ReentrantReadWriteLock();
  private boolean closed; // guarded by closeLock
  private boolean started; // guarded by this
  private volatile boolean stopping;
  private volatile long drainDeadlineNanos;

  /**
   * A dispatcher with {@code workers} lanes of {@code depth} jobs each. No thread starts until
   * {@link #start()}.
   *
   * @param name prefix of the worker thread names ({@code <name>-capture-<lane>})
   * @param clock paces the drop log
   * @throws IllegalArgumentException if {@code workers} or {@code depth} is not positive or the
   *     drain timeout is negative
   */
  public CaptureDispatcher(
      String name, int workers, int depth, Duration drainTimeout, Clock clock) {
    this(name, workers, depth, drainTimeout, clock, System::nanoTime);
  }

  /** As above, with the monotonic time source of the drain deadline (tests move it by hand). */
  CaptureDispatcher(
      String name,
      int workers,
      int depth,
      Duration drainTimeout,
      Clock clock,
      LongSupplier nanoTicker) {
    this.nanoTicker = Objects.requireNonNull(nanoTicker, "nanoTicker");
    this.name = Objects.requireNonNull(name, "name");
    if (workers <= 0) {
      throw new IllegalArgumentException("capture workers must be > 0, got " + workers);
    }
    if (depth <= 0) {
      throw new IllegalArgumentException("capture queue depth must be > 0, got " + depth);
    }
    if (drainTimeout.isNegative()) {
      throw new IllegalArgumentException("drain timeout must be >= 0, got " + drainTimeout);
    }
    this.lanes = new Lane[workers];
    for (int i = 0; i < workers; i++) {
      lanes[i] = new Lane(depth);
    }
    this.workers = new Thread[workers];
    this.drainTimeoutNanos = drainTimeout.toNanos();
    this.dropLog = new DropLogLimiter(Objects.requireNonNull(clock, "clock"), LOG_INTERVAL_MILLIS);
    this.failureLog = new DropLogLimiter(clock, LOG_INTERVAL_MILLIS);
  }

  /**
   * Starts one worker thread per lane.
   *
   * @throws IllegalStateException if already started or stopped
   */
  public synchronized void start() {
    if (started) {
      throw new IllegalStateException("capture dispatcher " + name + " already started");
    }
    if (stopping) {
      throw new IllegalStateException("capture dispatcher " + name + " is stopped");
    }
    started = true;
    for (int i = 0; i < lanes.length; i++) {
      Lane lane = lanes[i];
      Thread t = new Thread(() -> work(lane), name + "-capture-" + i);
      t.setDaemon(true);
      workers[i] = t;
      t.start();
    }
  }

  /**
   * Hands a job for {@code queue} to its lane. Never blocks on the job's lane filling up. A job
   * that is not accepted (lane full, or the dispatcher stopped) is counted as dropped.
   *
   * @return whether the job was accepted
   */
  public boolean enqueue(String queue, Job job) {
    Lane lane = lanes[lane(queue, lanes.length)];
    ReentrantReadWriteLock.ReadLock read = closeLock.readLock();
    read.lock();
    try {
      if (closed) {
        recordDropped(queue, "capture stopped");
        return false;
      }
      if (!lane.offer(job)) {
        recordDropped(queue, "capture lane full");
        return false;
      }
      return true;
    } finally {
      read.unlock();
    }
  }

  /**
   * Stops accepting jobs, lets the workers drain until the drain deadline, waits at most the drain
   * timeout for them, and counts every job still in a lane as dropped. A second call waits up to
   * the drain timeout again for workers still running and sweeps again. If the calling thread is
   * interrupted while waiting, the wait ends early and the interrupt status is kept.
   *
   * @return whether every worker has exited (capture is quiesced); false means a worker is still
   *     inside a job, so whatever the jobs use (the store) must stay open
   */
  public boolean stop() {
    boolean first;
    ReentrantReadWriteLock.WriteLock write = closeLock.writeLock();
    write.lock();
    try {
      first = !closed;
      closed = true;
    } finally {
      write.unlock();
    }
    long deadline = nanoTicker.getAsLong() + drainTimeoutNanos;
    if (first) {
      synchronized (this) {
        drainDeadlineNanos = deadline;
        stopping = true;
      }
      for (Lane lane : lanes) {
        lane.close();
      }
    }
    awaitWorkers(deadline);
    for (Lane lane : lanes) {
      for (Job job = lane.poll(); job != null; job = lane.poll()) {
        recordDropped(null, "capture stopped before the job ran");
      }
    }
    return liveWorkers() == 0;
  }

  private void awaitWorkers(long deadline) {
    Thread[] snapshot;
    synchronized (this) {
      snapshot = workers.clone();
    }
    for (Thread t : snapshot) {
      if (t == null) {
        continue;
      }
      long remaining = deadline - nanoTicker.getAsLong();
      if (remaining <= 0) {
        return;
      }
      try {
        TimeUnit.NANOSECONDS.timedJoin(t, remaining);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Worker threads still alive (inside a job after stop gave up on them, or not stopped yet). */
  public int liveWorkers() {
    int n = 0;
    synchronized (this) {
      for (Thread t : workers) {
        if (t != null && t.isAlive()) {
          n++;
        }
      }
    }
    return n;
  }

  /**
   * Jobs never attempted: lane full, enqueued after stop, past the drain deadline, swept at stop.
   */
  public long dropped() {
    return dropped.sum();
  }

  /**
   * Jobs attempted that failed, plus failures recorded by the owner with {@link #recordFailure}.
   */
  public long failures() {
    return failures.sum();
  }

  /** Counts one capture failure that happened outside a job (resolution on the caller's thread). */
  public void recordFailure() {
    failures.increment();
  }

  /**
   * Counts one dropped capture and logs it, at most once per 10 s.
   *
   * @param queue the queue whose capture was dropped, or null if unknown
   * @param reason why, for the log
   */
  public void recordDropped(String queue, String reason) {
    dropped.increment();
    if (dropLog.tryAcquire()) {
      LOG.warn(
          "Dropped a capture{} ({}); {} capture(s) dropped so far (this log is rate-limited)",
          queue == null ? "" : " for queue " + queue,
          reason,
          dropped.sum());
    }
  }

  /** Whether {@link #stop} has begun (for tests). */
  boolean isStopping() {
    return stopping;
  }

  /**
   * The lane of {@code queue}: the FNV-1a 32-bit hash of its UTF-8 bytes, unsigned, modulo {@code
   * lanes}. Allocation-free.
   */
  public static int lane(String queue, int lanes) {
    return Integer.remainderUnsigned(fnv1a32(queue), lanes);
  }

  /** FNV-1a, 32 bit, over the UTF-8 encoding of {@code s}, computed without encoding it. */
  static int fnv1a32(String s) {
    int h = FNV_OFFSET_BASIS;
    int n = s.length();
    for (int i = 0; i < n; i++) {
      int c = s.charAt(i);
      if (c < 0x80) {
        h = (h ^ c) * FNV_PRIME;
      } else if (c < 0x800) {
        h = (h ^ (0xC0 | (c >> 6))) * FNV_PRIME;
        h = (h ^ (0x80 | (c & 0x3F))) * FNV_PRIME;
      } else if (Character.isHighSurrogate((char) c)
          && i + 1 < n
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        int cp = Character.toCodePoint((char) c, s.charAt(++i));
        h = (h ^ (0xF0 | (cp >> 18))) * FNV_PRIME;
        h = (h ^ (0x80 | ((cp >> 12) & 0x3F))) * FNV_PRIME;
        h = (h ^ (0x80 | ((cp >> 6) & 0x3F))) * FNV_PRIME;
        h = (h ^ (0x80 | (cp & 0x3F))) * FNV_PRIME;
      } else if (Character.isSurrogate((char) c)) {
        // An unpaired surrogate encodes as '?' in String.getBytes(UTF_8); hash the same byte.
        h = (h ^ '?') * FNV_PRIME;
      } else {
        h = (h ^ (0xE0 | (c >> 12))) * FNV_PRIME;
        h = (h ^ (0x80 | ((c >> 6) & 0x3F))) * FNV_PRIME;
        h = (h ^ (0x80 | (c & 0x3F))) * FNV_PRIME;
      }
    }
    return h;
  }

  /** The reference FNV-1a over {@code s.getBytes(UTF_8)}; for tests. */
  static int fnv1a32Reference(String s) {
    int h = FNV_OFFSET_BASIS;
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xFF)) * FNV_PRIME;
    }
    return h;
  }

  private void work(Lane lane) {
    for (; ; ) {
      Job job;
      try {
        job = lane.take();
      } catch (InterruptedException e) {
        // Only stop() ends a worker; an interrupt from elsewhere is ignored.
        continue;
      }
      if (job == null) {
        return;
      }
      if (stopping && nanoTicker.getAsLong() - drainDeadlineNanos >= 0) {
        recordDropped(null, "capture drain timeout passed");
        continue;
      }
      try {
        job.run();
      } catch (Exception | Error e) {
        failures.increment();
        if (failureLog.tryAcquire()) {
          LOG.warn(
              "Capture append failed; {} capture failure(s) so far (this log is rate-limited)",
              failures.sum(),
              e);
        }
      }
    }
  }
}
