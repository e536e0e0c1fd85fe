package io.queuebridge.cli;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** How values are shown in tables: {@code -} for what is absent or not available. */
final class Text {
  static final String NONE = "-";

  private Text() {}

  static String yesNo(boolean value) {
    return value ? "yes" : "no";
  }

  /** The value, or {@code -} for null. */
  static String orNone(Object value) {
    return value == null ? NONE : value.toString();
  }

  /** An instant in UTC to the millisecond ({@code 2025-01-31T09:30:00.125Z}), or {@code -}. */
  static String instant(Instant at) {
    return at == null ? NONE : at.truncatedTo(ChronoUnit.MILLIS).toString();
  }

  /**
   * An age for people, to its two largest units ({@code 45s}, {@code 3m12s}, {@code 2h05m}, {@code
   * 3d04h}), or {@code -} for null.
   */
  static String age(Long millis) {
    if (millis == null) {
      return NONE;
    }
    long s = millis / 1000;
    if (s < 60) {
      return s + "s";
    }
    if (s < 3600) {
      return (s / 60) + "m" + two(s % 60) + "s";
    }
    if (s < 86400) {
      return (s / 3600) + "h" + two(s / 60 % 60) + "m";
    }
    return (s / 86400) + "d" + two(s / 3600 % 24) + "h";
  }

  private static String two(long n) {
    return n < 10 ? "0" + n : Long.toString(n);
  }

  /** A configured duration, exactly: {@code 7d}, {@code 1h30m}, {@code 1s500ms}, {@code 0}. */
  static String duration(Duration d) {
    if (d.isZero()) {
      return "0";
    }
    StringBuilder out = new StringBuilder(d.isNegative() ? "-" : "");
    Duration rest = d.abs();
    long[] amounts = {
      rest.toDays(),
      rest.toHoursPart(),
      rest.toMinutesPart(),
      rest.toSecondsPart(),
      rest.toMillisPart(),
      rest.toNanosPart() % 1_000_000
    };
    String[] units = {"d", "h", "m", "s", "ms", "ns"};
    for (int i = 0; i < amounts.length; i++) {
      if (amounts[i] != 0) {
        out.append(amounts[i]).append(units[i]);
      }
    }
    return out.toString();
  }

  /** Milliseconds from {@code then} to {@code now}, never negative; null when {@code then} is. */
  static Long millisSince(Instant then, Instant now) {
    if (then == null) {
      return null;
    }
    return Math.max(0, Duration.between(then, now).toMillis());
  }

  /** {@code text} on one line: line breaks become spaces. */
  static String oneLine(String text) {
    return text == null ? "" : text.replaceAll("\\s*[\\r\\n]+\\s*", " ").strip();
  }
}
