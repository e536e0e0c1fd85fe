package io.queuebridge.core.message;

import io.queuebridge.core.config.QueueConfig;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A stored message (BEHAVIOUR Q-MSG): id, offset, topic, nullable key and value, ordered headers
 * with repeatable keys and byte values, a timestamp and its type, created-at and expires-at, a
 * state, and string properties for queue metadata.
 *
 * <p>Immutable. Byte arrays are copied when the message is built and when they are read through
 * {@link #key()} and {@link #value()}, so neither a publisher nor a reader can change a stored
 * message. The {@code *Unsafe} accessors skip the copy for serialisers that promise not to write.
 */
public final class Message {
  /** Offset of a message not yet appended. */
  public static final long NO_OFFSET = -1;

  private final String id;
  private final long offset;
  private final String topic;
  private final byte[] key;
  private final byte[] value;
  private final List<Header> headers;
  private final long timestamp;
  private final TimestampType timestampType;
  private final Instant createdAt;
  private final Instant expiresAt;
  private final MessageState state;
  private final Map<String, String> properties;

  private Message(Builder b, boolean copy) {
    this.id = Objects.requireNonNullElse(b.id, "");
    this.offset = b.offset;
    this.topic = Objects.requireNonNullElse(b.topic, "");
    this.key = copy && b.key != null ? b.key.clone() : b.key;
    this.value = copy && b.value != null ? b.value.clone() : b.value;
    if (b.headersShared) {
      this.headers = b.headers;
    } else {
      this.headers = List.copyOf(b.headers);
      b.headers = this.headers; // immutable: the builder copies it if it changes it again
      b.headersShared = true;
    }
    this.timestamp = b.timestamp;
    this.timestampType = b.timestampType;
    this.createdAt = b.createdAt;
    this.expiresAt = b.expiresAt;
    this.state = b.state;
    if (b.propertiesShared) {
      this.properties = b.properties;
    } else {
      // The message takes the builder's map; the builder copies it if it changes it again.
      this.properties = frozen(b.properties);
      b.properties = this.properties;
      b.propertiesShared = true;
    }
  }

  /**
   * {@code properties} as a message keeps them: none as the shared empty map, one as an immutable
   * singleton map (a fraction of the size of a linked hash map and its table; stores that hold
   * their messages in memory keep one per message), more as an unmodifiable view.
   */
  private static Map<String, String> frozen(Map<String, String> properties) {
    if (properties.isEmpty()) {
      return Map.of();
    }
    if (properties.size() == 1) {
      Map.Entry<String, String> only = properties.entrySet().iterator().next();
      return java.util.Collections.singletonMap(only.getKey(), only.getValue());
    }
    return java.util.Collections.unmodifiableMap(properties);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding this message's fields; arrays are shared until {@link Builder#build()}. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.id = id;
    b.offset = offset;
    b.topic = topic;
    b.key = key;
    b.value = value;
    b.headers = headers; // immutable: shared until the builder changes it
    b.headersShared = true;
    b.timestamp = timestamp;
    b.timestampType = timestampType;
    b.createdAt = createdAt;
    b.expiresAt = expiresAt;
    b.state = state;
    b.properties = properties; // unmodifiable: shared until the builder changes it
    b.propertiesShared = true;
    return b;
  }

  /** This message with another offset; no bytes are copied. */
  public Message withOffset(long newOffset) {
    return newOffset == offset ? this : new Message(this, newOffset);
  }

  /** A copy of {@code m} at {@code newOffset}, sharing every (immutable) field. */
  private Message(Message m, long newOffset) {
    this.id = m.id;
    this.offset = newOffset;
    this.topic = m.topic;
    this.key = m.key;
    this.value = m.value;
    this.headers = m.headers;
    this.timestamp = m.timestamp;
    this.timestampType = m.timestampType;
    this.createdAt = m.createdAt;
    this.expiresAt = m.expiresAt;
    this.state = m.state;
    this.properties = m.properties;
  }

  /** The publisher-side id; empty when none was assigned. */
  public String id() {
    return id;
  }

  /** Log offset assigned by the store, or {@link #NO_OFFSET} before append. */
  public long offset() {
    return offset;
  }

  /** The topic the message was published or captured on (the "source topic"). */
  public String topic() {
    return topic;
  }

  /** A copy of the key, or null when the message has none. */
  public byte[] key() {
    return key == null ? null : key.clone();
  }

  /** A copy of the value, or null for a tombstone. */
  public byte[] value() {
    return value == null ? null : value.clone();
  }

  /** The key without copying; callers must not modify it. */
  public byte[] keyUnsafe() {
    return key;
  }

  /** The value without copying; callers must not modify it. */
  public byte[] valueUnsafe() {
    return value;
  }

  /** Ordered headers; keys may repeat. */
  public List<Header> headers() {
    return headers;
  }

  /** The record timestamp in epoch milliseconds, or -1 when {@link TimestampType#NO_TIMESTAMP}. */
  public long timestamp() {
    return timestamp;
  }

  public TimestampType timestampType() {
    return timestampType;
  }

  /** When the queue accepted the message; null before append by stores that stamp it. */
  public Instant createdAt() {
    return createdAt;
  }

  /** When the message expires; null = never. */
  public Instant expiresAt() {
    return expiresAt;
  }

  /** Whether the message has an expiry and {@code now} is after it. */
  public boolean isExpired(Instant now) {
    return expiresAt != null && now.isAfter(expiresAt);
  }

  /**
   * The time before which no consumer of a classic queue is handed the message (BEHAVIOUR Q-DELAY),
   * or null when it was published without a delay: the {@link MessageProperties#DELIVER_AT}
   * property, ISO-8601. A value that does not parse (written by hand before the name was reserved)
   * counts as none.
   */
  public Instant deliverAt() {
    String due = properties.isEmpty() ? null : properties.get(MessageProperties.DELIVER_AT);
    if (due == null) {
      return null;
    }
    try {
      return Instant.parse(due);
    } catch (java.time.format.DateTimeParseException notATime) {
      return null;
    }
  }

  public MessageState state() {
    return state;
  }

  /** String properties (queue metadata); unmodifiable, insertion-ordered. */
  public Map<String, String> properties() {
    return properties;
  }

  /**
   * The size counted against {@link QueueConfig#maxMessageSize()}: value + key + header keys and
   * values, in bytes (BEHAVIOUR L-LIMITS). Header keys are counted as UTF-16 code units × 1, an
   * approximation that is exact for ASCII keys.
   */
  public long size() {
    long n = (value == null ? 0 : value.length) + (key == null ? 0 : key.length);
    for (Header h : headers) {
      n += h.key().length() + Math.max(0, h.valueLength());
    }
    return n;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    return o instanceof Message m
        && offset == m.offset
        && timestamp == m.timestamp
        && id.equals(m.id)
        && topic.equals(m.topic)
        && Arrays.equals(key, m.key)
        && Arrays.equals(value, m.value)
        && headers.equals(m.headers)
        && timestampType == m.timestampType
        && Objects.equals(createdAt, m.createdAt)
        && Objects.equals(expiresAt, m.expiresAt)
        && state == m.state
        && properties.equals(m.properties);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, offset, topic, Arrays.hashCode(value));
  }

  @Override
  public String toString() {
    return "Message{offset="
        + offset
        + ", id="
        + id
        + ", topic="
        + topic
        + ", key="
        + (key == null ? "null" : key.length + "B")
        + ", value="
        + (value == null ? "null" : value.length + "B")
        + ", headers="
        + headers
        + ", timestamp="
        + timestamp
        + "/"
        + timestampType
        + ", createdAt="
        + createdAt
        + ", expiresAt="
        + expiresAt
        + ", state="
        + state
        + ", properties="
        + properties
        + "}";
  }

  /** Builds a {@link Message}. Not thread-safe. */
  public static final class Builder {
    private String id = "";
    private long offset = NO_OFFSET;
    private String topic = "";
    private byte[] key;
    private byte[] value;
    private List<Header> headers = List.of();
    // True while headers / properties are a built message's immutable collections (toBuilder):
    // they are copied only when this builder changes them, so restamping a message copies nothing.
    private boolean headersShared = true;
    private long timestamp = -1;
    private TimestampType timestampType = TimestampType.NO_TIMESTAMP;
    private Instant createdAt;
    private Instant expiresAt;
    private MessageState state = MessageState.QUEUED;
    private Map<String, String> properties = Map.of();
    private boolean propertiesShared = true;

    private Builder() {}

    private List<Header> ownHeaders() {
      if (headersShared) {
        headers = new ArrayList<>(headers);
        headersShared = false;
      }
      return headers;
    }

    private Map<String, String> ownProperties() {
      if (propertiesShared) {
        properties = new LinkedHashMap<>(properties);
        propertiesShared = false;
      }
      return properties;
    }

    public Builder id(String id) {
      this.id = id;
      return this;
    }

    public Builder offset(long offset) {
      this.offset = offset;
      return this;
    }

    public Builder topic(String topic) {
      this.topic = topic;
      return this;
    }

    /** The key; copied at {@link #build()}. Null = no key. */
    public Builder key(byte[] key) {
      this.key = key;
      return this;
    }

    /** The value; copied at {@link #build()}. Null = tombstone. */
    public Builder value(byte[] value) {
      this.value = value;
      return this;
    }

    public Builder header(Header header) {
      ownHeaders().add(Objects.requireNonNull(header, "header"));
      return this;
    }

    public Builder header(String key, byte[] value) {
      return header(Header.of(key, value));
    }

    public Builder headers(List<Header> headers) {
      List<Header> own = ownHeaders();
      own.clear();
      own.addAll(headers);
      return this;
    }

    /** Record timestamp (epoch ms) and its type. */
    public Builder timestamp(long timestamp, TimestampType type) {
      this.timestamp = timestamp;
      this.timestampType = Objects.requireNonNull(type, "timestampType");
      return this;
    }

    public Builder createdAt(Instant createdAt) {
      this.createdAt = createdAt;
      return this;
    }

    /** Expiry; null = never. */
    public Builder expiresAt(Instant expiresAt) {
      this.expiresAt = expiresAt;
      return this;
    }

    public Builder state(MessageState state) {
      this.state = Objects.requireNonNull(state, "state");
      return this;
    }

    public Builder property(String key, String value) {
      ownProperties().put(Objects.requireNonNull(key, "property key"), value);
      return this;
    }

    public Builder properties(Map<String, String> properties) {
      if (propertiesShared) {
        // replaced, not changed: a copy of the shared map would be thrown away at once
        this.properties = new LinkedHashMap<>(properties);
        propertiesShared = false;
      } else {
        this.properties.clear();
        this.properties.putAll(properties);
      }
      return this;
    }

    /** Builds the message, copying key and value so later changes to the arrays are invisible. */
    public Message build() {
      return new Message(this, true);
    }

    /**
     * Builds without copying key and value. For stores and codecs that have just allocated the
     * arrays themselves and hand over ownership.
     */
    public Message buildOwned() {
      return new Message(this, false);
    }
  }
}
