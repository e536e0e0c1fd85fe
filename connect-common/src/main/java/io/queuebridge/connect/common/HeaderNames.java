package io.queuebridge.connect.common;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;

/**
 * Record header names as the connectors' header keys take them ({@code queue.delay.header} and
 * {@code queue.deliver.at.header}): no control character (a NUL, a line break) and no unpaired
 * surrogate (Kafka sends header names as UTF-8, where such a name cannot arrive), at most {@link
 * #MAX_BYTES} bytes in UTF-8, or empty for none.
 *
 * <p>Connect trims a string value before its validator sees it, so {@link #validator()} cannot see
 * a control character at either end or a value of blanks only; {@link #rawError} checks the value
 * as given, for the connectors' {@code validate} and their configs' constructors.
 */
public final class HeaderNames {
  /** The longest header name the header keys accept, in UTF-8 bytes. */
  public static final int MAX_BYTES = 255;

  /** What a header key expects, for error messages. */
  public static final String EXPECTED =
      "a record header name: no control characters or unpaired surrogates, at most "
          + MAX_BYTES
          + " bytes in UTF-8 (or empty for none)";

  private HeaderNames() {}

  /** The validator of a header key (the value as Connect trimmed it). */
  public static ConfigDef.Validator validator() {
    return new Validator();
  }

  /**
   * The error for the value of {@code key} as given, before Connect trims it, or null: a control
   * character or unpaired surrogate anywhere, too many bytes, or blanks only (which would silently
   * mean none).
   *
   * @param raw the value as given; null or empty (none) has no error
   */
  public static String rawError(String key, String raw) {
    if (raw == null || raw.isEmpty()) {
      return null;
    }
    String problem = problem(raw);
    if (problem == null && raw.isBlank()) {
      problem = "is blank";
    }
    return problem == null
        ? null
        : key + " = '" + ConfigValidators.shown(raw) + "' " + problem + "; expected " + EXPECTED;
  }

  /** What is wrong with {@code header} as a header name ("has ..."), or null. */
  static String problem(String header) {
    for (int i = 0; i < header.length(); i++) {
      char c = header.charAt(i);
      if (Character.isISOControl(c)) {
        return "has a control character at index " + i;
      }
      if (Character.isHighSurrogate(c)
          && i + 1 < header.length()
          && Character.isLowSurrogate(header.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return "has an unpaired surrogate at index " + i;
      }
    }
    int bytes = header.getBytes(StandardCharsets.UTF_8).length;
    return bytes > MAX_BYTES ? "has " + bytes + " bytes in UTF-8" : null;
  }

  private static final class Validator implements ConfigDef.Validator {
    @Override
    public void ensureValid(String name, Object value) {
      String header = (String) value;
      if (header == null || header.isEmpty()) {
        return;
      }
      String problem = problem(header);
      if (problem != null) {
        throw new ConfigException(
            name, ConfigValidators.shown(header), problem + "; expected " + EXPECTED);
      }
    }

    @Override
    public String toString() {
      return "a record header name, or empty for none: no control characters or unpaired"
          + " surrogates, at most "
          + MAX_BYTES
          + " bytes in UTF-8";
    }
  }
}
