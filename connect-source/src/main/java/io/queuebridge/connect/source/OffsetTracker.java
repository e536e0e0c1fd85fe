package io.queuebridge.connect.source;

/**
 * The contiguous prefix of a stream that Kafka has accepted. The poll thread registers every offset
 * it hands over, in increasing order ({@link #emitted}); {@code commitRecord} marks offsets done in
 * any order ({@link #done}); {@link #committedNext()} is one past the last offset of the longest
 * done prefix, i.e. where a restart could resume without losing anything.
 *
 * <p>Offsets between registered ones (truncated, in a recovery gap) are covered by the next
 * registered offset. A ring of outstanding offsets, searched by binary search: {@code O(log n)} per
 * call, no boxing.
 *
 * <p>Thread-safe: every method is synchronized (the poll thread and the producer's callback thread
 * call it concurrently).
 */
final class OffsetTracker {
  private long[] offsets = new long[256];
  private boolean[] done = new boolean[256];
  private int head; // index of the oldest outstanding entry
  private int size;
  private long committedNext;
  private long lastEmitted = -1;

  /** A tracker whose prefix starts at {@code start} (nothing outstanding). */
  OffsetTracker(long start) {
    this.committedNext = start;
  }

  /**
   * Registers an offset handed over.
   *
   * @throws IllegalArgumentException if it is not above every offset registered before
   */
  synchronized void emitted(long offset) {
    add(offset);
  }

  /**
   * Registers {@code count} offsets handed over, in increasing order, under one lock.
   *
   * @throws IllegalArgumentException if they are not above every offset registered before
   */
  synchronized void emitted(long[] batch, int count) {
    for (int i = 0; i < count; i++) {
      add(batch[i]);
    }
  }

  private void add(long offset) {
    if (offset <= lastEmitted || offset < committedNext) {
      throw new IllegalArgumentException(
          "offset " + offset + " registered out of order (last " + lastEmitted + ")");
    }
    if (size == offsets.length) {
      grow();
    }
    int i = (head + size) % offsets.length;
    offsets[i] = offset;
    done[i] = false;
    size++;
    lastEmitted = offset;
  }

  /**
   * Marks {@code offset} done. Unknown offsets (already done, never registered) are ignored.
   *
   * @return whether {@link #committedNext()} moved
   */
  synchronized boolean done(long offset) {
    // Kafka usually accepts in order: the oldest outstanding offset needs no search
    int k = size > 0 && offsets[head] == offset ? 0 : find(offset);
    if (k < 0) {
      return false;
    }
    done[(head + k) % offsets.length] = true;
    boolean moved = false;
    while (size > 0 && done[head]) {
      committedNext = offsets[head] + 1;
      head = (head + 1) % offsets.length;
      size--;
      moved = true;
    }
    return moved;
  }

  /** One past the last offset of the done prefix: where a restart resumes without loss. */
  synchronized long committedNext() {
    return committedNext;
  }

  /** Offsets handed over and not yet done. */
  synchronized int outstanding() {
    return size;
  }

  /** Position {@code k} (0 = oldest) of {@code offset} among the outstanding entries, or -1. */
  private int find(long offset) {
    int lo = 0;
    int hi = size - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      long v = offsets[(head + mid) % offsets.length];
      if (v < offset) {
        lo = mid + 1;
      } else if (v > offset) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -1;
  }

  private void grow() {
    int n = offsets.length;
    long[] o = new long[n * 2];
    boolean[] d = new boolean[n * 2];
    for (int k = 0; k < size; k++) {
      o[k] = offsets[(head + k) % n];
      d[k] = done[(head + k) % n];
    }
    offsets = o;
    done = d;
    head = 0;
  }

  @Override
  public synchronized String toString() {
    return "OffsetTracker{committedNext="
        + committedNext
        + ", outstanding="
        + size
        + ", head="
        + (size == 0 ? "-" : Long.toString(offsets[head]))
        + "}";
  }
}
