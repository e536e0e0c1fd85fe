package io.queuebridge.connect.sink;

import io.queuebridge.connect.common.ConfigValidators;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.PublishRequest;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.sink.SinkRecord;

/**
 * Reads the due time a record asks for (BEHAVIOUR Q-DELAY) from the header {@code
 * queue.delay.header} names (a delay in milliseconds) or the one {@code queue.deliver.at.header}
 * names (a time in milliseconds since the epoch), checks it against every queue the record goes to,
 * and sets it on the record's request.
 *
 * <p>The checks are the ones the queue makes when the batch is written (its {@code maxDelay}, and
 * its {@code messageTtl} when it has one), made here, per record, so that a record a queue would
 * refuse is errant on its own instead of failing the batch it is in. A delay counts from the write,
 * so a delay within the limits now is within them then; a due time comes nearer as time passes.
 *
 * <p>Accepted values: bytes or a string of the ASCII digits {@code 0-9} only (what {@code
 * ByteArrayConverter} or {@code StringConverter} hand over), or an integer ({@code INT8} to {@code
 * INT64}, or a decimal without a fraction: what {@code SimpleHeaderConverter} parses); for the due
 * time also a Connect {@code Timestamp} ({@link Date}). A delay of 0 and a due time not after now
 * mean at once.
 *
 * <p>Immutable; thread-safe.
 */
final class DueTimeHeaders {
  /** Reads no header: every record is for delivery at once. */
  static final DueTimeHeaders NONE = new DueTimeHeaders("", "", Clock.systemUTC());

  private static final String DELAY_EXPECTED =
      "the delay in milliseconds as a decimal integer (the digits 0-9 only; 0 = none)";

  private static final String AT_EXPECTED =
      "the due time in milliseconds since 1970-01-01T00:00:00Z as a decimal integer (the digits"
          + " 0-9 only), or a Connect Timestamp";

  private final String delayHeader;
  private final String deliverAtHeader;
  private final Clock clock;

  /**
   * @param delayHeader the header holding a delay; empty for none
   * @param deliverAtHeader the header holding a due time; empty for none; not {@code delayHeader}
   * @param clock what "now" is for a due time
   */
  DueTimeHeaders(String delayHeader, String deliverAtHeader, Clock clock) {
    this.delayHeader = delayHeader;
    this.deliverAtHeader = deliverAtHeader;
    this.clock = clock;
  }

  /** As {@code config} says; now is {@code clock}'s. */
  static DueTimeHeaders of(QueueSinkConfig config, Clock clock) {
    return new DueTimeHeaders(config.delayHeader(), config.deliverAtHeader(), clock);
  }

  /** Whether a header is read at all. */
  boolean enabled() {
    return !delayHeader.isEmpty() || !deliverAtHeader.isEmpty();
  }

  /**
   * Sets on {@code request} the due time {@code record} asks for, once every one of {@code targets}
   * accepts it; nothing when the record carries neither header, or asks for no delay.
   *
   * @throws DataException naming the record, the header, its value and what was expected, if the
   *     header has no value or a malformed or negative one, appears more than once, both headers
   *     are there, or a target does not accept the due time (further ahead than its {@code
   *     maxDelay}, or than its {@code messageTtl})
   */
  void apply(SinkRecord record, List<QueueConfig> targets, PublishRequest.Builder request) {
    if (!enabled() || record.headers().isEmpty()) {
      return;
    }
    Header delay = null;
    Header at = null;
    int delays = 0;
    int ats = 0;
    for (Header h : record.headers()) {
      if (!delayHeader.isEmpty() && delayHeader.equals(h.key())) {
        delay = h;
        delays++;
      } else if (!deliverAtHeader.isEmpty() && deliverAtHeader.equals(h.key())) {
        at = h;
        ats++;
      }
    }
    if (delays > 1) {
      throw repeated(record, delayHeader, QueueSinkConfig.DELAY_HEADER_CONFIG, delays);
    }
    if (ats > 1) {
      throw repeated(record, deliverAtHeader, QueueSinkConfig.DELIVER_AT_HEADER_CONFIG, ats);
    }
    if (delay != null && at != null) {
      throw new DataException(
          "record "
              + coordinates(record)
              + " carries both the delay header '"
              + delayHeader
              + "' ("
              + QueueSinkConfig.DELAY_HEADER_CONFIG
              + ") and the due-time header '"
              + deliverAtHeader
              + "' ("
              + QueueSinkConfig.DELIVER_AT_HEADER_CONFIG
              + "); expected at most one of them");
    }
    if (delay != null) {
      Reading r = new Reading(record, delay, QueueSinkConfig.DELAY_HEADER_CONFIG, DELAY_EXPECTED);
      long millis = r.millis(false);
      if (millis == 0) {
        return;
      }
      Duration d = Duration.ofMillis(millis);
      for (QueueConfig target : targets) {
        r.check(target, d, "a delay");
      }
      request.delay(d);
    } else if (at != null) {
      Reading r = new Reading(record, at, QueueSinkConfig.DELIVER_AT_HEADER_CONFIG, AT_EXPECTED);
      Instant due = Instant.ofEpochMilli(r.millis(true));
      Instant now = clock.instant();
      if (!due.isAfter(now)) {
        return; // due already: at once
      }
      Duration ahead = Duration.between(now, due);
      for (QueueConfig target : targets) {
        r.check(target, ahead, "a due time " + ahead + " after now (" + now + ")");
      }
      request.deliverAt(due);
    }
  }

