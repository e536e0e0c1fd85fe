package io.queuebridge.core.config;

import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Objects;

/**
 * What a classic queue orders its messages by (BEHAVIOUR Q-ORDER): {@link #NONE} (the default: no
 * order between consumers), {@link #MESSAGE_KEY} or a named {@linkplain #property(String)
 * property}. With a key, each queue-mode group hands out at most one message of a key at a time, in
 * offset order; messages of other keys go on in parallel. A message without the key (a null message
 * key, or no such property) is not ordered.
 *
 * <p>The text form, used by the stored configuration and the command line, is {@code none}, {@code
 * key} or {@code property:<name>} ({@link #parse}, {@link #toString}). Values; thread-safe.
 */
public final class OrderingKey {
  /** The longest property name accepted, in characters. */
  public static final int MAX_PROPERTY_NAME = 255;

  /**
   * Keys up to this many bytes are kept as they are (Base64); longer ones by their SHA-256 digest,
   * so a stored key is at most 44 characters whatever the message carries.
   */
  static final int MAX_RAW_KEY_BYTES = 32;

  /** No order: the default. */
  public static final OrderingKey NONE = new OrderingKey(Kind.NONE, "");

  /** Order by the message key ({@link Message#key()}). */
  public static final OrderingKey MESSAGE_KEY = new OrderingKey(Kind.MESSAGE_KEY, "");

  private enum Kind {
    NONE,
    MESSAGE_KEY,
    PROPERTY
  }

  private final Kind kind;
  private final String property;

  private OrderingKey(Kind kind, String property) {
    this.kind = kind;
    this.property = property;
  }

  /**
   * Order by the value of the message property {@code name}; checked by {@link #validate} (and so
   * by {@link QueueConfig#validate()}).
   */
  public static OrderingKey property(String name) {
    return new OrderingKey(Kind.PROPERTY, Objects.requireNonNull(name, "name"));
  }

  /**
   * The ordering named by {@code text}: {@code none} (or empty), {@code key}, or {@code
   * property:<name>}.
   *
   * @throws InvalidConfigException naming {@code field} if the text is none of these
   */
  public static OrderingKey parse(String field, String text) {
    Objects.requireNonNull(text, field);
    if (text.isEmpty() || text.equals("none")) {
      return NONE;
    }
    if (text.equals("key")) {
      return MESSAGE_KEY;
    }
    if (text.startsWith("property:")) {
      return property(text.substring("property:".length())).validate(field);
    }
    throw new InvalidConfigException(
        field, text, "none, key, or property:<name> (the message property to order by)");
  }

  /**
   * Checks the property name: not empty, at most {@link #MAX_PROPERTY_NAME} characters, and not a
   * name the queue reserves (those are stamped at delivery, so no stored message carries them).
   *
   * @return this
   * @throws InvalidConfigException naming {@code field}
   */
  OrderingKey validate(String field) {
    if (kind != Kind.PROPERTY) {
      return this;
    }
    if (property.isEmpty() || property.length() > MAX_PROPERTY_NAME) {
      throw new InvalidConfigException(
          field,
          toString(),
          "property:<name> with a name of 1 to " + MAX_PROPERTY_NAME + " characters");
    }
    if (MessageProperties.isReserved(property)) {
      throw new InvalidConfigException(
          field,
          toString(),
          "a property a publisher sets; " + property + " is reserved by the queue");
    }
    return this;
  }

  /** Whether this is {@link #NONE}. */
  public boolean isNone() {
    return kind == Kind.NONE;
  }

  /** The property ordered by, or empty unless this is a {@linkplain #property property} order. */
  public String propertyName() {
    return property;
  }

  /**
   * The key {@code m} is ordered by, in the form the stores keep ({@link
   * io.queuebridge.core.store.PendingEntry#orderKey()}): never empty, at most 44 characters, equal
   * for equal keys. Null when this is {@link #NONE} or the message has no such key.
   */
  public String keyOf(Message m) {
    byte[] raw;
    switch (kind) {
      case MESSAGE_KEY -> raw = m.keyUnsafe();
      case PROPERTY -> {
        String v = m.properties().get(property);
        raw = v == null ? null : v.getBytes(StandardCharsets.UTF_8);
      }
      default -> raw = null;
    }
    return raw == null ? null : encode(raw);
  }

  /**
   * {@code raw} as a stored key: {@code b} and the bytes in Base64 when they are short, else {@code
   * h} and their SHA-256 digest in Base64 (neither is ever empty, and the two cannot collide).
   */
  static String encode(byte[] raw) {
    if (raw.length <= MAX_RAW_KEY_BYTES) {
      return tagged('b', raw);
    }
    try {
      return tagged('h', MessageDigest.getInstance("SHA-256").digest(raw));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }

  private static final byte[] ALPHABET =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
          .getBytes(StandardCharsets.US_ASCII);

  /**
   * {@code tag} followed by {@code bytes} in Base64 without padding (RFC 4648's alphabet), built in
   * one buffer: a claim of an ordered queue computes one per message.
   */
  private static String tagged(char tag, byte[] bytes) {
    byte[] out = new byte[1 + (bytes.length * 4 + 2) / 3];
    out[0] = (byte) tag;
    int o = 1;
    int i = 0;
    for (; i + 2 < bytes.length; i += 3) {
      int v = (bytes[i] & 0xFF) << 16 | (bytes[i + 1] & 0xFF) << 8 | (bytes[i + 2] & 0xFF);
      out[o++] = ALPHABET[v >>> 18];
      out[o++] = ALPHABET[(v >>> 12) & 0x3F];
      out[o++] = ALPHABET[(v >>> 6) & 0x3F];
      out[o++] = ALPHABET[v & 0x3F];
    }
    int left = bytes.length - i;
    if (left > 0) {
      int v = (bytes[i] & 0xFF) << 16 | (left == 2 ? (bytes[i + 1] & 0xFF) << 8 : 0);
      out[o++] = ALPHABET[v >>> 18];
      out[o++] = ALPHABET[(v >>> 12) & 0x3F];
      if (left == 2) {
        out[o++] = ALPHABET[(v >>> 6) & 0x3F];
      }
    }
    return new String(out, 0, o, StandardCharsets.ISO_8859_1);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof OrderingKey k && kind == k.kind && property.equals(k.property);
  }

  @Override
  public int hashCode() {
    return kind.hashCode() * 31 + property.hashCode();
  }

  /** The text form: {@code none}, {@code key} or {@code property:<name>}. */
  @Override
  public String toString() {
    return switch (kind) {
      case NONE -> "none";
      case MESSAGE_KEY -> "key";
      case PROPERTY -> "property:" + property;
    };
  }
}
