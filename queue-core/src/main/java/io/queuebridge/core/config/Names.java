package io.queuebridge.core.config;

import io.queuebridge.core.errors.InvalidConfigException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The naming rules of every store for queue names and group ids (BEHAVIOUR S-NAMES), and their
 * encoding as file names. {@link QueueConfig#validate()} and the group engine apply the rules, so
 * every store refuses the same names; the stores use the encoding. A name that no store could keep
 * as a path component (or that would escape its directory) is refused, so a queue valid in one
 * store is valid in every other.
 *
 * <p><b>Validation.</b> A name is non-empty, has no control character (NUL, C0, DEL, C1), no
 * unpaired surrogate, and encodes to at most {@link #MAX_ENCODED_BYTES} bytes, so that the longest
 * file name derived from it ({@code <encoded>.grp.tmp}) stays under the 255-byte limit of common
 * file systems.
 *
 * <p><b>Encoding.</b> The name's UTF-8 bytes are kept when they are ASCII letters, digits, {@code
 * _}, {@code -}, or a {@code .} that is not the first byte; every other byte becomes {@code %XX}
 * (upper-case hex). So {@code .} and {@code ..} become {@code %2E} and {@code %2E.}, separators
 * ({@code /}, {@code \}) and {@code %} itself are escaped, and the encoded name is one plain path
 * component that can never resolve outside its parent. {@link #decode} reverses it exactly.
 *
 * <p>Case-insensitive file systems (macOS default, Windows) would map names differing only by case
 * to one directory; the store is meant for Linux and says so.
 *
 * <p>The encoding is used by the file store (directory and file names); the PostgreSQL store
 * applies the same rules. Not part of the SPI. Stateless and thread-safe.
 */
public final class Names {
  /** Longest encoded name, in bytes. */
  public static final int MAX_ENCODED_BYTES = 200;

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private Names() {}

  /**
   * Checks {@code name} and returns its encoded, file-system-safe form.
   *
   * @param what how the caller calls the name ({@code queue name}, {@code group id}), for errors
   * @param name the name; null is refused like the empty name
   * @throws InvalidConfigException naming the value and the rule it breaks
   */
  public static String encode(String what, String name) {
    if (name == null || name.isEmpty()) {
      throw new InvalidConfigException(what, name, "a non-empty name");
    }
    checkCharacters(what, name);
    byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
    StringBuilder out = new StringBuilder(utf8.length + 8);
    for (int i = 0; i < utf8.length; i++) {
      int b = utf8[i] & 0xFF;
      if (isPlain(b) && !(b == '.' && i == 0)) {
        out.append((char) b);
      } else {
        out.append('%').append(HEX[b >>> 4]).append(HEX[b & 0xF]);
      }
      if (out.length() > MAX_ENCODED_BYTES) {
        break;
      }
    }
    if (out.length() > MAX_ENCODED_BYTES) {
      throw new InvalidConfigException(
          what,
          abbreviate(name),
          "at most "
              + MAX_ENCODED_BYTES
              + " bytes once encoded for the file system (ASCII letters, digits, '.', '_' and '-'"
              + " take 1 byte, every other UTF-8 byte takes 3); this name has "
              + name.length()
              + " characters");
    }
    return out.toString();
  }

  /**
   * Whether {@link #encode} accepts {@code name}: a store answers a lookup of any other name with
   * "not found" without asking its storage, since no queue or group of that name can exist.
   */
  public static boolean isValid(String name) {
    try {
      encode("name", name);
      return true;
    } catch (InvalidConfigException e) {
      return false;
    }
  }

  /**
   * The character rules of a name without its length bound, for ids that are stored but never
   * become file names (consumer ids, BEHAVIOUR S-NAMES): no control character (NUL, C0, DEL, C1)
   * and no unpaired surrogate. Null and empty pass; callers that need a value check that first.
   *
   * @param what how the caller calls the value, for errors
   * @throws InvalidConfigException naming the value (control characters shown as {@code \\uXXXX})
   *     and the first offending index
   */
  public static void checkCharacters(String what, String name) {
    if (name == null) {
      return;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (Character.isISOControl(c)) {
        throw new InvalidConfigException(
            what,
            abbreviate(name),
            "no control characters (found U+"
                + String.format("%04X", (int) c)
                + " at index "
                + i
                + ")");
      }
    }
    checkUtf8(what, name);
  }

  /**
   * Refuses a string that has no UTF-8 encoding: one with an unpaired surrogate, which a store
   * writing UTF-8 would read back changed ({@code ?}). For the strings of a message (header names,
   * property names and values, client ids; BEHAVIOUR Q-MSG), which may otherwise hold anything.
   * Null passes.
   *
   * @throws InvalidConfigException naming the value and the index of the unpaired surrogate
   */
  public static void checkUtf8(String what, String s) {
    if (s == null) {
      return;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!Character.isSurrogate(c)) {
        continue;
      }
      if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
        continue;
      }
      throw new InvalidConfigException(
          what, abbreviate(s), "valid UTF-8: no unpaired surrogate at index " + i);
    }
  }

  /**
   * The name an encoded file name stands for.
   *
   * @throws NullPointerException if {@code encoded} is null
   * @throws IllegalArgumentException if {@code encoded} is not an output of {@link #encode}
   */
  public static String decode(String encoded) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(encoded.length());
    for (int i = 0; i < encoded.length(); i++) {
      char c = encoded.charAt(i);
      if (c == '%') {
        if (i + 2 >= encoded.length()) {
          throw new IllegalArgumentException("truncated escape in encoded name: " + encoded);
        }
        int hi = Character.digit(encoded.charAt(i + 1), 16);
        int lo = Character.digit(encoded.charAt(i + 2), 16);
        if (hi < 0 || lo < 0) {
          throw new IllegalArgumentException("bad escape in encoded name: " + encoded);
        }
        bytes.write(hi << 4 | lo);
        i += 2;
      } else if (c < 0x80 && isPlain(c) && !(c == '.' && i == 0)) {
        bytes.write(c);
      } else {
        throw new IllegalArgumentException("not an encoded name: " + encoded);
      }
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  private static boolean isPlain(int b) {
    return (b >= 'a' && b <= 'z')
        || (b >= 'A' && b <= 'Z')
        || (b >= '0' && b <= '9')
        || b == '_'
        || b == '-'
        || b == '.';
  }

  /** The name with control characters shown as {@code \\uXXXX}, for error messages. */
  private static String printable(String name) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < name.length() && sb.length() < 120; i++) {
      char c = name.charAt(i);
      if (Character.isISOControl(c) || Character.isSurrogate(c)) {
        sb.append(String.format("\\u%04X", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  private static String abbreviate(String name) {
    String p = printable(name);
    return p.length() > 60 ? p.substring(0, 60) + "...(" + name.length() + " chars)" : p;
  }
}
