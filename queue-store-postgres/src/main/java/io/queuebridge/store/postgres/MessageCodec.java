package io.queuebridge.store.postgres;

import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.MessageState;
import io.queuebridge.core.message.TimestampType;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A message (everything but its offset, which is a column) as the {@code body} bytea of the {@code
 * messages} table.
 *
 * <p>Format version 1, big-endian: {@code version:u8}, id, topic, key, value, header count and per
 * header its key and value, timestamp (i64), timestamp type, createdAt, expiresAt, state, property
 * count and per property its key and value. Strings are UTF-8 with an i32 length; byte arrays an
 * i32 length, -1 for null (distinct from empty); instants a presence byte then epoch seconds (i64)
 * and nanos (i32), so they round-trip to the nanosecond; enums by name.
 *
 * <p><b>Runs</b> (schema version 5). A row of {@code messages} may hold several consecutive
 * messages ({@code run_length} of them, from offset {@code off}); its body is then a run: {@code
 * 0xF0:u8}, the message count (i32), and per message its length (i32) and its encoding as above. A
 * row of one message holds the plain encoding (every row written before version 5 is one). The
 * marker is no format version, so a body of either kind says which it is. Stateless and
 * thread-safe.
 */
final class MessageCodec {
  static final byte VERSION = 1;

  /** The first byte of a run's body. */
  static final byte RUN = (byte) 0xF0;

  private MessageCodec() {}

  static byte[] encode(Message m) {
    Out out = new Out(64 + len(m.valueUnsafe()) + len(m.keyUnsafe()));
    out.u8(VERSION);
    out.string(m.id());
    out.string(m.topic());
    out.bytes(m.keyUnsafe());
    out.bytes(m.valueUnsafe());
    out.i32(m.headers().size());
    for (Header h : m.headers()) {
      out.string(h.key());
      out.bytes(h.valueUnsafe());
    }
    out.i64(m.timestamp());
    out.string(m.timestampType().name());
    out.instant(m.createdAt());
    out.instant(m.expiresAt());
    out.string(m.state().name());
    out.i32(m.properties().size());
    for (Map.Entry<String, String> p : m.properties().entrySet()) {
      out.string(p.getKey());
      out.string(p.getValue());
    }
    return out.toArray();
  }

