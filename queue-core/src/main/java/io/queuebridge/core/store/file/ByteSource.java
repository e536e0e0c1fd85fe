package io.queuebridge.core.store.file;

/**
 * Reads what {@link ByteSink} wrote, checking every length against the bounds; a violation is a
 * {@link FormatException} naming the position. Not thread-safe.
 */
final class ByteSource {
  private final byte[] buf;
  private int pos;
  private final int limit;

  ByteSource(byte[] buf, int off, int limit) {
    this.buf = buf;
    this.pos = off;
    this.limit = limit;
  }

  int position() {
    return pos;
  }

  int remaining() {
    return limit - pos;
  }

  void position(int p) {
    if (p < 0 || p > limit) {
      throw new FormatException("position " + p + " outside the data (limit " + limit + ")", pos);
    }
    pos = p;
  }

  private void need(int n) {
    if (n < 0 || limit - pos < n) {
      throw new FormatException("needs " + n + " bytes but only " + (limit - pos) + " remain", pos);
    }
  }

  int getByte() {
    need(1);
    return buf[pos++];
  }

  int getShort() {
    need(2);
    int v = (buf[pos] & 0xFF) << 8 | (buf[pos + 1] & 0xFF);
    pos += 2;
    return v;
  }

  int getInt() {
    need(4);
    int v = getIntAt(buf, pos);
    pos += 4;
    return v;
  }

  long getLong() {
    need(8);
    long v = getLongAt(buf, pos);
    pos += 8;
    return v;
  }

  byte[] getBytes(int len) {
    need(len);
    byte[] out = new byte[len];
    System.arraycopy(buf, pos, out, 0, len);
    pos += len;
    return out;
  }

  byte[] getNullableBytes() {
    int len = getInt();
    if (len == -1) {
      return null;
    }
    if (len < 0) {
      throw new FormatException("negative length " + len, pos - 4);
    }
    return getBytes(len);
  }

  String getString() {
    int len = getInt();
    if (len < 0) {
      throw new FormatException("negative string length " + len, pos - 4);
    }
    need(len);
    int end = pos + len;
    int i = pos;
    while (i < end && buf[i] > 0) {
      i++;
    }
    if (i == end) { // pure ASCII without NUL
      String s = new String(buf, pos, len, java.nio.charset.StandardCharsets.ISO_8859_1);
      pos = end;
      return s;
    }
    char[] chars = new char[len];
    int n = 0;
    int p = pos;
    while (p < end) {
      int b = buf[p] & 0xFF;
      if (b < 0x80) {
        chars[n++] = (char) b;
        p++;
      } else if ((b & 0xE0) == 0xC0) {
        if (p + 1 >= end) {
          throw new FormatException("truncated 2-byte character", p);
        }
        chars[n++] = (char) (((b & 0x1F) << 6) | (buf[p + 1] & 0x3F));
        p += 2;
      } else if ((b & 0xF0) == 0xE0) {
        if (p + 2 >= end) {
          throw new FormatException("truncated 3-byte character", p);
        }
        chars[n++] = (char) (((b & 0x0F) << 12) | ((buf[p + 1] & 0x3F) << 6) | (buf[p + 2] & 0x3F));
        p += 3;
      } else {
        throw new FormatException("bad character byte " + b, p);
      }
    }
    pos = end;
    return new String(chars, 0, n);
  }

  String getNullableString() {
    int present = getByte();
    if (present == 0) {
      return null;
    }
    if (present != 1) {
      throw new FormatException("bad presence byte " + present, pos - 1);
    }
    return getString();
  }

  static int getIntAt(byte[] b, int at) {
    return (b[at] & 0xFF) << 24
        | (b[at + 1] & 0xFF) << 16
        | (b[at + 2] & 0xFF) << 8
        | (b[at + 3] & 0xFF);
  }

  static long getLongAt(byte[] b, int at) {
    return (long) getIntAt(b, at) << 32 | (getIntAt(b, at + 4) & 0xFFFFFFFFL);
  }
}
