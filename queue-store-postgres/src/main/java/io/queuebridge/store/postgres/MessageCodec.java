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
 * and nanos (i32), so they round-trip to the nanosecond; enums by name. Stateless and thread-safe.
 */
final class MessageCodec {
  static final byte VERSION = 1;

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
   * @throws IllegalArgumentException if the bytes are not a version-1 message
   */
  static Message decode(byte[] body, long offset) {
    ByteBuffer in = ByteBuffer.wrap(body);
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
      throw new IllegalArgumentException("truncated message body (" + body.length + " bytes)", e);
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
