package io.queuebridge.core;

import io.queuebridge.core.config.AckDurability;
import io.queuebridge.core.config.Names;
import io.queuebridge.core.config.PeriodicScheduler;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.group.ConsumerRemovedListener;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The immutable configuration of a {@link QueueManager} (BEHAVIOUR M-CONFIG). Build one with {@link
 * #builder()}; {@link Builder#build()} checks every field and names the first bad one, its value
 * and what was expected. Thread-safe.
 *
 * <p><b>Visibility</b> (BEHAVIOUR L-LIMITS): a queue's {@code deliveryTimeout} is its visibility
 * timeout. The manager's {@code visibilityTimeout} defaults to zero, which defers to each queue; a
 * positive value is an explicit manager-wide override of every queue's setting.
 *
 * <p><b>Defaults that replace a non-positive value</b> also apply to {@code deliveryWorkers} and
 * {@code deliveryDrainTimeout}.
 *
 * <p><b>Defaults that replace a non-positive value</b> (BEHAVIOUR M-CONFIG): {@code
 * captureWorkers}, {@code captureQueueDepth} and {@code captureDrainTimeout} at or below zero mean
 * the default; an empty {@code dlqTopicPrefix} means {@code $dlq/}; an {@code ackDurability} of
 * {@link AckDurability#DEFAULT} means {@link AckDurability#BUFFERED}.
 *
 * <p><b>Protected contracts</b> are kept as given and not checked here: an invalid contract does
 * not fail construction of the manager either; the error is remembered and surfaces from {@link
 * QueueManager#validateProtectedQueueContracts()} and {@link QueueManager#start()} (BEHAVIOUR
 * M-START).
 */
public final class QueueManagerConfig {
  /**
   * Zero: each queue's {@code deliveryTimeout} is its visibility timeout (BEHAVIOUR L-LIMITS). A
   * manager-wide non-zero default would override every queue's own setting.
   */
  public static final Duration DEFAULT_VISIBILITY_TIMEOUT = Duration.ZERO;

  public static final int DEFAULT_MAX_DELIVERY_COUNT = 5;
  public static final int DEFAULT_CLAIM_BATCH_SIZE = 10;
  public static final Duration DEFAULT_AUTO_COMMIT_INTERVAL = Duration.ofSeconds(5);
  public static final int DEFAULT_DELIVERY_BATCH_SIZE = 100;
  public static final Duration DEFAULT_CONSUMER_TIMEOUT = Duration.ofMinutes(2);
  public static final String DEFAULT_DLQ_TOPIC_PREFIX = "$dlq/";
  public static final int DEFAULT_MAX_PEL_SIZE = 100_000;
  public static final Duration DEFAULT_RETENTION_CHECK_INTERVAL = Duration.ofMinutes(5);
  public static final int DEFAULT_CAPTURE_WORKERS = 4;
  public static final int DEFAULT_CAPTURE_QUEUE_DEPTH = 1024;
  public static final Duration DEFAULT_CAPTURE_DRAIN_TIMEOUT = Duration.ofSeconds(5);
  public static final AckDurability DEFAULT_ACK_DURABILITY = AckDurability.BUFFERED;
  public static final int DEFAULT_DELIVERY_WORKERS = 4;
  public static final Duration DEFAULT_DELIVERY_DRAIN_TIMEOUT = Duration.ofSeconds(5);

  /** The most capture lanes, each a thread of its own (BEHAVIOUR M-CONFIG). */
  public static final int MAX_CAPTURE_WORKERS = 1024;

  /** The most jobs one capture lane holds; its buffer is allocated whole (BEHAVIOUR M-CONFIG). */
  public static final int MAX_CAPTURE_QUEUE_DEPTH = 1 << 20;

  private final Duration visibilityTimeout;
  private final int maxDeliveryCount;
  private final int claimBatchSize;
  private final Duration autoCommitInterval;
  private final int deliveryBatchSize;
  private final Duration consumerTimeout;
  private final String dlqTopicPrefix;
  private final int maxPelSize;
  private final Duration retentionCheckInterval;
  private final int captureWorkers;
  private final int captureQueueDepth;
  private final Duration captureDrainTimeout;
  private final AckDurability ackDurability;
  private final List<QueueConfig> queueConfigs;
  private final List<QueueConfig> protectedQueueContracts;
  private final Clock clock;
  private final int deliveryWorkers;
  private final Duration deliveryDrainTimeout;
  private final PeriodicScheduler scheduler;
  private final ConsumerRemovedListener onConsumerRemoved;

  private QueueManagerConfig(Builder b) {
    this.visibilityTimeout = b.visibilityTimeout;
    this.maxDeliveryCount = b.maxDeliveryCount;
    this.claimBatchSize = b.claimBatchSize;
    this.autoCommitInterval = b.autoCommitInterval;
    this.deliveryBatchSize = b.deliveryBatchSize;
    this.consumerTimeout = b.consumerTimeout;
    this.dlqTopicPrefix = b.dlqTopicPrefix.isEmpty() ? DEFAULT_DLQ_TOPIC_PREFIX : b.dlqTopicPrefix;
    this.maxPelSize = b.maxPelSize;
    this.retentionCheckInterval = b.retentionCheckInterval;
    this.captureWorkers = b.captureWorkers <= 0 ? DEFAULT_CAPTURE_WORKERS : b.captureWorkers;
    this.captureQueueDepth =
        b.captureQueueDepth <= 0 ? DEFAULT_CAPTURE_QUEUE_DEPTH : b.captureQueueDepth;
    this.captureDrainTimeout =
        b.captureDrainTimeout.compareTo(Duration.ZERO) <= 0
            ? DEFAULT_CAPTURE_DRAIN_TIMEOUT
            : b.captureDrainTimeout;
    this.ackDurability =
        b.ackDurability == AckDurability.DEFAULT ? DEFAULT_ACK_DURABILITY : b.ackDurability;
    this.queueConfigs = List.copyOf(b.queueConfigs);
    this.protectedQueueContracts = List.copyOf(b.protectedQueueContracts);
    this.clock = b.clock;
    this.deliveryWorkers = b.deliveryWorkers <= 0 ? DEFAULT_DELIVERY_WORKERS : b.deliveryWorkers;
    this.deliveryDrainTimeout =
        b.deliveryDrainTimeout.compareTo(Duration.ZERO) <= 0
            ? DEFAULT_DELIVERY_DRAIN_TIMEOUT
            : b.deliveryDrainTimeout;
    this.scheduler = b.scheduler;
    this.onConsumerRemoved = b.onConsumerRemoved;
  }

  /** A builder starting from the defaults of BEHAVIOUR M-CONFIG. */
  public static Builder builder() {
    return new Builder();
  }

  /** The defaults of BEHAVIOUR M-CONFIG, no queues, no contracts, the UTC system clock. */
  public static QueueManagerConfig defaults() {
    return builder().build();
  }

  /** A builder holding this configuration's values. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /**
   * How long a claimed message stays invisible to the group before it can be claimed again (stolen
   * or redelivered). Zero, the default, means each queue's own {@code deliveryTimeout} (BEHAVIOUR
   * L-LIMITS); a positive value overrides every queue's setting manager-wide.
   */
  public Duration visibilityTimeout() {
    return visibilityTimeout;
  }

  /** Deliveries after which a message is poison and goes to the dead-letter queue. */
  public int maxDeliveryCount() {
    return maxDeliveryCount;
  }

  /**
   * Claim limit used when a caller passes a limit {@code <= 0}, for a queue that sets no {@link
   * QueueConfig#batchSize()} of its own.
   */
  public int claimBatchSize() {
    return claimBatchSize;
  }

  /** Throttle of stream auto-commits; zero commits every batch. */
  public Duration autoCommitInterval() {
    return autoCommitInterval;
  }

  /**
   * Messages delivered per consumer per pass, for a push subscription that sets no batch size on a
   * queue that sets no {@link QueueConfig#batchSize()}.
   */
  public int deliveryBatchSize() {
    return deliveryBatchSize;
  }

  /**
   * Cut-off for stale consumers of a queue that sets no {@link QueueConfig#heartbeatTimeout()} of
   * its own, and the period of the cleanup loops (shorter when a queue's heartbeat timeout is).
   */
  public Duration consumerTimeout() {
    return consumerTimeout;
  }

  /** Prefix of a dead-letter queue's name when a queue does not name its own; never empty. */
  public String dlqTopicPrefix() {
    return dlqTopicPrefix;
  }

  /** Pending entries per group before new claims are refused; zero = unlimited. */
  public int maxPelSize() {
    return maxPelSize;
  }

  /** Period of the retention and truncation pass. */
  public Duration retentionCheckInterval() {
    return retentionCheckInterval;
  }

  /** Capture lanes, one worker thread each. */
  public int captureWorkers() {
    return captureWorkers;
  }

  /** Jobs a capture lane holds before it drops new ones. */
  public int captureQueueDepth() {
    return captureQueueDepth;
  }

  /** How long {@link QueueManager#stop()} lets capture workers drain. */
  public Duration captureDrainTimeout() {
    return captureDrainTimeout;
  }

  /** The manager-wide acknowledgement policy: {@link AckDurability#BUFFERED} or {@code FSYNC}. */
  public AckDurability ackDurability() {
    return ackDurability;
  }

  /** Queues created at start when absent (a stored queue's config wins over these). */
  public List<QueueConfig> queueConfigs() {
    return queueConfigs;
  }

  /** Protected queue contracts as given (unchecked, see the class comment). */
  public List<QueueConfig> protectedQueueContracts() {
    return protectedQueueContracts;
  }

  /**
   * The clock of the whole manager: message creation and expiry, claims, visibility, retries,
   * heartbeats, retention and ephemeral expiry.
   */
  public Clock clock() {
    return clock;
  }

  /** Worker threads of the push delivery engine (handlers run on them). */
  public int deliveryWorkers() {
    return deliveryWorkers;
  }

  /**
   * How long {@link QueueManager#stop()} waits for running handlers, the delivery dispatcher and a
   * periodic loop in progress, after capture has drained.
   */
  public Duration deliveryDrainTimeout() {
    return deliveryDrainTimeout;
  }

  /**
   * The scheduler of the periodic loops and the delivery sweep; null (the default) = one daemon
   * thread owned by the manager.
   */
  public PeriodicScheduler scheduler() {
    return scheduler;
  }

  /**
   * Told about members removed for missing heartbeats (BEHAVIOUR Q-HEARTBEAT); null (the default) =
   * nobody. Must not block.
   */
  public ConsumerRemovedListener onConsumerRemoved() {
    return onConsumerRemoved;
  }

  @Override
  public String toString() {
    return "QueueManagerConfig{visibilityTimeout="
        + visibilityTimeout
        + ", maxDeliveryCount="
        + maxDeliveryCount
        + ", claimBatchSize="
        + claimBatchSize
        + ", autoCommitInterval="
        + autoCommitInterval
        + ", deliveryBatchSize="
        + deliveryBatchSize
        + ", consumerTimeout="
        + consumerTimeout
        + ", dlqTopicPrefix="
        + dlqTopicPrefix
        + ", maxPelSize="
        + maxPelSize
        + ", retentionCheckInterval="
        + retentionCheckInterval
        + ", captureWorkers="
        + captureWorkers
        + ", captureQueueDepth="
        + captureQueueDepth
        + ", captureDrainTimeout="
        + captureDrainTimeout
        + ", ackDurability="
        + ackDurability
        + ", queueConfigs="
        + queueConfigs.size()
        + ", protectedQueueContracts="
        + protectedQueueContracts.size()
        + ", clock="
        + clock
        + ", deliveryWorkers="
        + deliveryWorkers
        + ", deliveryDrainTimeout="
        + deliveryDrainTimeout
        + ", scheduler="
        + (scheduler == null ? "own thread" : scheduler)
        + "}";
  }

  /** Builds a {@link QueueManagerConfig}. Not thread-safe. */
  public static final class Builder {
    private Duration visibilityTimeout = DEFAULT_VISIBILITY_TIMEOUT;
    private int maxDeliveryCount = DEFAULT_MAX_DELIVERY_COUNT;
    private int claimBatchSize = DEFAULT_CLAIM_BATCH_SIZE;
    private Duration autoCommitInterval = DEFAULT_AUTO_COMMIT_INTERVAL;
    private int deliveryBatchSize = DEFAULT_DELIVERY_BATCH_SIZE;
    private Duration consumerTimeout = DEFAULT_CONSUMER_TIMEOUT;
    private String dlqTopicPrefix = DEFAULT_DLQ_TOPIC_PREFIX;
    private int maxPelSize = DEFAULT_MAX_PEL_SIZE;
    private Duration retentionCheckInterval = DEFAULT_RETENTION_CHECK_INTERVAL;
    private int captureWorkers = DEFAULT_CAPTURE_WORKERS;
    private int captureQueueDepth = DEFAULT_CAPTURE_QUEUE_DEPTH;
    private Duration captureDrainTimeout = DEFAULT_CAPTURE_DRAIN_TIMEOUT;
    private AckDurability ackDurability = DEFAULT_ACK_DURABILITY;
    private List<QueueConfig> queueConfigs = List.of();
    private List<QueueConfig> protectedQueueContracts = List.of();
    private Clock clock = Clock.systemUTC();
    private int deliveryWorkers = DEFAULT_DELIVERY_WORKERS;
    private Duration deliveryDrainTimeout = DEFAULT_DELIVERY_DRAIN_TIMEOUT;
    private PeriodicScheduler scheduler;
    private ConsumerRemovedListener onConsumerRemoved;

    private Builder() {}

    private Builder(QueueManagerConfig c) {
      this.visibilityTimeout = c.visibilityTimeout;
      this.maxDeliveryCount = c.maxDeliveryCount;
      this.claimBatchSize = c.claimBatchSize;
      this.autoCommitInterval = c.autoCommitInterval;
      this.deliveryBatchSize = c.deliveryBatchSize;
      this.consumerTimeout = c.consumerTimeout;
      this.dlqTopicPrefix = c.dlqTopicPrefix;
      this.maxPelSize = c.maxPelSize;
      this.retentionCheckInterval = c.retentionCheckInterval;
      this.captureWorkers = c.captureWorkers;
      this.captureQueueDepth = c.captureQueueDepth;
      this.captureDrainTimeout = c.captureDrainTimeout;
      this.ackDurability = c.ackDurability;
      this.queueConfigs = c.queueConfigs;
      this.protectedQueueContracts = c.protectedQueueContracts;
      this.clock = c.clock;
      this.deliveryWorkers = c.deliveryWorkers;
      this.deliveryDrainTimeout = c.deliveryDrainTimeout;
      this.scheduler = c.scheduler;
      this.onConsumerRemoved = c.onConsumerRemoved;
    }

    /** Zero (the default) = each queue's {@code deliveryTimeout}; negative is rejected. */
    public Builder visibilityTimeout(Duration value) {
      this.visibilityTimeout = Objects.requireNonNull(value, "visibilityTimeout");
      return this;
    }

    /** Must be positive. */
    public Builder maxDeliveryCount(int value) {
      this.maxDeliveryCount = value;
      return this;
    }

    /** Must be positive. */
    public Builder claimBatchSize(int value) {
      this.claimBatchSize = value;
      return this;
    }

    /** Zero commits every batch; negative is rejected. */
    public Builder autoCommitInterval(Duration value) {
      this.autoCommitInterval = Objects.requireNonNull(value, "autoCommitInterval");
      return this;
    }

    /** Must be positive. */
    public Builder deliveryBatchSize(int value) {
      this.deliveryBatchSize = value;
      return this;
    }

    /** Must be positive. */
    public Builder consumerTimeout(Duration value) {
      this.consumerTimeout = Objects.requireNonNull(value, "consumerTimeout");
      return this;
    }

    /** Empty (or null) means {@code $dlq/}. */
    public Builder dlqTopicPrefix(String value) {
      this.dlqTopicPrefix = Objects.requireNonNullElse(value, "");
      return this;
    }

    /** Zero = unlimited; negative is rejected. */
    public Builder maxPelSize(int value) {
      this.maxPelSize = value;
      return this;
    }

    /** Must be positive. */
    public Builder retentionCheckInterval(Duration value) {
      this.retentionCheckInterval = Objects.requireNonNull(value, "retentionCheckInterval");
      return this;
    }

    /** At or below zero means the default (4). */
    public Builder captureWorkers(int value) {
      this.captureWorkers = value;
      return this;
    }

    /** At or below zero means the default (1024). */
    public Builder captureQueueDepth(int value) {
      this.captureQueueDepth = value;
      return this;
    }

    /** At or below zero (or null) means the default (5 s). */
    public Builder captureDrainTimeout(Duration value) {
      this.captureDrainTimeout = Objects.requireNonNullElse(value, Duration.ZERO);
      return this;
    }

    /** {@link AckDurability#DEFAULT} means {@link AckDurability#BUFFERED}. */
    public Builder ackDurability(AckDurability value) {
      this.ackDurability = Objects.requireNonNull(value, "ackDurability");
      return this;
    }

    /**
     * Queues created at start when absent; each must pass {@link QueueConfig#validate()} and names
     * must be unique. Null elements are rejected with a {@link NullPointerException}.
     */
    public Builder queueConfigs(List<QueueConfig> value) {
      this.queueConfigs = List.copyOf(Objects.requireNonNull(value, "queueConfigs"));
      return this;
    }

    /** Protected contracts; checked by the manager, not here (see the class comment). */
    public Builder protectedQueueContracts(List<QueueConfig> value) {
      this.protectedQueueContracts =
          List.copyOf(Objects.requireNonNull(value, "protectedQueueContracts"));
      return this;
    }

    public Builder clock(Clock value) {
      this.clock = Objects.requireNonNull(value, "clock");
      return this;
    }

    /** At or below zero means the default (4). */
    public Builder deliveryWorkers(int value) {
      this.deliveryWorkers = value;
      return this;
    }

    /** At or below zero (or null) means the default (5 s). */
    public Builder deliveryDrainTimeout(Duration value) {
      this.deliveryDrainTimeout = Objects.requireNonNullElse(value, Duration.ZERO);
      return this;
    }

    /** Null (the default) = one daemon thread owned by the manager. */
    public Builder scheduler(PeriodicScheduler value) {
      this.scheduler = value;
      return this;
    }

    /** Null (the default) = nobody is told. */
    public Builder onConsumerRemoved(ConsumerRemovedListener value) {
      this.onConsumerRemoved = value;
      return this;
    }

    /**
     * Checks every field and builds.
     *
     * @throws InvalidConfigException naming the first bad field, its value and what was expected
     */
    public QueueManagerConfig build() {
      if (visibilityTimeout.isNegative()) {
        throw new InvalidConfigException(
            "visibilityTimeout", visibilityTimeout, ">= 0 (0 = each queue's deliveryTimeout)");
      }
      requirePositive("maxDeliveryCount", maxDeliveryCount);
      requirePositive("claimBatchSize", claimBatchSize);
      if (autoCommitInterval.isNegative()) {
        throw new InvalidConfigException(
            "autoCommitInterval", autoCommitInterval, ">= 0 (0 = commit every batch)");
      }
      requirePositive("deliveryBatchSize", deliveryBatchSize);
      requirePositive("consumerTimeout", consumerTimeout);
      if (maxPelSize < 0) {
        throw new InvalidConfigException("maxPelSize", maxPelSize, ">= 0 (0 = unlimited)");
      }
      requirePositive("retentionCheckInterval", retentionCheckInterval);
      requireAtMostMax("visibilityTimeout", visibilityTimeout);
      requireAtMostMax("autoCommitInterval", autoCommitInterval);
      requireAtMostMax("consumerTimeout", consumerTimeout);
      requireAtMostMax("retentionCheckInterval", retentionCheckInterval);
      requireAtMostMax("captureDrainTimeout", captureDrainTimeout);
      requireAtMostMax("deliveryDrainTimeout", deliveryDrainTimeout);
      if (captureWorkers > MAX_CAPTURE_WORKERS) {
        throw new InvalidConfigException(
            "captureWorkers",
            captureWorkers,
            "at most " + MAX_CAPTURE_WORKERS + " (one thread each; <= 0 = the default)");
      }
      if (captureQueueDepth > MAX_CAPTURE_QUEUE_DEPTH) {
        throw new InvalidConfigException(
            "captureQueueDepth",
            captureQueueDepth,
            "at most " + MAX_CAPTURE_QUEUE_DEPTH + " (allocated per lane; <= 0 = the default)");
      }
      checkDlqTopicPrefix(dlqTopicPrefix);
      Set<String> names = new HashSet<>();
      for (int i = 0; i < queueConfigs.size(); i++) {
        QueueConfig q = queueConfigs.get(i);
        try {
          q.validate();
        } catch (InvalidConfigException e) {
          throw new InvalidConfigException(
              "queueConfigs[" + i + "]", q.name(), "a valid queue config: " + e.getMessage());
        }
        if (!names.add(q.name())) {
          throw new InvalidConfigException(
              "queueConfigs[" + i + "].name", q.name(), "a name not used by another queue config");
        }
      }
      return new QueueManagerConfig(this);
    }

    /**
     * The prefix starts every dead-letter queue's name and topic filter ({@code
     * <prefix><queue>/#}), so it must be valid in both, with room left for a queue name.
     */
    private static void checkDlqTopicPrefix(String prefix) {
      if (prefix.isEmpty()) {
        return;
      }
      Names.checkCharacters("dlqTopicPrefix", prefix);
      if (prefix.indexOf('+') >= 0 || prefix.indexOf('#') >= 0) {
        throw new InvalidConfigException(
            "dlqTopicPrefix",
            prefix,
            "no '+' or '#': the prefix starts each dead-letter queue's topic filter");
      }
      if (Names.encode("dlqTopicPrefix", prefix).length() > Names.MAX_ENCODED_BYTES / 2) {
        throw new InvalidConfigException(
            "dlqTopicPrefix",
            prefix,
            "at most "
                + Names.MAX_ENCODED_BYTES / 2
                + " bytes once encoded, half a queue name, leaving the rest to the queue's own"
                + " name");
      }
    }

    /** Refuses a duration over {@link QueueConfig#MAX_DURATION}, the bound queue configs share. */
    private static void requireAtMostMax(String field, Duration value) {
      if (value.compareTo(QueueConfig.MAX_DURATION) > 0) {
        throw new InvalidConfigException(
            field, value, "at most " + QueueConfig.MAX_DURATION + " (36500 days, 100 years)");
      }
    }

    private static void requirePositive(String field, int value) {
      if (value <= 0) {
        throw new InvalidConfigException(field, value, "> 0");
      }
    }

    private static void requirePositive(String field, Duration value) {
      if (value.compareTo(Duration.ZERO) <= 0) {
        throw new InvalidConfigException(field, value, "> 0");
      }
    }
  }
}
