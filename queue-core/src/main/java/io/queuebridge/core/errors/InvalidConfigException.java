package io.queuebridge.core.errors;

/** A configuration value is not acceptable; names the field, its value and what was expected. */
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
    return value instanceof String s ? "'" + s + "'" : String.valueOf(value);
  }
}