  /**
   * The encodings {@code bodies[from .. to - 1]} as the body of one row: a run when there are
   * several, the encoding itself when there is one.
   */
  static byte[] row(byte[][] bodies, int from, int to) {
    if (to - from == 1) {
      return bodies[from];
    }
    int size = 5;
    for (int i = from; i < to; i++) {
      size += 4 + bodies[i].length;
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.put(RUN).putInt(to - from);
    for (int i = from; i < to; i++) {
      out.putInt(bodies[i].length).put(bodies[i]);
    }
    return out.array();
  }

  /**
   * Where the {@code count} messages of a row's body lie: {@code [start0, length0, start1, ...]}.
   *
   * @throws IllegalArgumentException if the body is no run of {@code count} messages (or, for one,
   *     neither a run of one nor a plain encoding)
   */
  static int[] parts(byte[] row, int count) {
    if (count == 1 && (row.length == 0 || row[0] != RUN)) {
      return new int[] {0, row.length};
    }
    if (row.length < 5 || row[0] != RUN) {
      throw new IllegalArgumentException(
          "a row of " + count + " messages whose body is no run (first byte " + first(row) + ")");
    }
    ByteBuffer in = ByteBuffer.wrap(row);
    in.get();
    int stored = in.getInt();
    if (stored != count) {
      throw new IllegalArgumentException(
          "a run of " + stored + " messages in a row of " + count + " (run_length)");
    }
    int[] parts = new int[2 * count];
    for (int i = 0; i < count; i++) {
      if (in.remaining() < 4) {
        throw new IllegalArgumentException(
            "truncated run: " + i + " of " + count + " messages in " + row.length + " bytes");
      }
      int length = in.getInt();
      if (length < 0 || length > in.remaining()) {
        throw new IllegalArgumentException(
            "message "
                + i
                + " of the run has length "
                + length
                + " with "
                + in.remaining()
                + " bytes left");
      }
      parts[2 * i] = in.position();
      parts[2 * i + 1] = length;
      in.position(in.position() + length);
    }
    if (in.hasRemaining()) {
      throw new IllegalArgumentException(
          in.remaining() + " bytes after the " + count + " messages of the run");
    }
    return parts;
  }

  private static String first(byte[] row) {
    return row.length == 0 ? "none" : Integer.toString(row[0] & 0xFF);
  }

  /**
   * @throws IllegalArgumentException if the bytes are not a version-1 message
   */
  static Message decode(byte[] body, long offset) {
    return decode(body, 0, body.length, offset);
  }

  /**
   * The message encoded in {@code body[start .. start + length - 1]}.
   *
   * @throws IllegalArgumentException if those bytes are not a version-1 message
   */
  static Message decode(byte[] body, int start, int length, long offset) {
    ByteBuffer in = ByteBuffer.wrap(body, start, length);
    try {
      int version = in.get() & 0xFF;
      if (version != VERSION) {
        throw new IllegalArgumentException(
            "message format version "
                + version
                + " (this store reads version "
                + VERSION
                + (version > VERSION ? "; written by a newer version, upgrade to open it)" : ")"));
      }
      Message.Builder b = Message.builder().offset(offset);
      b.id(string(in));
      b.topic(string(in));
      b.key(bytes(in));
      b.value(bytes(in));
      int headers = in.getInt();
      List<Header> hs = new ArrayList<>(Math.max(0, headers));
      for (int i = 0; i < headers; i++) {
        hs.add(Header.of(string(in), bytes(in)));
      }
      b.headers(hs);
      long ts = in.getLong();
      b.timestamp(ts, TimestampType.valueOf(string(in)));
      b.createdAt(instant(in));
      b.expiresAt(instant(in));
      b.state(MessageState.valueOf(string(in)));
      int props = in.getInt();
      if (props > 0) {
        Map<String, String> ps = new LinkedHashMap<>();
        for (int i = 0; i < props; i++) {
          ps.put(MessageProperties.currentName(string(in)), string(in));
        }
        b.properties(ps);
      }
      return b.buildOwned();
    } catch (BufferUnderflowException | NegativeArraySizeException e) {
      throw new IllegalArgumentException("truncated message body (" + length + " bytes)", e);
    }
  }

  private static int len(byte[] b) {
    return b == null ? 0 : b.length;
  }

  private static String string(ByteBuffer in) {
    byte[] b = bytes(in);
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  private static byte[] bytes(ByteBuffer in) {
    int n = in.getInt();
    if (n < 0) {
      return null;
    }
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }

  private static Instant instant(ByteBuffer in) {
    if (in.get() == 0) {
      return null;
    }
    long s = in.getLong();
    return Instant.ofEpochSecond(s, in.getInt());
  }

  /** A growable big-endian buffer. */
  private static final class Out {
    private byte[] buf;
    private int n;

    Out(int capacity) {
      buf = new byte[capacity];
    }

    void ensure(int more) {
      if (n + more > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, n + more));
      }
    }

    void u8(int v) {
      ensure(1);
      buf[n++] = (byte) v;
    }

    void i32(int v) {
      ensure(4);
      buf[n++] = (byte) (v >>> 24);
      buf[n++] = (byte) (v >>> 16);
      buf[n++] = (byte) (v >>> 8);
      buf[n++] = (byte) v;
    }

    void i64(long v) {
      i32((int) (v >>> 32));
      i32((int) v);
    }

    void bytes(byte[] b) {
      if (b == null) {
        i32(-1);
        return;
      }
      i32(b.length);
      ensure(b.length);
      System.arraycopy(b, 0, buf, n, b.length);
      n += b.length;
    }

    void string(String s) {
      bytes(s == null ? null : s.getBytes(StandardCharsets.UTF_8));
    }

    void instant(Instant t) {
      if (t == null) {
        u8(0);
        return;
      }
      u8(1);
      i64(t.getEpochSecond());
      i32(t.getNano());
    }

    byte[] toArray() {
      return n == buf.length ? buf : Arrays.copyOf(buf, n);
    }
  }
}
