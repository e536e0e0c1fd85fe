package io.queuebridge.core.job;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A job: an id, a job name, the queue it runs on, an opaque payload, string metadata and the number
 * of delivery attempts so far (BEHAVIOUR J-DRIVER).
 *
 * <p>Immutable and thread-safe. The payload and metadata are copied when the message is built, and
 * the payload again when it is read, so neither the dispatcher nor a handler can change a job
 * another party sees. A null payload is kept as an empty one.
 */
public final class JobMessage {
  private static final byte[] EMPTY = new byte[0];

  private final String id;
  private final String name;
  private final String queue;
  private final byte[] payload;
  private final Map<String, String> metadata;
  private final int attempts;

  private JobMessage(Builder b) {
    this.id = b.id;
    this.name = b.name;
    this.queue = b.queue;
    this.payload = b.payload == null || b.payload.length == 0 ? EMPTY : b.payload.clone();
    this.metadata =
        b.metadata.isEmpty()
            ? Map.of()
            : Collections.unmodifiableMap(new LinkedHashMap<>(b.metadata));
    this.attempts = b.attempts;
  }

  private JobMessage(JobMessage m, String id, int attempts) {
    this.id = id;
    this.name = m.name;
    this.queue = m.queue;
    this.payload = m.payload;
    this.metadata = m.metadata;
    this.attempts = attempts;
  }

  /** A builder for a job on {@code queue} (validated at dispatch, not here). */
  public static Builder builder(String queue) {
    return new Builder().queue(queue);
  }

  /** A job with a name and a payload and nothing else. */
  public static JobMessage of(String queue, String name, byte[] payload) {
    return builder(queue).name(name).payload(payload).build();
  }

  /** A builder holding this message's fields. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.id = id;
    b.name = name;
    b.queue = queue;
    b.payload = payload;
    b.metadata.putAll(metadata);
    b.attempts = attempts;
    return b;
  }

  /** The job id; empty before dispatch assigns one. */
  public String id() {
    return id;
  }

  /** The job name (what to run); may be empty. */
  public String name() {
    return name;
  }

  /** The queue the job runs on. */
  public String queue() {
    return queue;
  }

  /** A copy of the payload; never null. */
  public byte[] payload() {
    return payload.clone();
  }

  /** String metadata; unmodifiable, insertion-ordered. */
  public Map<String, String> metadata() {
    return metadata;
  }

  /** How many times the job has been handed to a handler, this delivery included. */
  public int attempts() {
    return attempts;
  }

  JobMessage withId(String newId) {
    return new JobMessage(this, newId, attempts);
  }

  JobMessage withAttempts(int newAttempts) {
    return new JobMessage(this, id, newAttempts);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof JobMessage m
        && attempts == m.attempts
        && id.equals(m.id)
        && name.equals(m.name)
        && queue.equals(m.queue)
        && Arrays.equals(payload, m.payload)
        && metadata.equals(m.metadata);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, name, queue, Arrays.hashCode(payload), metadata, attempts);
  }

  @Override
  public String toString() {
    return "JobMessage{id="
        + id
        + ", name="
        + name
        + ", queue="
        + queue
        + ", payload="
        + payload.length
        + "B, metadata="
        + metadata
        + ", attempts="
        + attempts
        + "}";
  }

  /** Builds a {@link JobMessage}. Not thread-safe. */
  public static final class Builder {
    private String id = "";
    private String name = "";
    private String queue = "";
    private byte[] payload;
    private final Map<String, String> metadata = new LinkedHashMap<>();
    private int attempts;

    private Builder() {}

    /** The job id; empty (the default) lets dispatch generate one. Null means empty. */
    public Builder id(String id) {
      this.id = Objects.requireNonNullElse(id, "");
      return this;
    }

    /** The job name; null means empty. */
    public Builder name(String name) {
      this.name = Objects.requireNonNullElse(name, "");
      return this;
    }

    /** The queue; null means empty (refused at dispatch). */
    public Builder queue(String queue) {
      this.queue = Objects.requireNonNullElse(queue, "");
      return this;
    }

    /** The payload; copied at {@link #build()}. Null means empty. */
    public Builder payload(byte[] payload) {
      this.payload = payload;
      return this;
    }

    /**
     * Adds one metadata entry.
     *
     * @throws NullPointerException if the key or value is null
     */
    public Builder metadata(String key, String value) {
      metadata.put(
          Objects.requireNonNull(key, "metadata key"),
          Objects.requireNonNull(value, () -> "metadata value of " + key));
      return this;
    }

    /**
     * Replaces the metadata with a copy of {@code entries}.
     *
     * @throws NullPointerException if a key or value is null
     */
    public Builder metadata(Map<String, String> entries) {
      metadata.clear();
      entries.forEach(this::metadata);
      return this;
    }

    /** The attempts count; ignored by dispatch, which always starts a job at zero. */
    public Builder attempts(int attempts) {
      this.attempts = attempts;
      return this;
    }

    /** Builds the message, copying payload and metadata. */
    public JobMessage build() {
      return new JobMessage(this);
    }
  }
}
