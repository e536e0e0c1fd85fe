package io.queuebridge.store.postgres;

import io.queuebridge.core.InvalidConfigException;
import java.nio.charset.StandardCharsets;

/**
 * Queue names and group ids as the store accepts them: the same rules as the file store (SEMANTICS
 * A11) minus its file-name encoding. Names are bound as SQL parameters, never spliced into SQL.
 * Stateless.
 */
final class Names {
  /** Longest name in UTF-8 bytes (also keeps a name well inside a NOTIFY payload). */
  static final int MAX_BYTES = 1000;

  private Names() {}

  /**
   * @param what how the caller calls the name ({@code queue name}, {@code group id}), for errors
   * @throws InvalidConfigException naming the value and the rule it breaks
   */
  static String check(String what, String name) {
    if (name == null || name.isEmpty()) {
      throw new InvalidConfigException(what, name, "a non-empty name");
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (Character.isISOControl(c)) {
        throw new InvalidConfigException(
            what,
            name.replaceAll("\\p{Cntrl}", "?"),
            "no control characters (found U+"
                + String.format("%04X", (int) c)
                + " at index "
                + i
                + ")");
      }
      boolean unpaired =
          Character.isHighSurrogate(c)
              ? i + 1 >= name.length() || !Character.isLowSurrogate(name.charAt(i + 1))
              : Character.isLowSurrogate(c)
                  && (i == 0 || !Character.isHighSurrogate(name.charAt(i - 1)));
      if (unpaired) {
        throw new InvalidConfigException(what, name, "no unpaired surrogate at index " + i);
      }
    }
    if (name.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
      throw new InvalidConfigException(
          what, name.substring(0, 40) + "…", "at most " + MAX_BYTES + " UTF-8 bytes");
    }
    return name;
  }
}
