package io.queuebridge.core.store.file;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Reads a file region through a chunk buffer, so that walking many small frames costs a few large
 * reads instead of two small ones per frame. Not thread-safe; one per scan.
 */
final class ChunkReader {
  /** A positional byte source (a channel, a cached read handle). */
  interface Input {
    int read(ByteBuffer dst, long position) throws IOException;
  }

  private final Input in;
  private final long limit;
  private byte[] buf;
  private long bufStart;
  private int bufLen;

  /**
   * @param limit bytes of the file that may be read (its size, or a segment's valid size)
   * @param chunk preferred read size
   */
  ChunkReader(Input in, long limit, int chunk) {
    this.in = in;
    this.limit = limit;
    this.buf = new byte[chunk];
  }

  long limit() {
    return limit;
  }

  byte[] buffer() {
    return buf;
  }

  /**
   * Makes {@code [position, position+n)} available in {@link #buffer()} and returns its index
   * there, or -1 if that range ends beyond the limit or the file is shorter than expected.
   */
  int fill(long position, int n) throws IOException {
    if (n < 0 || position < 0 || position + n > limit) {
      return -1;
    }
    if (position >= bufStart && position + n <= bufStart + bufLen) {
      return (int) (position - bufStart);
    }
    if (n > buf.length) {
      buf = new byte[n];
    }
    int want = (int) Math.min(buf.length, limit - position);
    ByteBuffer dst = ByteBuffer.wrap(buf, 0, want);
    long p = position;
    while (dst.hasRemaining()) {
      int r = in.read(dst, p);
      if (r < 0) {
        break;
      }
      p += r;
    }
    bufStart = position;
    bufLen = dst.position();
    return bufLen >= n ? 0 : -1;
  }
}
