package io.queuebridge.core;

import io.queuebridge.core.message.MessageProperties;
import java.util.Objects;
import java.util.Optional;

/**
 * What a dead-letter redrive ({@link QueueManager#redriveDeadLetters}) moves: from which
 * dead-letter queue, to which queue, how many, how fast, and whether for real. Immutable; built
 * with {@link #builder(String)}.
 */
public final class RedriveRequest {
  /** The largest batch a redrive appends with one barrier. */
  public static final int MAX_BATCH_SIZE = 10_000;

  private final String deadLetterQueue;
  private final String target;
  private final long maxMessages;
  private final double ratePerSecond;
  private final int batchSize;
  private final boolean dryRun;

  private RedriveRequest(Builder b) {
    this.deadLetterQueue = b.deadLetterQueue;
    this.target = b.target;
    this.maxMessages = b.maxMessages;
    this.ratePerSecond = b.ratePerSecond;
    this.batchSize = b.batchSize;
    this.dryRun = b.dryRun;
  }

  /** A redrive of every message of {@code deadLetterQueue} to its origin queue. */
  public static Builder builder(String deadLetterQueue) {
    return new Builder(deadLetterQueue);
  }

  /** The dead-letter queue read from. */
  public String deadLetterQueue() {
    return deadLetterQueue;
  }

  /**
   * The queue every message goes to; empty: each goes back to the queue named by its {@link
   * MessageProperties#DLQ_ORIGINAL_QUEUE} property.
   */
  public Optional<String> target() {
    return Optional.ofNullable(target);
  }

  /** At most this many messages are looked at (moved, or found moved before). */
  public long maxMessages() {
    return maxMessages;
  }

  /** Messages moved per second at most; 0 for no limit. */
  public double ratePerSecond() {
    return ratePerSecond;
  }

  /** Messages read and appended per step (one barrier, one checkpoint, one DLQ truncation). */
  public int batchSize() {
    return batchSize;
  }

  /** Whether to report what would move and change nothing. */
  public boolean dryRun() {
    return dryRun;
  }

  @Override
  public String toString() {
    return "RedriveRequest{from="
        + deadLetterQueue
        + ", to="
        + (target == null ? "<origin>" : target)
        + ", max="
        + maxMessages
        + ", rate="
        + ratePerSecond
        + ", batch="
        + batchSize
        + ", dryRun="
        + dryRun
        + "}";
  }

  /** Builds a {@link RedriveRequest}; every setter checks its argument. */
  public static final class Builder {
    private final String deadLetterQueue;
    private String target;
    private long maxMessages = Long.MAX_VALUE;
    private double ratePerSecond;
    private int batchSize = 100;
    private boolean dryRun;

    private Builder(String deadLetterQueue) {
      this.deadLetterQueue = Objects.requireNonNull(deadLetterQueue, "deadLetterQueue");
      if (deadLetterQueue.isEmpty()) {
        throw new IllegalArgumentException("dead-letter queue name is empty (expected a queue)");
      }
    }

    /** Sends every message to {@code queue} instead of its origin. */
    public Builder target(String queue) {
      Objects.requireNonNull(queue, "queue");
      if (queue.isEmpty()) {
        throw new IllegalArgumentException("redrive target is empty (expected a queue name)");
      }
      this.target = queue;
      return this;
    }

    /** Looks at no more than {@code max} messages ({@code > 0}). */
    public Builder maxMessages(long max) {
      if (max <= 0) {
        throw new IllegalArgumentException(
            "redrive max messages is " + max + " (expected a count > 0)");
      }
      this.maxMessages = max;
      return this;
    }

    /** Moves no more than {@code perSecond} messages a second ({@code > 0}; 0 = no limit). */
    public Builder ratePerSecond(double perSecond) {
      if (!(perSecond >= 0) || Double.isInfinite(perSecond)) {
        throw new IllegalArgumentException(
            "redrive rate is " + perSecond + " messages/s (expected a finite number >= 0)");
      }
      this.ratePerSecond = perSecond;
      return this;
    }

    /** Messages per step, 1 to {@link #MAX_BATCH_SIZE}; default 100. */
    public Builder batchSize(int size) {
      if (size < 1 || size > MAX_BATCH_SIZE) {
        throw new IllegalArgumentException(
            "redrive batch size is " + size + " (expected 1 to " + MAX_BATCH_SIZE + ")");
      }
      this.batchSize = size;
      return this;
    }

    /** Reports what would move without changing anything. */
    public Builder dryRun(boolean dryRun) {
      this.dryRun = dryRun;
      return this;
    }

    public RedriveRequest build() {
      return new RedriveRequest(this);
    }
  }
}
