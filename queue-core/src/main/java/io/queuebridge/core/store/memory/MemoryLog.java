package io.queuebridge.core.store.memory;

import io.queuebridge.core.errors.OffsetOutOfRangeException;
import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.support.QueueLog;
import io.queuebridge.core.store.support.StoreChecks;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * One queue's log in the memory store (its {@link QueueLog}): its messages, head and tail, and its
 * checkpoint map.
 *
 * <p><b>Layout.</b> Messages live in a ring buffer whose capacity is a power of two; the head
 * message sits at {@code first}, the others follow it (wrapping). Removing messages from the front
 * (truncation) moves {@code first} and clears the slots, so it costs only the removed messages and
 * releases their payloads at once. A truncation shrinks the ring when the largest backlog since the
 * previous truncation would fill less than a quarter of it, so a queue that regularly fills and
 * drains keeps its ring instead of regrowing it after every truncation, and one that shrank for
 * good gives the memory back at its second truncation. A parallel ring holds, per message, the
 * running total of estimated sizes since the queue was created, so {@link #sizeOffset} is a binary
 * search.
 *
 * <p><b>Concurrency.</b> One {@link ReentrantReadWriteLock} guards everything: reads share the read
 * lock (except {@link #head()} and {@link #tail()}, which read copies published by the write
 * sections), appends and truncations take the write lock, so appends are serialised and get
 * contiguous offsets in lock order. Waiters of {@link #awaitAppend} sleep on a condition of the
 * write lock and every append signals them (only when there are any). Once {@link #kill} ran (queue
 * deleted or store closed) every operation throws the exception the killer supplied, waiters
 * included.
 *
 * <p>Thread-safe.
 */
final class MemoryLog implements QueueLog {
  /** Estimated per-message overhead of a message in the memory store, for {@link #sizeOffset}. */
  static final long MESSAGE_OVERHEAD_BYTES = 200;

  private static final int MIN_CAPACITY = 16;

  private final String queue;
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final Condition appended = lock.writeLock().newCondition();

  // All fields below are guarded by lock.
  private Message[] ring = new Message[MIN_CAPACITY];
  private long[] runningBytes = new long[MIN_CAPACITY];
  private int first;
  private int size;
  private int peak; // the largest size since the previous truncation (or the size it left)
  private long head;
  private long bytesBeforeHead;
  private long retainedBytes; // sum of Message.size() over the retained messages
  private final Map<String, String> checkpoints = new HashMap<>();
  private final io.queuebridge.core.store.support.DedupIndex dedup =
      new io.queuebridge.core.store.support.DedupIndex(this);
  private int waiters;
  private volatile Supplier<? extends QueueException> death;

  // Copies of head and head + size, written at the end of every write section, so head() and
  // tail() answer without the lock (the claim path asks for both on every claim). Written with a
  // release store: the lock's release follows at once, so a full fence per append (a volatile
  // store) would buy nothing; read as volatile.
  private volatile long publishedHead;
  private volatile long publishedTail;
  private static final VarHandle PUBLISHED_HEAD;
  private static final VarHandle PUBLISHED_TAIL;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      PUBLISHED_HEAD = lookup.findVarHandle(MemoryLog.class, "publishedHead", long.class);
      PUBLISHED_TAIL = lookup.findVarHandle(MemoryLog.class, "publishedTail", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  MemoryLog(String queue) {
    this.queue = queue;
  }

  /**
   * Appends {@code messages} at contiguous offsets, stamping each with its offset, and merges
   * {@code checkpoints} in the same critical section. Returns the first offset.
   */
  long append(List<Message> messages, Map<String, String> newCheckpoints) {
    lock.writeLock().lock();
    try {
      checkAlive();
      ensureCapacity(size + messages.size());
      long firstOffset = head + size;
      long running = runningTotal();
      int mask = ring.length - 1;
      for (Message m : messages) {
        int slot = (first + size) & mask;
        running += estimate(m);
        retainedBytes += m.size();
        ring[slot] = m.withOffset(head + size);
        runningBytes[slot] = running;
        size++;
      }
      peak = Math.max(peak, size);
      checkpoints.putAll(newCheckpoints);
      PUBLISHED_TAIL.setRelease(this, head + size);
      if (waiters > 0) {
        appended.signalAll();
      }
      return firstOffset;
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  public long appendBatch(List<Message> batch) {
    return append(batch, Map.of());
  }

  /** A plain append: nothing in memory survives the process. */
  @Override
  public long appendAndSync(Message message) {
    return append(message);
  }

  /** A plain append; the checkpoints are merged in the same critical section as the batch. */
  @Override
  public long appendBatchAndSync(List<Message> batch, Map<String, String> checkpoints) {
    return append(batch, checkpoints);
  }

  /** Appends a single message; returns its offset. */
  @Override
  public long append(Message message) {
    lock.writeLock().lock();
    try {
      checkAlive();
      ensureCapacity(size + 1);
      long offset = head + size;
      int slot = (first + size) & (ring.length - 1);
      runningBytes[slot] = runningTotal() + estimate(message);
      retainedBytes += message.size();
      ring[slot] = message.withOffset(offset);
      size++;
      peak = Math.max(peak, size);
      PUBLISHED_TAIL.setRelease(this, offset + 1);
      if (waiters > 0) {
        appended.signalAll();
      }
      return offset;
    } finally {
      lock.writeLock().unlock();
    }
  }

  @Override
  public Message read(long offset) {
    lock.readLock().lock();
    try {
      checkAlive();
      if (offset < head || offset >= head + size) {
        throw new OffsetOutOfRangeException(queue, offset, head, head + size);
      }
      return ring[slotOf(offset)];
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  public List<Message> readBatch(long start, int limit) {
    lock.readLock().lock();
    try {
      checkAlive();
      long tail = head + size;
      long from = Math.max(start, head);
      if (from >= tail) {
        return List.of();
      }
      int n = (int) Math.min(limit, tail - from);
      Message[] out = new Message[n];
      int slot = slotOf(from);
      int mask = ring.length - 1;
      for (int i = 0; i < n; i++) {
        out[i] = ring[(slot + i) & mask];
      }
      return Collections.unmodifiableList(Arrays.asList(out));
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The head; lock-free (a value published by the last write section). */
  @Override
  public long head() {
    checkAlive();
    return publishedHead;
  }

  /** The tail; lock-free (a value published by the last write section). */
  @Override
  public long tail() {
    checkAlive();
    return publishedTail;
  }

  /** {@code tail - head}, the two read together. */
  @Override
  public long count() {
    lock.readLock().lock();
    try {
      checkAlive();
      return size;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Removes messages below {@code minOffset} exactly (clamped to the tail). */
  @Override
  public void truncate(long minOffset) {
    lock.writeLock().lock();
    try {
      checkAlive();
      if (minOffset <= head) {
        return;
      }
      long to = Math.min(minOffset, head + size);
      int removed = (int) (to - head);
      if (removed == 0) {
        return;
      }
      int mask = ring.length - 1;
      bytesBeforeHead = runningBytes[(first + removed - 1) & mask];
      for (int i = 0; i < removed; i++) {
        int slot = (first + i) & mask;
        retainedBytes -= ring[slot].size();
        ring[slot] = null;
      }
      first = (first + removed) & mask;
      size -= removed;
      head = to;
      PUBLISHED_HEAD.setRelease(this, to);
      maybeShrink();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /**
   * The first offset whose {@code createdAt} is at or after {@code time} (messages without one are
   * skipped); the tail if none, the head if the log is empty. Exact; scans from the head.
   */
  @Override
  public long timeOffset(Instant time) {
    lock.readLock().lock();
    try {
      checkAlive();
      int mask = ring.length - 1;
      for (int i = 0; i < size; i++) {
        Instant created = ring[(first + i) & mask].createdAt();
        if (created != null && !created.isBefore(time)) {
          return head + i;
        }
      }
      return head + size;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * The lowest offset from which the newest messages' estimated sizes sum to at most {@code
   * budget}: the longest run of newest messages that fits. The tail when not even the newest
   * message fits; the head when the log is empty.
   */
  @Override
  public long sizeOffset(long budget) {
    lock.readLock().lock();
    try {
      checkAlive();
      long total = runningTotal();
      // Find the smallest i in [0, size] with total - bytesBefore(head + i) <= budget. The
      // predicate is monotone (false...true) because running totals only grow; i = size holds.
      int lo = 0;
      int hi = size;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        long before =
            mid == 0 ? bytesBeforeHead : runningBytes[(first + mid - 1) & (ring.length - 1)];
        if (total - before <= budget) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      return head + lo;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Waits, without polling, until the tail is beyond {@code offset} or the timeout passes.
   *
   * @throws InterruptedException if interrupted while waiting (or on entry)
   */
  @Override
  public boolean awaitAppend(long offset, Duration timeout) throws InterruptedException {
    long nanos = StoreChecks.awaitNanos(timeout);
    lock.writeLock().lockInterruptibly();
    try {
      waiters++;
      try {
        while (true) {
          checkAlive();
          if (head + size > offset) {
            return true;
          }
          if (nanos <= 0) {
            return false;
          }
          nanos = appended.awaitNanos(nanos);
        }
      } finally {
        waiters--;
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  /**
   * Key + value + header bytes of the retained messages ({@link Message#size()}), kept up to date
   * by every append and truncation, so asking costs nothing.
   */
  @Override
  public OptionalLong bytes() {
    lock.readLock().lock();
    try {
      checkAlive();
      return OptionalLong.of(retainedBytes);
    } finally {
      lock.readLock().unlock();
    }
  }

  @Override
  public io.queuebridge.core.store.support.DedupIndex dedupIndex() {
    return dedup;
  }

  @Override
  public Map<String, String> checkpoints() {
    lock.readLock().lock();
    try {
      checkAlive();
      return Map.copyOf(checkpoints);
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Makes every later (and every waiting) operation throw what {@code cause} supplies, and releases
   * the messages. Idempotent: the first cause wins.
   */
  void kill(Supplier<? extends QueueException> cause) {
    lock.writeLock().lock();
    try {
      if (death != null) {
        return;
      }
      death = cause;
      ring = new Message[0];
      runningBytes = new long[0];
      first = 0;
      size = 0;
      retainedBytes = 0;
      checkpoints.clear();
      appended.signalAll();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Threads waiting in {@link #awaitAppend}; for tests. */
  int waiters() {
    lock.readLock().lock();
    try {
      return waiters;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The ring's capacity; for tests. */
  int capacity() {
    lock.readLock().lock();
    try {
      return ring.length;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * The estimated in-memory size of a message, in bytes, used only by {@link #sizeOffset}: value +
   * key + topic + id + every header key and value + every property key and value + {@value
   * #MESSAGE_OVERHEAD_BYTES}. Strings count one byte per UTF-16 unit (exact for ASCII).
   */
  static long estimate(Message m) {
    byte[] value = m.valueUnsafe();
    byte[] key = m.keyUnsafe();
    long n = MESSAGE_OVERHEAD_BYTES + m.topic().length() + m.id().length();
    n += value == null ? 0 : value.length;
    n += key == null ? 0 : key.length;
    for (Header h : m.headers()) {
      n += h.key().length() + Math.max(0, h.valueLength());
    }
    for (Map.Entry<String, String> p : m.properties().entrySet()) {
      n += p.getKey().length() + (p.getValue() == null ? 0 : p.getValue().length());
    }
    return n;
  }

  private void checkAlive() {
    if (death != null) {
      throw death.get();
    }
  }

  private long runningTotal() {
    return size == 0 ? bytesBeforeHead : runningBytes[(first + size - 1) & (ring.length - 1)];
  }

  private int slotOf(long offset) {
    return (int) ((first + (offset - head)) & (ring.length - 1));
  }

  private void ensureCapacity(int needed) {
    if (needed < 0) {
      throw new IllegalStateException("queue " + queue + " holds too many messages in memory");
    }
    if (needed <= ring.length) {
      return;
    }
    int capacity = Integer.highestOneBit(needed - 1) << 1;
    if (capacity <= 0) {
      throw new IllegalStateException("queue " + queue + " holds too many messages in memory");
    }
    resize(capacity);
  }

  private void maybeShrink() {
    int keep = Math.max(size, peak);
    peak = size;
    if (ring.length > MIN_CAPACITY && keep < ring.length / 4) {
      resize(Math.max(MIN_CAPACITY, Integer.highestOneBit(Math.max(1, keep)) << 1));
    }
  }

  private void resize(int capacity) {
    Message[] nextRing = new Message[capacity];
    long[] nextBytes = new long[capacity];
    int mask = ring.length - 1;
    for (int i = 0; i < size; i++) {
      nextRing[i] = ring[(first + i) & mask];
      nextBytes[i] = runningBytes[(first + i) & mask];
    }
    ring = nextRing;
    runningBytes = nextBytes;
    first = 0;
  }
}
