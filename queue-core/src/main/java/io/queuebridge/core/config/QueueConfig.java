package io.queuebridge.core.config;

import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.topic.TopicFilters;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The immutable configuration of one queue or stream (BEHAVIOUR Q-CONFIG).
 *
 * <p>Build one with {@link #durable(String)}, {@link #ephemeral(String)}, {@link
 * #reservedStream(String)} or {@link #toBuilder()}; check it with {@link #validate()}. Instances
 * are values: {@link #equals} compares every field. Thread-safe.
 */
public final class QueueConfig {
  /** Default topic filters when none are given: everything. */
  public static final List<String> DEFAULT_TOPICS = List.of("#");

  public static final long DEFAULT_MAX_MESSAGE_SIZE = 10L * 1024 * 1024;
  public static final long DEFAULT_MAX_DEPTH = 100_000;
  public static final Duration DEFAULT_MESSAGE_TTL = Duration.ofDays(7);
  public static final Duration DEFAULT_DELIVERY_TIMEOUT = Duration.ofSeconds(30);

  /**
   * Zero: a queue takes the manager's batch sizes, {@code claimBatchSize} for a claim or read that
   * asks for the default and {@code deliveryBatchSize} for a push delivery pass (BEHAVIOUR
   * Q-CONFIG).
   */
  public static final int DEFAULT_BATCH_SIZE = 0;

  /**
   * Zero: the members of a queue's groups are removed after the manager's {@code consumerTimeout}
   * without a heartbeat (BEHAVIOUR Q-HEARTBEAT).
   */
  public static final Duration DEFAULT_HEARTBEAT_TIMEOUT = Duration.ZERO;

  public static final Duration DEFAULT_EPHEMERAL_EXPIRY = Duration.ofMinutes(5);

  /**
   * The longest duration any field takes, 36 500 days (100 years; BEHAVIOUR Q-VAL): a longer one
   * would overflow the clock arithmetic of a claim, an expiry or a backoff (an instant or a count
   * of nanoseconds) and fail every publish or claim instead of being refused here.
   */
  public static final Duration MAX_DURATION = Duration.ofDays(36_500);

  /**
   * The longest {@link #dedupWindow()} accepted (BEHAVIOUR Q-DEDUP): a store keeps every id of the
   * window, so the bound caps that memory.
   */
  public static final Duration MAX_DEDUP_WINDOW = Duration.ofDays(7);

  /** The default {@link #maxDelay()}: 7 days (BEHAVIOUR Q-DELAY). */
  public static final Duration DEFAULT_MAX_DELAY = Duration.ofDays(7);

  private final String name;
  private final List<String> topics;
  private final boolean reserved;
  private final QueueType type;
  private final String primaryGroup;
  private final boolean durable;
  private final AckDurability ackDurability;
  private final Duration expiresAfter;
  private final Instant lastConsumerDisconnect;
  private final RetryPolicy retryPolicy;
  private final DlqConfig dlq;
  private final RetentionPolicy retention;
  private final long maxMessageSize;
  private final long maxDepth;
  private final Duration messageTtl;
  private final Duration deliveryTimeout;
  private final int batchSize;
  private final Duration heartbeatTimeout;
  private final Duration dedupWindow;
  private final Duration maxDelay;
  private final OrderingKey ordering;

  private QueueConfig(Builder b) {
    this.name = b.name;
    this.topics = b.topics == null || b.topics.isEmpty() ? DEFAULT_TOPICS : List.copyOf(b.topics);
    this.reserved = b.reserved;
    this.type = b.type;
    this.primaryGroup = b.primaryGroup;
    this.durable = b.durable;
    this.ackDurability = b.ackDurability;
    this.expiresAfter = b.expiresAfter;
    this.lastConsumerDisconnect = b.lastConsumerDisconnect;
    this.retryPolicy = b.retryPolicy;
    this.dlq = b.dlq;
    this.retention = b.retention;
    this.maxMessageSize = b.maxMessageSize;
    this.maxDepth = b.maxDepth;
    this.messageTtl = b.messageTtl;
    this.deliveryTimeout = b.deliveryTimeout;
    this.batchSize = b.batchSize;
    this.heartbeatTimeout = b.heartbeatTimeout;
    this.dedupWindow = b.dedupWindow;
    this.maxDelay = b.maxDelay;
    this.ordering = b.ordering;
  }

  /** A durable classic queue with the defaults of BEHAVIOUR Q-CONFIG. */
  public static Builder durable(String name) {
    return new Builder(name);
  }

  /** An ephemeral classic queue: durable defaults with durable=false and a 5 minute expiry. */
  public static Builder ephemeral(String name) {
    return new Builder(name).durable(false).expiresAfter(DEFAULT_EPHEMERAL_EXPIRY);
  }

  /**
   * A reserved, durable stream: the shape a protected contract requires (BEHAVIOUR Q-PROT). Topics
   * default to {@code #}; set them if the stream is also fed by capture.
   */
  public static Builder reservedStream(String name) {
    return new Builder(name).reserved(true).type(QueueType.STREAM);
  }

  public Builder toBuilder() {
    return new Builder(this);
  }

  /**
   * Checks the configuration in the order of BEHAVIOUR Q-VAL: topic filters first, then numeric
   * limits, ephemeral expiry, reserved-requires-durable.
   *
   * @return this, for chaining
   * @throws InvalidConfigException naming the first bad field, its value and what was expected
   */
  public QueueConfig validate() {
    for (String filter : topics) {
      TopicFilters.validateFilter(filter);
    }
    Names.encode("name", name); // BEHAVIOUR S-NAMES: the one rule of every store
    requirePositive("maxMessageSize", maxMessageSize);
    requirePositive("maxDepth", maxDepth);
    requirePositive("deliveryTimeout", deliveryTimeout);
    if (batchSize < 0) {
      throw invalid("batchSize", batchSize, ">= 0 (0 = the manager's batch sizes)");
    }
    if (heartbeatTimeout.isNegative()) {
      throw invalid(
          "heartbeatTimeout", heartbeatTimeout, ">= 0 (0 = the manager's consumerTimeout)");
    }
    if (retryPolicy.maxRetries() < 0) {
      throw invalid("retryPolicy.maxRetries", retryPolicy.maxRetries(), ">= 0");
    }
    if (retryPolicy.initialBackoff().isNegative()) {
      throw invalid("retryPolicy.initialBackoff", retryPolicy.initialBackoff(), ">= 0");
    }
    if (retryPolicy.maxBackoff().compareTo(retryPolicy.initialBackoff()) < 0) {
      throw invalid(
          "retryPolicy.maxBackoff",
          retryPolicy.maxBackoff(),
          ">= retryPolicy.initialBackoff (" + retryPolicy.initialBackoff() + ")");
    }
    if (!(retryPolicy.backoffMultiplier() >= 1.0)) {
      throw invalid("retryPolicy.backoffMultiplier", retryPolicy.backoffMultiplier(), ">= 1.0");
    }
    if (retryPolicy.totalTimeout().isNegative()) {
      throw invalid("retryPolicy.totalTimeout", retryPolicy.totalTimeout(), ">= 0");
    }
    if (messageTtl.isNegative()) {
      throw invalid("messageTtl", messageTtl, ">= 0 (0 = never expires)");
    }
    if (retention.retentionTime().isNegative()
        || retention.retentionBytes() < 0
        || retention.retentionMessages() < 0) {
      throw invalid("retention", retention, "non-negative limits (0 = no limit)");
    }
    requireAtMostMax("deliveryTimeout", deliveryTimeout);
    requireAtMostMax("heartbeatTimeout", heartbeatTimeout);
    requireAtMostMax("retryPolicy.initialBackoff", retryPolicy.initialBackoff());
    requireAtMostMax("retryPolicy.maxBackoff", retryPolicy.maxBackoff());
    requireAtMostMax("retryPolicy.totalTimeout", retryPolicy.totalTimeout());
    requireAtMostMax("messageTtl", messageTtl);
    requireAtMostMax("retention.retentionTime", retention.retentionTime());
    requireAtMostMax("expiresAfter", expiresAfter);
    if (dedupWindow.isNegative() || dedupWindow.compareTo(MAX_DEDUP_WINDOW) > 0) {
      throw invalid(
          "dedupWindow",
          dedupWindow,
          "between PT0S (off) and MAX_DEDUP_WINDOW (" + MAX_DEDUP_WINDOW + ")");
    }
    if (maxDelay.isNegative() || maxDelay.compareTo(MAX_DURATION) > 0) {
      throw invalid("maxDelay", maxDelay, "between PT0S (no delayed publish) and " + MAX_DURATION);
    }
    ordering.validate("ordering");
    if (type == QueueType.STREAM && !ordering.isNone()) {
      throw invalid(
          "ordering",
          ordering,
          "none on a stream (per-key order is a classic-queue setting; stream readers already"
              + " see every message in offset order)");
    }
    if (!durable && !(expiresAfter.compareTo(Duration.ZERO) > 0)) {
      throw invalid("expiresAfter", expiresAfter, "> 0 for an ephemeral (non-durable) queue");
    }
    if (reserved && !durable) {
      throw invalid("durable", false, "true: a reserved queue must be durable");
    }
    return this;
  }

  private static void requirePositive(String field, long value) {
    if (value <= 0) {
      throw invalid(field, value, "> 0");
    }
  }

  private static void requirePositive(String field, Duration value) {
    if (value.compareTo(Duration.ZERO) <= 0) {
      throw invalid(field, value, "> 0");
    }
  }

  /** Refuses a duration over {@link #MAX_DURATION} (BEHAVIOUR Q-VAL). */
  static void requireAtMostMax(String field, Duration value) {
    if (value.compareTo(MAX_DURATION) > 0) {
      throw invalid(field, value, "at most " + MAX_DURATION + " (36500 days, 100 years)");
    }
  }

  private static InvalidConfigException invalid(String field, Object value, String expected) {
    return new InvalidConfigException(field, value, expected);
  }

  public String name() {
    return name;
  }

  /** Topic filters routing publishes into this queue; never empty ({@code #} by default). */
  public List<String> topics() {
    return topics;
  }

  public boolean reserved() {
    return reserved;
  }

  public QueueType type() {
    return type;
  }

  public boolean isStream() {
    return type == QueueType.STREAM;
  }

  /**
   * The group whose committed offset stream deliveries advertise; empty when none. A stream-mode
   * delivery of this queue then carries {@code x-work-group}, {@code x-work-committed-offset} and
   * {@code x-work-acked} in its {@link io.queuebridge.core.group.GroupDelivery#deliveryProperties()
   * delivery properties}, so a reader (an audit trail, a replay) can tell which messages the work
   * group has already finished (BEHAVIOUR Q-MSG).
   */
  public String primaryGroup() {
    return primaryGroup;
  }

  public boolean durable() {
    return durable;
  }

  public AckDurability ackDurability() {
    return ackDurability;
  }

  /** Grace before an ephemeral queue with no consumers is deleted. */
  public Duration expiresAfter() {
    return expiresAfter;
  }

  /** When the last consumer left; empty while the queue has consumers or never had one. */
  public Optional<Instant> lastConsumerDisconnect() {
    return Optional.ofNullable(lastConsumerDisconnect);
  }

  public RetryPolicy retryPolicy() {
    return retryPolicy;
  }

  public DlqConfig dlq() {
    return dlq;
  }

  public RetentionPolicy retention() {
    return retention;
  }

  /** Largest accepted message: key + value + headers, in bytes. */
  public long maxMessageSize() {
    return maxMessageSize;
  }

  /** Most messages a classic queue holds before publishes are refused (BEHAVIOUR L-LIMITS). */
  public long maxDepth() {
    return maxDepth;
  }

  /** Per-message time to live from append; zero = never expires. */
  public Duration messageTtl() {
    return messageTtl;
  }

  /**
   * How long a publish's deduplication id is remembered (BEHAVIOUR Q-DEDUP): a second publish of
   * the same id within the window stores nothing and answers the first one's offset. {@link
   * Duration#ZERO} (the default) turns deduplication off.
   */
  public Duration dedupWindow() {
    return dedupWindow;
  }

  /**
   * The longest delay a publish to this queue may ask for (BEHAVIOUR Q-DELAY): a request whose due
   * time is further ahead of the publish is refused. {@link Duration#ZERO} refuses every delayed
   * publish; the default is {@link #DEFAULT_MAX_DELAY}.
   */
  public Duration maxDelay() {
    return maxDelay;
  }

  /**
   * What the queue's groups order deliveries by (BEHAVIOUR Q-ORDER): with a key, a queue-mode group
   * hands out at most one message of each key at a time, in offset order. {@link OrderingKey#NONE}
   * (the default) orders nothing; a stream refuses any other value.
   */
  public OrderingKey ordering() {
    return ordering;
  }

  /** Whether {@link #dedupWindow()} is on (above zero). */
  public boolean deduplicates() {
    return dedupWindow.compareTo(Duration.ZERO) > 0;
  }

  /** Visibility timeout of a claimed message (BEHAVIOUR L-LIMITS). */
  public Duration deliveryTimeout() {
    return deliveryTimeout;
  }

  /**
   * How many messages a claim or read of this queue takes when its caller asks for the default (a
   * limit {@code <= 0}), and a push subscription claims or reads per delivery pass unless it sets
   * its own batch size (BEHAVIOUR Q-CONFIG, Q-CLAIM, Q-DEL). {@code 0} (the default) = the
   * manager's: {@code claimBatchSize} for claims and reads, {@code deliveryBatchSize} for push
   * delivery. A push subscription reads it at its first pass.
   */
  public int batchSize() {
    return batchSize;
  }

  /**
   * How long a member of one of this queue's consumer groups may go without a heartbeat before it
   * is removed from the group (BEHAVIOUR Q-HEARTBEAT); its pending entries stay, to be stolen.
   * {@link Duration#ZERO} (the default) = the manager's {@code consumerTimeout}; a positive value
   * overrides it for this queue, longer or shorter. A claim or read counts as a heartbeat, written
   * at most every tenth of this timeout; the stale-member sweep runs at least this often, but not
   * more than once a second.
   */
  public Duration heartbeatTimeout() {
    return heartbeatTimeout;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof QueueConfig c)) {
      return false;
    }
    return reserved == c.reserved
        && durable == c.durable
        && maxMessageSize == c.maxMessageSize
        && maxDepth == c.maxDepth
        && batchSize == c.batchSize
        && Objects.equals(name, c.name)
        && topics.equals(c.topics)
        && type == c.type
        && primaryGroup.equals(c.primaryGroup)
        && ackDurability == c.ackDurability
        && expiresAfter.equals(c.expiresAfter)
        && Objects.equals(lastConsumerDisconnect, c.lastConsumerDisconnect)
        && retryPolicy.equals(c.retryPolicy)
        && dlq.equals(c.dlq)
        && retention.equals(c.retention)
        && messageTtl.equals(c.messageTtl)
        && deliveryTimeout.equals(c.deliveryTimeout)
        && heartbeatTimeout.equals(c.heartbeatTimeout)
        && dedupWindow.equals(c.dedupWindow)
        && maxDelay.equals(c.maxDelay)
        && ordering.equals(c.ordering);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, topics, type, durable, reserved, maxMessageSize, retention);
  }

  @Override
  public String toString() {
    return "QueueConfig{name="
        + name
        + ", topics="
        + topics
        + ", type="
        + type
        + ", durable="
        + durable
        + ", reserved="
        + reserved
        + ", primaryGroup="
        + primaryGroup
        + ", ackDurability="
        + ackDurability
        + ", expiresAfter="
        + expiresAfter
        + ", lastConsumerDisconnect="
        + lastConsumerDisconnect
        + ", retryPolicy="
        + retryPolicy
        + ", dlq="
        + dlq
        + ", retention="
        + retention
        + ", maxMessageSize="
        + maxMessageSize
        + ", maxDepth="
        + maxDepth
        + ", messageTtl="
        + messageTtl
        + ", deliveryTimeout="
        + deliveryTimeout
        + ", batchSize="
        + batchSize
        + ", heartbeatTimeout="
        + heartbeatTimeout
        + ", dedupWindow="
        + dedupWindow
        + ", maxDelay="
        + maxDelay
        + ", ordering="
        + ordering
        + "}";
  }

  /** Builds a {@link QueueConfig}; starts from the durable defaults of BEHAVIOUR Q-CONFIG. */
  public static final class Builder {
    private String name;
    private List<String> topics = DEFAULT_TOPICS;
    private boolean reserved;
    private QueueType type = QueueType.CLASSIC;
    private String primaryGroup = "";
    private boolean durable = true;
    private AckDurability ackDurability = AckDurability.DEFAULT;
    private Duration expiresAfter = Duration.ZERO;
    private Instant lastConsumerDisconnect;
    private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;
    private DlqConfig dlq = DlqConfig.DEFAULT;
    private RetentionPolicy retention = RetentionPolicy.NONE;
    private long maxMessageSize = DEFAULT_MAX_MESSAGE_SIZE;
    private long maxDepth = DEFAULT_MAX_DEPTH;
    private Duration messageTtl = DEFAULT_MESSAGE_TTL;
    private Duration deliveryTimeout = DEFAULT_DELIVERY_TIMEOUT;
    private int batchSize = DEFAULT_BATCH_SIZE;
    private Duration heartbeatTimeout = DEFAULT_HEARTBEAT_TIMEOUT;
    private Duration dedupWindow = Duration.ZERO;
    private Duration maxDelay = DEFAULT_MAX_DELAY;
    private OrderingKey ordering = OrderingKey.NONE;

    private Builder(String name) {
      this.name = name;
    }

    private Builder(QueueConfig c) {
      this.name = c.name;
      this.topics = c.topics;
      this.reserved = c.reserved;
      this.type = c.type;
      this.primaryGroup = c.primaryGroup;
      this.durable = c.durable;
      this.ackDurability = c.ackDurability;
      this.expiresAfter = c.expiresAfter;
      this.lastConsumerDisconnect = c.lastConsumerDisconnect;
      this.retryPolicy = c.retryPolicy;
      this.dlq = c.dlq;
      this.retention = c.retention;
      this.maxMessageSize = c.maxMessageSize;
      this.maxDepth = c.maxDepth;
      this.messageTtl = c.messageTtl;
      this.deliveryTimeout = c.deliveryTimeout;
      this.batchSize = c.batchSize;
      this.heartbeatTimeout = c.heartbeatTimeout;
      this.dedupWindow = c.dedupWindow;
      this.maxDelay = c.maxDelay;
      this.ordering = c.ordering;
    }

    public Builder name(String name) {
      this.name = name;
      return this;
    }

    /** Topic filters; an empty list means {@code #}. */
    public Builder topics(List<String> topics) {
      this.topics = topics == null ? DEFAULT_TOPICS : List.copyOf(topics);
      return this;
    }

    public Builder topics(String... topics) {
      return topics(List.of(topics));
    }

    public Builder reserved(boolean reserved) {
      this.reserved = reserved;
      return this;
    }

    public Builder type(QueueType type) {
      this.type = Objects.requireNonNull(type, "type");
      return this;
    }

    public Builder primaryGroup(String primaryGroup) {
      this.primaryGroup = Objects.requireNonNullElse(primaryGroup, "");
      return this;
    }

    public Builder durable(boolean durable) {
      this.durable = durable;
      return this;
    }

    public Builder ackDurability(AckDurability ackDurability) {
      this.ackDurability = Objects.requireNonNull(ackDurability, "ackDurability");
      return this;
    }

    public Builder expiresAfter(Duration expiresAfter) {
      this.expiresAfter = Objects.requireNonNull(expiresAfter, "expiresAfter");
      return this;
    }

    /** When the last consumer left; null clears it. */
    public Builder lastConsumerDisconnect(Instant lastConsumerDisconnect) {
      this.lastConsumerDisconnect = lastConsumerDisconnect;
      return this;
    }

    public Builder retryPolicy(RetryPolicy retryPolicy) {
      this.retryPolicy = Objects.requireNonNull(retryPolicy, "retryPolicy");
      return this;
    }

    public Builder dlq(DlqConfig dlq) {
      this.dlq = Objects.requireNonNull(dlq, "dlq");
      return this;
    }

    public Builder retention(RetentionPolicy retention) {
      this.retention = Objects.requireNonNull(retention, "retention");
      return this;
    }

    public Builder maxMessageSize(long maxMessageSize) {
      this.maxMessageSize = maxMessageSize;
      return this;
    }

    public Builder maxDepth(long maxDepth) {
      this.maxDepth = maxDepth;
      return this;
    }

    public Builder messageTtl(Duration messageTtl) {
      this.messageTtl = Objects.requireNonNull(messageTtl, "messageTtl");
      return this;
    }

    public Builder deliveryTimeout(Duration deliveryTimeout) {
      this.deliveryTimeout = Objects.requireNonNull(deliveryTimeout, "deliveryTimeout");
      return this;
    }

    /** See {@link QueueConfig#batchSize()}; {@code 0} (the default) = the manager's. */
    public Builder batchSize(int batchSize) {
      this.batchSize = batchSize;
      return this;
    }

    /**
     * See {@link QueueConfig#heartbeatTimeout()}; {@link Duration#ZERO} (the default) = the
     * manager's {@code consumerTimeout}.
     */
    public Builder heartbeatTimeout(Duration heartbeatTimeout) {
      this.heartbeatTimeout = Objects.requireNonNull(heartbeatTimeout, "heartbeatTimeout");
      return this;
    }

    /**
     * The deduplication window (BEHAVIOUR Q-DEDUP); {@link Duration#ZERO} = off (the default), at
     * most {@link QueueConfig#MAX_DEDUP_WINDOW}.
     */
    public Builder dedupWindow(Duration dedupWindow) {
      this.dedupWindow = Objects.requireNonNull(dedupWindow, "dedupWindow");
      return this;
    }

    /**
     * The longest delay a publish may ask for (BEHAVIOUR Q-DELAY); {@link Duration#ZERO} refuses
     * delayed publishes; default {@link QueueConfig#DEFAULT_MAX_DELAY}, at most {@link
     * QueueConfig#MAX_DURATION}.
     */
    public Builder maxDelay(Duration maxDelay) {
      this.maxDelay = Objects.requireNonNull(maxDelay, "maxDelay");
      return this;
    }

    /**
     * What the queue's groups order deliveries by (BEHAVIOUR Q-ORDER); default {@link
     * OrderingKey#NONE}. Only a classic queue may order.
     */
    public Builder ordering(OrderingKey ordering) {
      this.ordering = Objects.requireNonNull(ordering, "ordering");
      return this;
    }

    /** Builds without validating; call {@link QueueConfig#validate()} to check. */
    public QueueConfig build() {
      return new QueueConfig(this);
    }
  }
}
