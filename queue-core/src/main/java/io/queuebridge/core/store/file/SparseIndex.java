package io.queuebridge.core.store.file;

import java.util.Arrays;

/**
 * A sparse, append-only index of {@code (key, value)} pairs with non-decreasing keys: the offset
 * index maps a batch's base offset to its byte position in the segment; the time index maps the
 * segment's running maximum record time to the base offset of the batch where it was reached.
 *
 * <p><b>Concurrency.</b> One writer (the segment's appender, under the queue's append lock), any
 * number of readers without locks: the writer fills slots beyond the published size and then
 * publishes a new immutable {@link View}; readers take one view and see a consistent prefix.
 *
 * <p><b>File format</b> ({@code .idx} / {@code .tix}): a {@link Blobs} envelope (magic {@code QBIX}
 * / {@code QBTX}, version 1) whose payload is {@code long baseOffset, int count, count x (long key,
 * long value)}. Index files are hints: they are verified when used and rebuilt from the segment
 * when missing or damaged (an index is never trusted over the segment), so they are written without
 * a durability barrier of their own, at roll and at close.
 */
final class SparseIndex {
  /** An immutable snapshot. */
  static final class View {
    final long[] keys;
    final long[] values;
    final int size;

    View(long[] keys, long[] values, int size) {
      this.keys = keys;
      this.values = values;
      this.size = size;
    }

    /** Index of the last entry with key <= {@code key}, or -1. */
    int floor(long key) {
      int lo = 0;
      int hi = size - 1;
      int found = -1;
      while (lo <= hi) {
        int mid = (lo + hi) >>> 1;
        if (keys[mid] <= key) {
          found = mid;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      return found;
    }

    /** Index of the first entry with key >= {@code key}, or {@code size}. */
    int ceiling(long key) {
      int lo = 0;
      int hi = size;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (keys[mid] < key) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }

    long lastKey() {
      return keys[size - 1];
    }

    long lastValue() {
      return values[size - 1];
    }
  }

  private static final View EMPTY = new View(new long[0], new long[0], 0);

  private volatile View view;
  private long[] keys;
  private long[] values;

  SparseIndex() {
    this.view = EMPTY;
    this.keys = new long[16];
    this.values = new long[16];
  }

  private SparseIndex(long[] keys, long[] values, int size) {
    this.keys = keys;
    this.values = values;
    this.view = new View(keys, values, size);
  }

  View view() {
    return view;
  }

  int size() {
    return view.size;
  }

  /** Appends an entry; single writer only. */
  void add(long key, long value) {
    View v = view;
    int n = v.size;
    if (n == keys.length) {
      keys = Arrays.copyOf(keys, n * 2);
      values = Arrays.copyOf(values, n * 2);
    }
    keys[n] = key;
    values[n] = value;
    view = new View(keys, values, n + 1);
  }

  /** Drops every entry (used when a recovery cut invalidates them). */
  void clear() {
    keys = new long[16];
    values = new long[16];
    view = EMPTY;
  }

  /** The whole file content, envelope included. */
  byte[] toFile(int magic, long baseOffset) {
    View v = view;
    ByteSink s = new ByteSink(12 + v.size * 16);
    s.putLong(baseOffset).putInt(v.size);
    for (int i = 0; i < v.size; i++) {
      s.putLong(v.keys[i]).putLong(v.values[i]);
    }
    return Blobs.wrap(magic, s.array(), s.position());
  }

  /**
   * Parses a payload written by {@link #toFile}; checks the base offset, the count and that keys
   * never decrease ({@code strict}: strictly increase) and values lie in {@code [minValue, ∞)}.
   *
   * @throws FormatException if anything is off
   */
  static SparseIndex parse(byte[] payload, long baseOffset, boolean strict, long minValue) {
    ByteSource src = new ByteSource(payload, 0, payload.length);
    long base = src.getLong();
    if (base != baseOffset) {
      throw new FormatException("index is for base offset " + base + ", not " + baseOffset, 0);
    }
    int n = src.getInt();
    if (n < 0 || (long) n * 16 != src.remaining()) {
      throw new FormatException(
          "index declares " + n + " entries but holds " + src.remaining() + " bytes", 8);
    }
    long[] k = new long[Math.max(16, n)];
    long[] v = new long[Math.max(16, n)];
    for (int i = 0; i < n; i++) {
      k[i] = src.getLong();
      v[i] = src.getLong();
      if (v[i] < minValue || (i > 0 && (strict ? k[i] <= k[i - 1] : k[i] < k[i - 1]))) {
        throw new FormatException("index entry " + i + " out of order", 12 + i * 16L);
      }
    }
    return new SparseIndex(k, v, n);
  }
}
