package io.queuebridge.core.store.file;

import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.MessageState;
import io.queuebridge.core.message.TimestampType;
import java.lang.ref.SoftReference;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * The batch frame: the unit of a segment file (format version 1). Stateless and thread-safe.
 *
 * <p><b>Segment file.</b> A segment file ({@code <20-digit base offset>.log}) is nothing but frames
 * back to back, the first at byte 0 with base offset = the file's base offset, each next one
 * starting where the previous ends with base offset = previous base + previous count. No file
 * header: every frame carries the magic and format version itself, so any damage is a damaged frame
 * and "the valid prefix" is always well defined.
 *
 * <p><b>Frame</b> (big-endian; {@value #HEADER} byte header):
 *
 * <pre>
 *  off len field
 *   0   4  magic       0x51424C47 ("QBLG")
 *   4   4  crc         CRC-32C (Castagnoli) of bytes [8, length): everything after this field.
 *                      Invariant kept by every future version, so a reader can tell damage
 *                      (CRC mismatch) from a frame of a newer version (CRC ok, version unknown).
 *   8   4  length      total frame length in bytes, header included (>= 44)
 *  12   1  version     1
 *  13   1  flags       bit 0: a checkpoint section follows the records; other bits 0
 *  14   2  reserved    0
 *  16   8  baseOffset  offset of the first record
 *  24   4  count       number of records, >= 1; record i has offset baseOffset + i
 *  28   8  appendTime  store clock at append, epoch ms (segment age, time index)
 *  36   8  maxTime     largest record time in the batch, epoch ms: a record's time is its
 *                      createdAt when it has one, else appendTime (time index)
 *  44      records     count records, back to back
 *   ...    checkpoints if flag bit 0: int n, then n x (string key, string value): the entries
 *                      this batch merged into the queue's checkpoint map
 * </pre>
 *
 * <p><b>Record</b>:
 *
 * <pre>
 *   int    length of the rest of the record
 *   byte   presence: bit0 key, bit1 value, bit2 createdAt, bit3 expiresAt
 *   byte   timestamp type: 0 NO_TIMESTAMP, 1 CREATE_TIME, 2 LOG_APPEND_TIME
 *   byte   state: 0 QUEUED, 1 DELIVERED, 2 ACKED, 3 RETRY, 4 DLQ
 *   long   timestamp (epoch ms, -1 = none)
 *   [long seconds, int nanos]   createdAt, if present
 *   [long seconds, int nanos]   expiresAt, if present
 *   string id, string topic
 *   [int n, n bytes]            key, if present (an empty key is present with n = 0)
 *   [int n, n bytes]            value, if present (absent = null = tombstone)
 *   int    header count, then per header: string key, int n (-1 = null value), n bytes
 *   int    property count, then per property: string key, nullable string value
 * </pre>
 *
 * Strings are {@code int} byte length + modified UTF-8 ({@link ByteSink#putString}); nullable
 * strings have a presence byte first. Codes for enums are fixed here, not Java ordinals.
 */
final class Frames {
  static final int MAGIC = 0x51424C47;
  static final int VERSION = 1;
  static final int HEADER = 44;

  static final int OFF_CRC = 4;
  static final int OFF_LENGTH = 8;
  static final int OFF_VERSION = 12;
  static final int OFF_FLAGS = 13;
  static final int OFF_BASE = 16;
  static final int OFF_COUNT = 24;
  static final int OFF_APPEND_TIME = 28;
  static final int OFF_MAX_TIME = 36;

  static final int FLAG_CHECKPOINTS = 1;

  private static final TimestampType[] TS_TYPES = {
    TimestampType.NO_TIMESTAMP, TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME
  };
  private static final MessageState[] STATES = {
    MessageState.QUEUED,
    MessageState.DELIVERED,
    MessageState.ACKED,
    MessageState.RETRY,
    MessageState.DLQ
  };

  private Frames() {}

  /** A frame encoded without its position-dependent fields; see {@link #seal}. */
  static final class Encoded {
    final ByteSink sink;
    final int count;

    /** Largest createdAt in ms among records that have one; Long.MIN_VALUE if none. */
    final long maxCreated;

    /** Whether some record has no createdAt (its time is the append time). */
    final boolean anyWithoutCreated;

    Encoded(ByteSink sink, int count, long maxCreated, boolean anyWithoutCreated) {
      this.sink = sink;
      this.count = count;
      this.maxCreated = maxCreated;
      this.anyWithoutCreated = anyWithoutCreated;
    }

    int length() {
      return sink.position();
    }

    byte[] bytes() {
      return sink.array();
    }

    /** maxTime of the frame if appended at {@code appendTime}. */
    long maxTime(long appendTime) {
      return anyWithoutCreated ? Math.max(maxCreated, appendTime) : maxCreated;
    }
  }

  /** Encodes records and checkpoints; header fields that depend on the log are left for seal. */
  static Encoded encode(List<Message> messages, Map<String, String> checkpoints) {
    return encode(messages, checkpoints, new ByteSink(estimate(messages, checkpoints)));
  }

  /**
   * The encoded size of a frame, about: sized so that a batch of 1 KiB records (hundreds of KiB) is
   * not grown and copied, and cheap to compute (no string is looked at; a property is counted at 48
   * bytes, longer ones make the buffer grow once).
   */
  static int estimate(List<Message> messages, Map<String, String> checkpoints) {
    long estimate = HEADER;
    for (Message m : messages) {
      estimate +=
          96L
              + m.size()
              + 8L * m.headers().size()
              + m.id().length()
              + m.topic().length()
              + 48L * m.properties().size();
    }
    estimate += 48L * checkpoints.size();
    return (int) Math.min(estimate, 64L << 20);
  }

  /**
   * Encodes into {@code s} (empty; see {@link #borrowSink}); header fields that depend on the log
   * are left for seal.
   */
  static Encoded encode(List<Message> messages, Map<String, String> checkpoints, ByteSink s) {
    s.skip(HEADER);
    long maxCreated = Long.MIN_VALUE;
    boolean anyWithout = false;
    for (Message m : messages) {
      if (m.createdAt() == null) {
        anyWithout = true;
      } else {
        maxCreated = Math.max(maxCreated, millis(m.createdAt()));
      }
      encodeRecord(s, m);
    }
    int flags = 0;
    if (!checkpoints.isEmpty()) {
      flags |= FLAG_CHECKPOINTS;
      s.putInt(checkpoints.size());
      for (Map.Entry<String, String> e : checkpoints.entrySet()) {
        s.putString(e.getKey()).putString(e.getValue());
      }
    }
    byte[] b = s.array();
    s.putIntAt(0, MAGIC);
    s.putIntAt(OFF_LENGTH, s.position());
    b[OFF_VERSION] = (byte) VERSION;
    b[OFF_FLAGS] = (byte) flags;
    b[OFF_FLAGS + 1] = 0; // reserved (a reused buffer holds old bytes)
    b[OFF_FLAGS + 2] = 0;
    s.putIntAt(OFF_COUNT, messages.size());
    return new Encoded(s, messages.size(), maxCreated, anyWithout);
  }

  /** Frame buffers larger than this are not kept for reuse. */
  static final int MAX_SPARE_BYTES = 8 << 20;

  /**
   * One spare frame array per appending thread, reused from append to append so that a batch is
   * encoded into memory that is already allocated (and warm) instead of a fresh array of hundreds
   * of KiB; soft, so the GC may take it back. While a frame encoded into it may still be written
   * the array is out of the thread-local (lent), so a second borrow gets a fresh one. The value
   * holds JDK types only: a thread that outlives this library's class loader (a Connect worker
   * thread) does not keep the loader alive.
   */
  private static final ThreadLocal<SoftReference<byte[]>> SPARE = new ThreadLocal<>();

  /**
   * An empty buffer for a frame of about {@code estimate} bytes: on this thread's spare array when
   * there is one large enough, else on a new one. Give it back with {@link #releaseSink} once the
   * frame is written (or will never be); a buffer not given back is simply not reused.
   */
  static ByteSink borrowSink(int estimate) {
    SoftReference<byte[]> ref = SPARE.get();
    byte[] spare = ref == null ? null : ref.get();
    if (spare == null || spare.length < estimate) {
      return new ByteSink(estimate);
    }
    SPARE.remove();
    return new ByteSink(spare);
  }

  /** Gives a buffer from {@link #borrowSink} back to this thread; the frame in it is done with. */
  static void releaseSink(ByteSink s) {
    byte[] array = s.array();
    if (array.length > MAX_SPARE_BYTES) {
      return;
    }
    SoftReference<byte[]> ref = SPARE.get();
    byte[] current = ref == null ? null : ref.get();
    if (current != array && (current == null || array.length >= current.length)) {
      SPARE.set(new SoftReference<>(array));
    }
  }

  /** Stamps base offset, append time, max time and the CRC. */
  static void seal(Encoded e, long baseOffset, long appendTime) {
    ByteSink s = e.sink;
    s.putLongAt(OFF_BASE, baseOffset);
    s.putLongAt(OFF_APPEND_TIME, appendTime);
    s.putLongAt(OFF_MAX_TIME, e.maxTime(appendTime));
    s.putIntAt(OFF_CRC, crc(s.array(), 0, s.position()));
  }

  /** CRC-32C of {@code frame[off+8, off+len)}. */
  static int crc(byte[] frame, int off, int len) {
    CRC32C c = new CRC32C();
    c.update(frame, off + OFF_LENGTH, len - OFF_LENGTH);
    return (int) c.getValue();
  }

  private static void encodeRecord(ByteSink s, Message m) {
    int lenAt = s.position();
    s.skip(4);
    byte[] key = m.keyUnsafe();
    byte[] value = m.valueUnsafe();
    int presence =
        (key != null ? 1 : 0)
            | (value != null ? 2 : 0)
            | (m.createdAt() != null ? 4 : 0)
            | (m.expiresAt() != null ? 8 : 0);
    s.putByte(presence).putByte(tsCode(m.timestampType())).putByte(stateCode(m.state()));
    s.putLong(m.timestamp());
    if (m.createdAt() != null) {
      s.putLong(m.createdAt().getEpochSecond()).putInt(m.createdAt().getNano());
    }
    if (m.expiresAt() != null) {
      s.putLong(m.expiresAt().getEpochSecond()).putInt(m.expiresAt().getNano());
    }
    s.putString(m.id()).putRepeatedString(m.topic());
    if (key != null) {
      s.putInt(key.length).putBytes(key, 0, key.length);
    }
    if (value != null) {
      s.putInt(value.length).putBytes(value, 0, value.length);
    }
    List<Header> headers = m.headers();
    s.putInt(headers.size());
    for (Header h : headers) {
      s.putString(h.key()).putNullableBytes(h.valueUnsafe());
    }
    Map<String, String> props = m.properties();
    s.putInt(props.size());
    // Keys are usually the same constant instances from record to record; values (an offset, a
    // header key decoded per record) are usually new strings, and identity-hashing a new string
    // costs more than encoding it. forEach, not the entry set: a message's map is unmodifiable, and
    // its entry set wraps every entry it hands out.
    props.forEach((k, v) -> s.putRepeatedString(k).putNullableString(v));
    s.putIntAt(lenAt, s.position() - lenAt - 4);
  }

  /** The parsed fixed header of a frame. */
  record FrameHeader(
      int crc,
      int length,
      int version,
      int flags,
      long baseOffset,
      int count,
      long appendTime,
      long maxTime) {

    long endOffset() {
      return baseOffset + count;
    }
  }

  /** Parses the header at {@code b[off..off+HEADER)}; does not check magic, CRC or version. */
  static FrameHeader header(byte[] b, int off) {
    return new FrameHeader(
        ByteSource.getIntAt(b, off + OFF_CRC),
        ByteSource.getIntAt(b, off + OFF_LENGTH),
        b[off + OFF_VERSION] & 0xFF,
        b[off + OFF_FLAGS] & 0xFF,
        ByteSource.getLongAt(b, off + OFF_BASE),
        ByteSource.getIntAt(b, off + OFF_COUNT),
        ByteSource.getLongAt(b, off + OFF_APPEND_TIME),
        ByteSource.getLongAt(b, off + OFF_MAX_TIME));
  }

  /**
   * Why a whole frame with a matching CRC but format version {@code version} (not {@link #VERSION})
   * is refused, for an error message: both versions, and for a higher one that a newer release
   * wrote it.
   */
  static String versionProblem(int version) {
    return "frame format version "
        + version
        + " (this build reads version "
        + VERSION
        + (version > VERSION
            ? "; the store was written by a newer version, upgrade to open it)"
            : ")");
  }

  static int magic(byte[] b, int off) {
    return ByteSource.getIntAt(b, off);
  }

  /**
   * Why the header {@code h} at {@code b[at..]} is not the frame expected at byte {@code pos} of a
   * segment whose valid part is {@code valid} bytes long and whose next frame should start at
   * offset {@code expected}: its magic, its length or its offsets, for an error message.
   */
  static String describeBadFrame(
      byte[] b, int at, FrameHeader h, long pos, long valid, long expected) {
    if (magic(b, at) != MAGIC) {
      return String.format("bad frame magic 0x%08X", magic(b, at));
    }
    if (h.length() < HEADER || h.length() > valid - pos) {
      return "bad frame length " + h.length() + " (" + (valid - pos) + " bytes remain)";
    }
    return "frame has base offset "
        + h.baseOffset()
        + " and "
        + h.count()
        + " records where offset "
        + expected
        + " was expected";
  }

  /**
   * Decodes records {@code [from, from+max)} of a verified frame at {@code frame[off..]} (clipped
   * to its count).
   *
   * @throws FormatException if the records do not follow the format
   */
  static List<Message> decode(byte[] frame, int off, FrameHeader h, int from, int max) {
    ByteSource src = new ByteSource(frame, off + HEADER, off + h.length());
    int end = (int) Math.min((long) from + max, h.count());
    List<Message> out = new ArrayList<>(Math.max(0, end - from));
    for (int i = 0; i < end; i++) {
      int len = src.getInt();
      if (len < 0) {
        throw new FormatException("negative record length " + len, src.position() - 4);
      }
      if (i < from) {
        src.position(src.position() + len);
        continue;
      }
      int recordEnd = src.position() + len;
      if (len > src.remaining()) {
        throw new FormatException("record " + i + " overruns its frame", src.position());
      }
      out.add(decodeRecord(src, h.baseOffset() + i));
      if (src.position() != recordEnd) {
        throw new FormatException("record " + i + " length does not match its content", recordEnd);
      }
    }
    return out;
  }

  /** The checkpoint entries a verified frame carries (empty if none), in written order. */
  static Map<String, String> checkpoints(byte[] frame, int off, FrameHeader h) {
    if ((h.flags() & FLAG_CHECKPOINTS) == 0) {
      return Map.of();
    }
    ByteSource src = new ByteSource(frame, off + HEADER, off + h.length());
    for (int i = 0; i < h.count(); i++) {
      int len = src.getInt();
      if (len < 0) {
        throw new FormatException("negative record length " + len, src.position() - 4);
      }
      src.position(src.position() + len);
    }
    int n = src.getInt();
    if (n < 0) {
      throw new FormatException("negative checkpoint count " + n, src.position() - 4);
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      out.put(src.getString(), src.getString());
    }
    return out;
  }

  private static Message decodeRecord(ByteSource src, long offset) {
    int presence = src.getByte();
    TimestampType tsType = code(TS_TYPES, src.getByte(), "timestamp type", src);
    MessageState state = code(STATES, src.getByte(), "state", src);
    long timestamp = src.getLong();
    Message.Builder b = Message.builder().offset(offset).timestamp(timestamp, tsType).state(state);
    if ((presence & 4) != 0) {
      b.createdAt(instant(src));
    }
    if ((presence & 8) != 0) {
      b.expiresAt(instant(src));
    }
    b.id(src.getString()).topic(src.getString());
    if ((presence & 1) != 0) {
      b.key(lengthPrefixed(src));
    }
    if ((presence & 2) != 0) {
      b.value(lengthPrefixed(src));
    }
    int headers = count(src, "header");
    List<Header> hs = new ArrayList<>(headers);
    for (int i = 0; i < headers; i++) {
      String k = src.getString();
      hs.add(Header.of(k, src.getNullableBytes()));
    }
    b.headers(hs);
    int props = count(src, "property");
    if (props > 0) {
      Map<String, String> ps = new LinkedHashMap<>(props * 2);
      for (int i = 0; i < props; i++) {
        String k = MessageProperties.currentName(src.getString());
        ps.put(k, src.getNullableString());
      }
      b.properties(ps);
    } else {
      b.properties(Collections.emptyMap());
    }
    return b.buildOwned();
  }

  private static byte[] lengthPrefixed(ByteSource src) {
    int n = src.getInt();
    if (n < 0) {
      throw new FormatException("negative length " + n, src.position() - 4);
    }
    return src.getBytes(n);
  }

  private static int count(ByteSource src, String what) {
    int n = src.getInt();
    if (n < 0 || n > src.remaining()) {
      throw new FormatException("bad " + what + " count " + n, src.position() - 4);
    }
    return n;
  }

  private static Instant instant(ByteSource src) {
    long seconds = src.getLong();
    int nanos = src.getInt();
    if (nanos < 0 || nanos > 999_999_999) {
      throw new FormatException("bad nanos " + nanos, src.position() - 4);
    }
    try {
      return Instant.ofEpochSecond(seconds, nanos);
    } catch (java.time.DateTimeException e) {
      throw new FormatException("bad instant " + seconds + "s", src.position() - 12);
    }
  }

  private static <T> T code(T[] values, int code, String what, ByteSource src) {
    if (code < 0 || code >= values.length) {
      throw new FormatException("unknown " + what + " code " + code, src.position() - 1);
    }
    return values[code];
  }

  private static int tsCode(TimestampType t) {
    return switch (t) {
      case NO_TIMESTAMP -> 0;
      case CREATE_TIME -> 1;
      case LOG_APPEND_TIME -> 2;
    };
  }

  private static int stateCode(MessageState s) {
    return switch (s) {
      case QUEUED -> 0;
      case DELIVERED -> 1;
      case ACKED -> 2;
      case RETRY -> 3;
      case DLQ -> 4;
    };
  }

  /** Epoch milliseconds, saturated instead of overflowing for extreme instants. */
  static long millis(Instant t) {
    try {
      return t.toEpochMilli();
    } catch (ArithmeticException e) {
      return t.getEpochSecond() < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }
}
