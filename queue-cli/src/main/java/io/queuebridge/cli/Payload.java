package io.queuebridge.cli;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;

/**
 * A key, value or header value as {@code tail} shows it: UTF-8 text as text, other bytes as base64
 * (or hex). Text is bytes that decode as UTF-8 without error and hold no control characters but
 * tab, line feed and carriage return. Exactly one component is set; {@code -o json} prints only
 * that one ({@code {"utf8": "..."}}, {@code {"base64": "..."}} or {@code {"hex": "..."}}).
 *
 * @param utf8 the text
 * @param base64 the bytes in base64 (RFC 4648, with padding)
 * @param hex the bytes in lower-case hex
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record Payload(String utf8, String base64, String hex) {

  /** {@code bytes} as a payload; null for null (no key, a tombstone, a null header value). */
  static Payload of(byte[] bytes, boolean hexForBinary) {
    if (bytes == null) {
      return null;
    }
    String text = textOf(bytes);
    if (text != null) {
      return new Payload(text, null, null);
    }
    return hexForBinary
        ? new Payload(null, null, HexFormat.of().formatHex(bytes))
        : new Payload(null, Base64.getEncoder().encodeToString(bytes), null);
  }

  private static String textOf(byte[] bytes) {
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(bytes))
              .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isISOControl(c) && c != '\t' && c != '\n' && c != '\r') {
        return null;
      }
    }
    return text;
  }

  /**
   * For a table: the text itself ({@code (empty)} when empty), or {@code base64:...} / {@code
   * hex:...}.
   */
  String display() {
    if (utf8 != null) {
      return utf8.isEmpty() ? "(empty)" : utf8;
    }
    return base64 != null ? "base64:" + base64 : "hex:" + hex;
  }
}
