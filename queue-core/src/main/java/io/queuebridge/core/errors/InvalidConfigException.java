package io.queuebridge.core.errors;

/**
 * A configuration value is not acceptable; names the field, its value and what was expected. A
 * string value is shown safely: control characters and unpaired surrogates as {@code \\uXXXX}, and
 * a value longer than 120 characters by its first 60 and its length, so that a hostile value (a
 * NUL, an escape sequence, 10,000 characters) cannot garble a log line.
 */
public class InvalidConfigException extends FatalQueueException {
  private final String field;
  private final transient Object value;

  public InvalidConfigException(String field, Object value, String expected) {
    super(null, "invalid " + field + ": " + render(value) + " (expected " + expected + ")");
    this.field = field;
    this.value = value;
  }

  /** The offending field, in the vocabulary of the API that received it. */
  public String field() {
    return field;
  }

  /** The offending value (may be null). */
  public Object value() {
    return value;
  }

  private static String render(Object value) {
    return value instanceof String s ? "'" + safe(s) + "'" : String.valueOf(value);
  }

  private static String safe(String s) {
    boolean longValue = s.length() > 120;
    int end = longValue ? (Character.isHighSurrogate(s.charAt(59)) ? 59 : 60) : s.length();
    StringBuilder sb = new StringBuilder(end + 24);
    for (int i = 0; i < end; i++) {
      char c = s.charAt(i);
      boolean paired =
          Character.isHighSurrogate(c)
                  && i + 1 < s.length()
                  && Character.isLowSurrogate(s.charAt(i + 1))
              || Character.isLowSurrogate(c) && i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
      if (Character.isISOControl(c) || Character.isSurrogate(c) && !paired) {
        sb.append(String.format("\\u%04X", (int) c));
      } else {
        sb.append(c);
      }
    }
    if (longValue) {
      sb.append("...(").append(s.length()).append(" chars)");
    }
    return sb.toString();
  }
}
