package io.queuebridge.core.message;

import io.queuebridge.core.QueueManager;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a publisher hands to {@link QueueManager}: a topic, nullable key and value, ordered headers,
 * string properties, an optional record timestamp, the publishing client's id, an optional
 * deduplication id (BEHAVIOUR Q-DEDUP) and an optional due time, absolute or as a delay (BEHAVIOUR
 * Q-DELAY).
 *
 * <p>Immutable; arrays and maps are copied when built, so the caller may reuse its buffers
 * (BEHAVIOUR Q-MSG). {@link Builder#buildOwned()} skips the copy of key and value for a caller that
 * hands the arrays over.
 */
public final class PublishRequest {
  /**
   * The longest {@link Builder#deduplicationId deduplication id} accepted, in UTF-8 bytes
   * (BEHAVIOUR Q-DEDUP).
   */
  public static final int MAX_DEDUPLICATION_ID_BYTES = 128;

  private final String topic;
  private final String deduplicationId;
  private final Message payload;
  private final String clientId;
  private final Instant deliverAt;
  private final Duration delay;
  // Looked at once here, on the publisher's thread, instead of on every append of the request.
  private final boolean reservedProperty;

  private PublishRequest(Builder b, boolean copy) {
    this.topic = Objects.requireNonNull(b.topic, "topic");
    this.clientId = Objects.requireNonNullElse(b.clientId, "");
    this.deduplicationId = b.deduplicationId;
    this.deliverAt = b.deliverAt;
    this.delay = b.delay;
    Message.Builder m = b.message.topic(b.topic);
    this.payload = copy ? m.build() : m.buildOwned();
    this.reservedProperty = b.reservedProperty;
  }

  public static Builder builder(String topic) {
    return new Builder(topic);
  }

  /** A request with only a topic and a value. */
  public static PublishRequest of(String topic, byte[] value) {
    return builder(topic).value(value).build();
  }

  public String topic() {
    return topic;
  }

  public String clientId() {
    return clientId;
  }

  /**
   * The deduplication id (BEHAVIOUR Q-DEDUP), or the empty string when the request has none. A
   * queue whose {@link io.queuebridge.core.config.QueueConfig#dedupWindow() dedupWindow} is on
   * stores a second request with the same id within the window as nothing and answers the first
   * one's offset; the id is stored with the message as {@link MessageProperties#DEDUP_ID}.
   */
  public String deduplicationId() {
    return deduplicationId;
  }

  /** A copy of the key, or null. */
  public byte[] key() {
    return payload.key();
  }

  /** A copy of the value, or null (a tombstone). */
  public byte[] value() {
    return payload.value();
  }

  public List<Header> headers() {
    return payload.headers();
  }

  public Map<String, String> properties() {
    return payload.properties();
  }

  public long timestamp() {
    return payload.timestamp();
  }

  public TimestampType timestampType() {
    return payload.timestampType();
  }

  /** Size counted against a queue's max message size (see {@link Message#size()}). */
  public long size() {
    return payload.size();
  }

  /**
   * Whether a property key is one of the {@link MessageProperties reserved names}: the manager
   * drops such properties at publish, so the request cannot be stored as it stands.
   */
  public boolean hasReservedProperty() {
    return reservedProperty;
  }

  /**
   * The absolute due time (BEHAVIOUR Q-DELAY) set with {@link Builder#deliverAt}, or null. At most
   * one of this and {@link #delay()} is set.
   */
  public Instant deliverAt() {
    return deliverAt;
  }

  /**
   * The delay (BEHAVIOUR Q-DELAY) set with {@link Builder#delay}, or null: the manager adds it to
   * its clock's time of the publish.
   */
  public Duration delay() {
    return delay;
  }

  /** Whether the request asks for a delayed delivery (a {@link #deliverAt} or a {@link #delay}). */
  public boolean isDelayed() {
    return deliverAt != null || delay != null;
  }

  /**
   * The request's content as an un-appended message (no id, offset or creation time): for the
   * manager to stamp and append. No bytes are copied.
   */
  public Message asMessage() {
    return payload;
  }

  @Override
  public String toString() {
    return "PublishRequest{topic="
        + topic
        + ", clientId="
        + clientId
        + (deduplicationId.isEmpty() ? "" : ", deduplicationId=" + deduplicationId)
        + (deliverAt == null ? "" : ", deliverAt=" + deliverAt)
        + (delay == null ? "" : ", delay=" + delay)
        + ", "
        + payload
        + "}";
  }

  /** Builds a {@link PublishRequest}. Not thread-safe. */
  public static final class Builder {
    private final String topic;
    private String clientId = "";
    private String deduplicationId = "";
    private Instant deliverAt;
    private Duration delay;
    // Headers and properties live in the message builder, which copies them only when needed.
    private final Message.Builder message = Message.builder();
    // Whether a property set so far has a reserved name: known as each is set, so building the
    // request does not look at every property again.
    private boolean reservedProperty;

    private Builder(String topic) {
      this.topic = topic;
    }

    public Builder key(byte[] key) {
      message.key(key);
      return this;
    }

    public Builder value(byte[] value) {
      message.value(value);
      return this;
    }

    public Builder header(String key, byte[] value) {
      message.header(key, value);
      return this;
    }

    public Builder headers(List<Header> headers) {
      message.headers(headers);
      return this;
    }

    public Builder property(String key, String value) {
      message.property(key, value);
      reservedProperty |= MessageProperties.isReserved(key);
      return this;
    }

    /** Replaces every property set before with {@code properties}. */
    public Builder properties(Map<String, String> properties) {
      boolean reserved = false;
      for (String key : properties.keySet()) {
        reserved |= MessageProperties.isReserved(Objects.requireNonNull(key, "property key"));
      }
      message.properties(properties);
      reservedProperty = reserved;
      return this;
    }

    public Builder timestamp(long timestamp, TimestampType type) {
      message.timestamp(timestamp, type);
      return this;
    }

    public Builder clientId(String clientId) {
      this.clientId = clientId;
      return this;
    }

    /**
     * The request's deduplication id (BEHAVIOUR Q-DEDUP): 1 to {@link #MAX_DEDUPLICATION_ID_BYTES}
     * UTF-8 bytes; null clears it.
     *
     * @throws IllegalArgumentException naming the field, the id and the limit if it is empty or
     *     longer
     */
    public Builder deduplicationId(String deduplicationId) {
      if (deduplicationId == null) {
        this.deduplicationId = "";
        return this;
      }
      int bytes = deduplicationId.getBytes(StandardCharsets.UTF_8).length;
      if (bytes == 0 || bytes > MAX_DEDUPLICATION_ID_BYTES) {
        String shown =
            deduplicationId.length() > 40
                ? deduplicationId.substring(0, 40) + "..." // the id itself may be huge
                : deduplicationId;
        throw new IllegalArgumentException(
            "deduplicationId '"
                + shown
                + "' is "
                + bytes
                + " UTF-8 bytes; expected 1 to "
                + MAX_DEDUPLICATION_ID_BYTES
                + " (PublishRequest.MAX_DEDUPLICATION_ID_BYTES)");
      }
      this.deduplicationId = deduplicationId;
      return this;
    }

    /**
     * Delivers the message no earlier than {@code deliverAt} (BEHAVIOUR Q-DELAY): a classic queue
     * hands it to no consumer before then; a stream's readers see it at once, in offset order, with
     * the time as its {@link MessageProperties#DELIVER_AT} property. A time at or before the
     * publish means no delay. The queue refuses a time further ahead than its {@link
     * io.queuebridge.core.config.QueueConfig#maxDelay() maxDelay}. Replaces a {@link #delay} set
     * earlier; null clears it.
     */
    public Builder deliverAt(Instant deliverAt) {
      this.deliverAt = deliverAt;
      this.delay = null;
      return this;
    }

    /**
     * Delivers the message no earlier than {@code delay} after the publish, by the manager's clock
     * (BEHAVIOUR Q-DELAY); see {@link #deliverAt}. Zero means no delay. Replaces a {@link
     * #deliverAt} set earlier; null clears it.
     *
     * @throws IllegalArgumentException if {@code delay} is negative
     */
    public Builder delay(Duration delay) {
      if (delay != null && delay.isNegative()) {
        throw new IllegalArgumentException(
            "delay " + delay + " is negative; expected PT0S (none) or more");
      }
      this.delay = delay;
      this.deliverAt = null;
      return this;
    }

    /** Builds the request, copying key and value so later changes to the arrays are invisible. */
    public PublishRequest build() {
      return new PublishRequest(this, true);
    }

    /**
     * Builds the request without copying key and value: the caller hands the arrays over and must
     * not change them afterwards (a connector passing on arrays its converter has just allocated).
     * Headers and properties are taken as {@link #build()} takes them.
     */
    public PublishRequest buildOwned() {
      return new PublishRequest(this, false);
    }
  }
}