  private static DataException repeated(SinkRecord record, String header, String key, int times) {
    return new DataException(
        "record "
            + coordinates(record)
            + " carries the header '"
            + header
            + "' ("
            + key
            + ") "
            + times
            + " times; expected it at most once");
  }

  static String coordinates(SinkRecord record) {
    return record.originalTopic()
        + "-"
        + record.originalKafkaPartition()
        + "@"
        + record.originalKafkaOffset();
  }

  /** One header's value being read, for the messages. */
  private static final class Reading {
    private final SinkRecord record;
    private final Header header;
    private final String key;
    private final String expected;

    Reading(SinkRecord record, Header header, String key, String expected) {
      this.record = record;
      this.header = header;
      this.key = key;
      this.expected = expected;
    }

    /**
     * The value in milliseconds, {@link Long#MAX_VALUE} when larger (no queue accepts that much).
     *
     * @param timestamp whether a Connect Timestamp is accepted (the due time)
     */
    long millis(boolean timestamp) {
      Object v = header.value();
      if (v == null) {
        throw refused("has no value (null)");
      }
      if (v instanceof byte[] bytes) {
        return digits(new String(bytes, StandardCharsets.UTF_8));
      }
      if (v instanceof ByteBuffer buffer) {
        return digits(StandardCharsets.UTF_8.decode(buffer.duplicate()).toString());
      }
      if (v instanceof String s) {
        return digits(s);
      }
      if (v instanceof Byte || v instanceof Short || v instanceof Integer || v instanceof Long) {
        long n = ((Number) v).longValue();
        if (n < 0) {
          throw refused("is negative");
        }
        return n;
      }
      if (v instanceof BigInteger n) {
        return big(n);
      }
      if (v instanceof BigDecimal n) {
        if (n.signum() < 0) {
          throw refused("is negative");
        }
        if (n.stripTrailingZeros().scale() > 0) {
          throw refused("has a fraction");
        }
        return big(n.toBigInteger());
      }
      if (timestamp && v instanceof Date date) {
        return Math.max(0, date.getTime()); // before 1970: long due, so at once
      }
      if (v instanceof Float || v instanceof Double) {
        throw refused("is a floating-point number (" + v.getClass().getSimpleName() + ")");
      }
      throw refused("is not a number (a " + v.getClass().getSimpleName() + ")");
    }

    private long big(BigInteger n) {
      if (n.signum() < 0) {
        throw refused("is negative");
      }
      return n.bitLength() > 63 ? Long.MAX_VALUE : n.longValue();
    }

    private long digits(String s) {
      if (s.isEmpty()) {
        throw refused("is empty");
      }
      int start = s.charAt(0) == '-' && s.length() > 1 ? 1 : 0;
      long n = 0;
      for (int i = start; i < s.length(); i++) {
        char c = s.charAt(i);
        if (c < '0' || c > '9') {
          throw refused("is not a decimal integer");
        }
        int d = c - '0';
        n = n > (Long.MAX_VALUE - d) / 10 ? Long.MAX_VALUE : n * 10 + d;
      }
      if (start == 1) {
        throw refused("is negative");
      }
      return n;
    }

    /**
     * Refuses a due time {@code ahead} of now that {@code target} does not accept.
     *
     * @param what the due time, for the message ("a delay", "a due time ... after now")
     */
    void check(QueueConfig target, Duration ahead, String what) {
      Duration max = target.maxDelay();
      if (ahead.compareTo(max) > 0) {
        throw new DataException(
            start()
                + ": "
                + what
                + (max.isZero()
                    ? ", but queue '"
                        + target.name()
                        + "' takes no delayed messages (maxDelay PT0S)"
                    : " beyond the maxDelay of queue '" + target.name() + "'")
                + "; expected at most "
                + max
                + " ("
                + max.toMillis()
                + " ms)");
      }
      Duration ttl = target.messageTtl();
      if (ttl.compareTo(Duration.ZERO) > 0 && ahead.compareTo(ttl) > 0) {
        throw new DataException(
            start()
                + ": "
                + what
                + " beyond the messageTtl of queue '"
                + target.name()
                + "' (the message would expire before it is due); expected at most "
                + ttl
                + " ("
                + ttl.toMillis()
                + " ms)");
      }
    }

    private DataException refused(String problem) {
      return new DataException(start() + " " + problem + "; expected " + expected);
    }

    /** {@code record t-0@5: header 'h' (key) = 'value'}; without the value when it is null. */
    private String start() {
      String named =
          "record "
              + coordinates(record)
              + ": header '"
              + ConfigValidators.shown(header.key())
              + "' ("
              + key
              + ")";
      return header.value() == null ? named : named + " = '" + shown(header.value()) + "'";
    }

    private static String shown(Object v) {
      if (v instanceof byte[] bytes) {
        return ConfigValidators.shown(new String(bytes, StandardCharsets.UTF_8));
      }
      if (v instanceof ByteBuffer buffer) {
        return ConfigValidators.shown(StandardCharsets.UTF_8.decode(buffer.duplicate()).toString());
      }
      if (v instanceof Date date) {
        return date.toInstant().toString();
      }
      return ConfigValidators.shown(v);
    }
  }
}
