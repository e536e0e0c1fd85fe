package io.queuebridge.core.message;

import java.util.Arrays;
import java.util.Objects;

/**
 * One message header: a string key and a byte-array value (Kafka's header model). Keys may repeat
 * within a message and order is kept. The value may be null, which is distinct from empty.
 * Immutable: the value is copied in and out.
 */
public final class Header {
  private final String key;
  private final byte[] value;

  private Header(String key, byte[] value) {
    this.key = Objects.requireNonNull(key, "header key");
    this.value = value;
  }

  /** A header holding a copy of {@code value}. */
  public static Header of(String key, byte[] value) {
    return new Header(key, value == null ? null : value.clone());
  }

  /** A header whose value is the UTF-8 bytes of {@code value}. */
  public static Header of(String key, String value) {
    return new Header(
        key, value == null ? null : value.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  public String key() {
    return key;
  }

  /** A copy of the value, or null. */
  public byte[] value() {
    return value == null ? null : value.clone();
  }

  /** Value length in bytes; -1 for null. */
  public int valueLength() {
    return value == null ? -1 : value.length;
  }

  /**
   * The value without copying. Callers must not modify the array; for stores and codecs that
   * serialise it.
   */
  public byte[] valueUnsafe() {
    return value;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Header h && key.equals(h.key) && Arrays.equals(value, h.value);
  }

  @Override
  public int hashCode() {
    return 31 * key.hashCode() + Arrays.hashCode(value);
  }

  @Override
  public String toString() {
    return key + "=" + (value == null ? "null" : value.length + "B");
  }
}
