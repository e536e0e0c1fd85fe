package io.queuebridge.core.group;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.internal.group.GroupCoordinator;
import java.time.Duration;
import java.util.Objects;

/**
 * Tuning of a {@link GroupCoordinator} (BEHAVIOUR M-CONFIG). Immutable; change a value with the
 * {@code with*} methods, which validate like the constructor.
 *
 * @param visibilityTimeout how long a claim hides a message from the group; {@link Duration#ZERO}
 *     (the default) uses each queue's {@code deliveryTimeout} (BEHAVIOUR L-LIMITS)
 * @param maxDeliveryCount deliveries after which a message is poison and dead-lettered; {@code >=
 *     1}; default 5
 * @param claimBatchSize the claim limit when a caller passes {@code <= 0} and the queue sets no
 *     {@code batchSize} of its own ({@link #claimBatchSize(QueueConfig)}); {@code >= 1}; default 10
 * @param autoCommitInterval the stream auto-commit throttle per (queue, group); zero commits every
 *     cursor move; default 5 s; negative is refused
 * @param maxPelSize pending entries per group above which new claims from the cursor are refused;
 *     zero = unlimited; default 100 000
 * @param dlqTopicPrefix the dead-letter queue name prefix; null or empty means {@code $dlq/}
 * @param consumerTimeout a member without a heartbeat for this long is removed, unless its queue
 *     sets a {@code heartbeatTimeout} of its own ({@link #consumerTimeout(QueueConfig)}); {@code >
 *     0}; default 2 min
 */
public record GroupSettings(
    Duration visibilityTimeout,
    int maxDeliveryCount,
    int claimBatchSize,
    Duration autoCommitInterval,
    int maxPelSize,
    String dlqTopicPrefix,
    Duration consumerTimeout) {

  /** The default dead-letter prefix. */
  public static final String DEFAULT_DLQ_PREFIX = "$dlq/";

  /** The defaults of BEHAVIOUR M-CONFIG, with the visibility timeout taken from each queue. */
  public static final GroupSettings DEFAULTS =
      new GroupSettings(
          Duration.ZERO,
          5,
          10,
          Duration.ofSeconds(5),
          100_000,
          DEFAULT_DLQ_PREFIX,
          Duration.ofMinutes(2));

  /**
   * @throws InvalidConfigException naming the first bad setting, its value and what was expected
   */
  public GroupSettings {
    Objects.requireNonNull(visibilityTimeout, "visibilityTimeout");
    Objects.requireNonNull(autoCommitInterval, "autoCommitInterval");
    Objects.requireNonNull(consumerTimeout, "consumerTimeout");
    if (visibilityTimeout.isNegative()) {
      throw new InvalidConfigException(
          "visibilityTimeout", visibilityTimeout, ">= 0 (0 = the queue's deliveryTimeout)");
    }
    if (maxDeliveryCount < 1) {
      throw new InvalidConfigException("maxDeliveryCount", maxDeliveryCount, ">= 1");
    }
    if (claimBatchSize < 1) {
      throw new InvalidConfigException("claimBatchSize", claimBatchSize, ">= 1");
    }
    if (autoCommitInterval.isNegative()) {
      throw new InvalidConfigException(
          "autoCommitInterval", autoCommitInterval, ">= 0 (0 = commit every cursor move)");
    }
    if (maxPelSize < 0) {
      throw new InvalidConfigException("maxPelSize", maxPelSize, ">= 0 (0 = unlimited)");
    }
    if (dlqTopicPrefix == null || dlqTopicPrefix.isEmpty()) {
      dlqTopicPrefix = DEFAULT_DLQ_PREFIX;
    }
    if (consumerTimeout.compareTo(Duration.ZERO) <= 0) {
      throw new InvalidConfigException("consumerTimeout", consumerTimeout, "> 0");
    }
  }

  /**
   * The claim limit of a claim or stream read of {@code queue} that asks for the default (a limit
   * {@code <= 0}): the queue's {@link QueueConfig#batchSize() batchSize} when it sets one, else
   * {@link #claimBatchSize()} (BEHAVIOUR Q-CLAIM).
   */
  public int claimBatchSize(QueueConfig queue) {
    return queue.batchSize() > 0 ? queue.batchSize() : claimBatchSize;
  }

  /**
   * How long a member of a group of {@code queue} may go without a heartbeat before it is removed:
   * the queue's {@link QueueConfig#heartbeatTimeout() heartbeatTimeout} when it sets one, else
   * {@link #consumerTimeout()} (BEHAVIOUR Q-HEARTBEAT). A client that heartbeats by itself should
   * do so well within it.
   */
  public Duration consumerTimeout(QueueConfig queue) {
    Duration own = queue.heartbeatTimeout();
    return own.compareTo(Duration.ZERO) > 0 ? own : consumerTimeout;
  }

  public GroupSettings withVisibilityTimeout(Duration value) {
    return new GroupSettings(
        value,
        maxDeliveryCount,
        claimBatchSize,
        autoCommitInterval,
        maxPelSize,
        dlqTopicPrefix,
        consumerTimeout);
  }

  public GroupSettings withMaxDeliveryCount(int value) {
    return new GroupSettings(
        visibilityTimeout,
        value,
        claimBatchSize,
        autoCommitInterval,
        maxPelSize,
        dlqTopicPrefix,
        consumerTimeout);
  }

  public GroupSettings withClaimBatchSize(int value) {
    return new GroupSettings(
        visibilityTimeout,
        maxDeliveryCount,
        value,
        autoCommitInterval,
        maxPelSize,
        dlqTopicPrefix,
        consumerTimeout);
  }

  public GroupSettings withAutoCommitInterval(Duration value) {
    return new GroupSettings(
        visibilityTimeout,
        maxDeliveryCount,
        claimBatchSize,
        value,
        maxPelSize,
        dlqTopicPrefix,
        consumerTimeout);
  }

  public GroupSettings withMaxPelSize(int value) {
    return new GroupSettings(
        visibilityTimeout,
        maxDeliveryCount,
        claimBatchSize,
        autoCommitInterval,
        value,
        dlqTopicPrefix,
        consumerTimeout);
  }

  public GroupSettings withDlqTopicPrefix(String value) {
    return new GroupSettings(
        visibilityTimeout,
        maxDeliveryCount,
        claimBatchSize,
        autoCommitInterval,
        maxPelSize,
        value,
        consumerTimeout);
  }

  public GroupSettings withConsumerTimeout(Duration value) {
    return new GroupSettings(
        visibilityTimeout,
        maxDeliveryCount,
        claimBatchSize,
        autoCommitInterval,
        maxPelSize,
        dlqTopicPrefix,
        value);
  }
}
