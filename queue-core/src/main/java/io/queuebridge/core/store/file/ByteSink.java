package io.queuebridge.core.store.file;

import java.util.Arrays;

/**
 * A growable big-endian byte buffer for encoding frames and small files. Not thread-safe.
 *
 * <p>Strings are written as an {@code int} byte length and Java's "modified UTF-8" without its 64
 * KiB limit: every {@code char} becomes 1 to 3 bytes (surrogates individually), so any {@link
 * String}, even one with an unpaired surrogate, round-trips exactly. For strings without surrogates
 * and NUL the bytes equal standard UTF-8.
 */
final class ByteSink {
  private static final int REPEATS = 16;

  private byte[] buf;
  private int pos;

  // putRepeatedString: where each of the last strings (by identity, one per slot) was written, so a
  // string written again is copied from there instead of encoded again; cleared by reset
  private final String[] repeated = new String[REPEATS];
  private final int[] repeatedAt = new int[REPEATS];

  ByteSink(int capacity) {
    buf = new byte[Math.max(16, capacity)];
  }

  /**
   * A sink writing over {@code reuse} from its start (its old bytes are overwritten or ignored).
   */
  ByteSink(byte[] reuse) {
    buf = reuse;
  }

  int position() {
    return pos;
  }

  /** The backing array; valid up to {@link #position()}. */
  byte[] array() {
    return buf;
  }

  byte[] toByteArray() {
    return Arrays.copyOf(buf, pos);
  }

  void reset() {
    pos = 0;
    Arrays.fill(repeated, null);
  }

  private void ensure(int n) {
    int need = pos + n;
    if (need < 0) {
      throw new IllegalArgumentException("encoded data exceeds 2 GiB");
    }
    if (need > buf.length) {
      long next = Math.max((long) buf.length * 2, need);
      buf = Arrays.copyOf(buf, (int) Math.min(next, Integer.MAX_VALUE - 16));
      if (buf.length < need) {
        throw new IllegalArgumentException("encoded data exceeds 2 GiB");
      }
    }
  }

  ByteSink skip(int n) {
    ensure(n);
    pos += n;
    return this;
  }

  ByteSink putByte(int v) {
    ensure(1);
    buf[pos++] = (byte) v;
    return this;
  }

  ByteSink putShort(int v) {
    ensure(2);
    buf[pos++] = (byte) (v >>> 8);
    buf[pos++] = (byte) v;
    return this;
  }

  ByteSink putInt(int v) {
    ensure(4);
    putIntAt(pos, v);
    pos += 4;
    return this;
  }

  ByteSink putLong(long v) {
    ensure(8);
    putLongAt(pos, v);
    pos += 8;
    return this;
  }

  void putIntAt(int at, int v) {
    buf[at] = (byte) (v >>> 24);
    buf[at + 1] = (byte) (v >>> 16);
    buf[at + 2] = (byte) (v >>> 8);
    buf[at + 3] = (byte) v;
  }

  void putLongAt(int at, long v) {
    putIntAt(at, (int) (v >>> 32));
    putIntAt(at + 4, (int) v);
  }

  ByteSink putBytes(byte[] b, int off, int len) {
    ensure(len);
    System.arraycopy(b, off, buf, pos, len);
    pos += len;
    return this;
  }

  /** An {@code int} length (-1 for null) and the bytes. */
  ByteSink putNullableBytes(byte[] b) {
    if (b == null) {
      return putInt(-1);
    }
    putInt(b.length);
    return putBytes(b, 0, b.length);
  }

  /** A non-null string: {@code int} byte length and modified UTF-8. */
  ByteSink putString(String s) {
    int n = s.length();
    ensure(4 + n);
    int lenAt = pos;
    pos += 4;
    int i = 0;
    // ASCII fast path
    for (; i < n; i++) {
      char c = s.charAt(i);
      if (c == 0 || c >= 0x80) {
        break;
      }
      buf[pos++] = (byte) c;
    }
    for (; i < n; i++) {
      char c = s.charAt(i);
      if (c != 0 && c < 0x80) {
        ensure(1);
        buf[pos++] = (byte) c;
      } else if (c < 0x800) {
        ensure(2);
        buf[pos++] = (byte) (0xC0 | (c >> 6));
        buf[pos++] = (byte) (0x80 | (c & 0x3F));
      } else {
        ensure(3);
        buf[pos++] = (byte) (0xE0 | (c >> 12));
        buf[pos++] = (byte) (0x80 | ((c >> 6) & 0x3F));
        buf[pos++] = (byte) (0x80 | (c & 0x3F));
      }
    }
    putIntAt(lenAt, pos - lenAt - 4);
    return this;
  }

  /**
   * {@link #putString} for a string likely to be written again into this buffer (a property key, a
   * topic): the same {@code String} instance written again is copied from where it was written
   * last, length prefix included. Same bytes as {@link #putString}.
   */
  ByteSink putRepeatedString(String s) {
    int slot = System.identityHashCode(s) & (REPEATS - 1);
    if (repeated[slot] == s) {
      int at = repeatedAt[slot];
      int n = 4 + ByteSource.getIntAt(buf, at);
      ensure(n);
      System.arraycopy(buf, at, buf, pos, n);
      pos += n;
      return this;
    }
    int at = pos;
    putString(s);
    repeated[slot] = s;
    repeatedAt[slot] = at;
    return this;
  }

  /** A string that may be null: a presence byte, then {@link #putString}. */
  ByteSink putNullableString(String s) {
    if (s == null) {
      return putByte(0);
    }
    putByte(1);
    return putString(s);
  }
}
