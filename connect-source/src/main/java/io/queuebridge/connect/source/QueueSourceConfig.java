package io.queuebridge.connect.source;

import io.queuebridge.connect.common.ConfigValidators;
import io.queuebridge.connect.common.HeaderNames;
import io.queuebridge.connect.common.QueueConnectorConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.topic.TopicFilters;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.ConfigException;

/**
 * The source connector's configuration, parsed once; connector and task share {@link #CONFIG_DEF}.
 *
 * <p>The store keys ({@code queue.store.*}), {@code queue.retry.backoff.ms} and {@code
 * errors.tolerance} are the ones both connectors share: see {@link QueueConnectorConfig}. Two
 * internal keys ({@link #TASK_QUEUES_CONFIG}, {@link #TASK_INDEX_CONFIG}) carry a task's assignment
 * from {@link QueueSourceConnector#taskConfigs} to the task; they are not documented for users.
 *
 * <p>Immutable and thread-safe once built.
 */
public final class QueueSourceConfig extends QueueConnectorConfig {

  /** How the queues are spread over the tasks. */
  public enum ConsumerMode {
    /** Each queue is read by exactly one task; per-queue order is kept. */
    DEDICATED,
    /** Every task reads every queue as a competing consumer of one group; classic queues only. */
    SHARED
  }

  /** Where a queue is read from when neither Connect nor the consumer group knows a position. */
  public enum StartPosition {
    EARLIEST,
    LATEST,
    OFFSET,
    TIMESTAMP
  }

  public static final String QUEUES_GROUP = "Queues";
  public static final String START_GROUP = "Start position";
  public static final String KAFKA_GROUP = "Kafka records";

  public static final String QUEUE_NAMES_CONFIG = "queue.names";
  private static final String QUEUE_NAMES_DOC =
      "The queues and streams to read, by name. Exactly one of queue.names and queue.filter must"
          + " be set. A named queue that does not exist yet is picked up when it appears (see"
          + " queue.refresh.interval.ms).";

  public static final String QUEUE_FILTER_CONFIG = "queue.filter";
  private static final String QUEUE_FILTER_DOC =
      "A topic filter matched against queue NAMES ('/' separates levels, '+' matches one level,"
          + " '#' the rest; e.g. 'orders/#'): every matching queue is read. Resolved when the"
          + " connector starts and re-resolved every queue.refresh.interval.ms; the tasks are"
          + " reconfigured when the set changes. Names starting with '$' (dead-letter queues) match"
          + " only filters starting with '$'.";

  public static final String QUEUE_REFRESH_INTERVAL_MS_CONFIG = "queue.refresh.interval.ms";
  public static final long QUEUE_REFRESH_INTERVAL_MS_DEFAULT = 30_000;
  private static final String QUEUE_REFRESH_INTERVAL_MS_DOC =
      "How often the connector re-resolves queue.names / queue.filter against the store and"
          + " asks Connect to reconfigure the tasks when the set of queues changed. 0 = only at"
          + " start.";

  public static final String QUEUE_GROUP_CONFIG = "queue.group";
  private static final String QUEUE_GROUP_DOC =
      "The consumer group the connector reads with, on every queue. Empty means"
          + " 'connect-<connector name>'. Classic queues are claimed through this group (queue"
          + " mode); on streams it is a stream-mode group whose committed offset follows what Kafka"
          + " accepted, so lag and retention see the connector's progress.";

  public static final String CONSUMER_MODE_CONFIG = "consumer.mode";
  public static final String CONSUMER_MODE_DEFAULT = "dedicated";
  private static final String CONSUMER_MODE_DOC =
      "'dedicated': each queue is assigned to exactly one task (round robin), which keeps the"
          + " order of each queue. 'shared': every task reads every queue as a competing consumer"
          + " of one queue-mode group (no order); classic queues only.";

  public static final String START_POSITION_CONFIG = "start.position";
  public static final String START_POSITION_DEFAULT = "earliest";
  private static final String START_POSITION_DOC =
      "Where a queue is read from when Connect has no stored offset for it and its consumer group"
          + " has no committed position: 'earliest' (the oldest retained message), 'latest' (only"
          + " messages appended from now on), 'offset' (start.offset) or 'timestamp' (the first"
          + " message the store accepted at or after start.timestamp.ms, through the store's time"
          + " index, which may answer a little early but never late).";

  public static final String START_OFFSET_CONFIG = "start.offset";
  private static final String START_OFFSET_DOC =
      "The queue offset to start from with start.position=offset (clamped to the retained range).";

  public static final String START_TIMESTAMP_MS_CONFIG = "start.timestamp.ms";
  private static final String START_TIMESTAMP_MS_DOC =
      "Epoch milliseconds to start from with start.position=timestamp.";

  public static final String TOPIC_CONFIG = "topic";
  private static final String TOPIC_DOC =
      "The Kafka topic every record is written to. Exactly one of topic and topic.template must be"
          + " set.";

  public static final String TOPIC_TEMPLATE_CONFIG = "topic.template";
  private static final String TOPIC_TEMPLATE_DOC =
      "The Kafka topic per record: '${queue}' is replaced by the queue name and '${topic}' by the"
          + " topic the message was captured from (its original Kafka topic when the sink recorded"
          + " one, else the message's topic). Characters Kafka does not allow in topic names"
          + " (anything but letters, digits, '.', '_' and '-') become '_'; a name that is still"
          + " illegal (empty, '.', '..', longer than 249) makes the message poison.";

  public static final String RESTORE_MODE_CONFIG = "restore.mode";
  private static final String RESTORE_MODE_DOC =
      "Write each message back as the Kafka record it was captured from: key, value (null stays"
          + " null), headers (order, repeated keys, bytes, null values), timestamp, and the original"
          + " partition recorded by the sink. With ByteArrayConverter for key, value and headers the"
          + " round trip topic -> sink -> stream -> source -> topic is byte-identical. The target"
          + " topic needs at least as many partitions as the original. Without restore mode the"
          + " producer picks the partition.";

  public static final String KAFKA_DLQ_TOPIC_CONFIG = "kafka.dlq.topic";
  private static final String KAFKA_DLQ_TOPIC_DOC =
      "A Kafka topic that also receives poison messages (besides the queue's own dead-letter"
          + " queue), with their key, value and headers and the headers"
          + " __connect.errors.reason, __connect.errors.queue.name, __connect.errors.queue.offset,"
          + " __connect.errors.delivery.count and __connect.errors.topic. Empty = none. A message is"
          + " poison when it cannot be turned into a Kafka record (see topic.template and"
          + " restore.mode) or when a classic queue delivers it more than max.deliveries times.";

  public static final String DELIVER_AT_HEADER_CONFIG = "queue.deliver.at.header";
  private static final String DELIVER_AT_HEADER_DOC =
      "Name of a record header to carry a message's due time (delayed delivery: the message's"
          + " x-deliver-at property), or empty (the default) for none: milliseconds since"
          + " 1970-01-01T00:00:00Z as ASCII decimal digits (rounded up to the millisecond; 0 for a"
          + " time before 1970), the form a sink's queue.deliver.at.header reads. Written on the"
          + " records, dead letters included, of messages that have a due time, in place of any"
          + " header of that name the message carries; the records of other messages keep their"
          + " headers as they are. So a chain sink -> stream -> source -> sink keeps each record's"
          + " original due time instead of counting a delay again from the second write.";

  public static final String KAFKA_TRANSACTION_MAX_RECORDS_CONFIG = "kafka.transaction.max.records";
  public static final int KAFKA_TRANSACTION_MAX_RECORDS_DEFAULT = 10_000;
  private static final String KAFKA_TRANSACTION_MAX_RECORDS_DOC =
      "With exactly-once support and transaction.boundary=connector: a transaction is committed"
          + " after this many records, or as soon as the task has caught up with its queues"
          + " (whichever comes first), so transactions can span several polls under load and are"
          + " never left open while idle.";

  public static final String POLL_TIMEOUT_MS_CONFIG = "poll.timeout.ms";
  public static final long POLL_TIMEOUT_MS_DEFAULT = 1_000;
  private static final String POLL_TIMEOUT_MS_DOC =
      "Longest time one poll waits for new messages before returning control to Connect.";

  public static final String POLL_MAX_RECORDS_CONFIG = "poll.max.records";
  public static final int POLL_MAX_RECORDS_DEFAULT = 2_000;
  private static final String POLL_MAX_RECORDS_DOC =
      "Most records one poll returns (over all of the task's queues). With"
          + " transaction.boundary=poll this is the largest transaction.";

  public static final String MAX_PENDING_MESSAGES_CONFIG = "max.pending.messages";
  public static final int MAX_PENDING_MESSAGES_DEFAULT = 10_000;
  private static final String MAX_PENDING_MESSAGES_DOC =
      "Most classic-queue messages a task holds claimed but not yet acknowledged by Kafka; no new"
          + " claims are made while it is reached.";

  public static final String MAX_PENDING_BYTES_CONFIG = "max.pending.bytes";
  public static final long MAX_PENDING_BYTES_DEFAULT = 64L * 1024 * 1024;
  private static final String MAX_PENDING_BYTES_DOC =
      "Most bytes (key + value + headers) of classic-queue messages a task holds claimed but not"
          + " yet acknowledged by Kafka; checked before each claim, so one claim may overshoot it.";

  public static final String MAX_DELIVERIES_CONFIG = "max.deliveries";
  public static final int MAX_DELIVERIES_DEFAULT = 3;
  private static final String MAX_DELIVERIES_DOC =
      "A classic-queue message claimed for more than this many deliveries (each redelivery follows"
          + " a claim that was never acknowledged: a task that crashed or failed on it) is poison:"
          + " rejected into the queue's dead-letter queue with the reason, and copied to"
          + " kafka.dlq.topic if set. The store's own limit (5 by default) dead-letters silently"
          + " on its own, so this only has an effect below it.";

  public static final String CLAIM_RENEW_INTERVAL_MS_CONFIG = "queue.claim.renew.interval.ms";
  public static final long CLAIM_RENEW_INTERVAL_MS_DEFAULT = 0;
  private static final String CLAIM_RENEW_INTERVAL_MS_DOC =
      "How often the claims of classic-queue messages handed to Kafka but not yet acknowledged are"
          + " renewed. 0 = a quarter of the queue's visibility timeout; a set value must be below"
          + " half of it.";

  public static final String COMMIT_INTERVAL_MS_CONFIG = "queue.commit.interval.ms";
  public static final long COMMIT_INTERVAL_MS_DEFAULT = 1_000;
  private static final String COMMIT_INTERVAL_MS_DOC =
      "How often a stream's consumer group offset is advanced to what Kafka accepted (it is a"
          + " progress mark for lag and retention; Connect's offsets decide where a restart"
          + " resumes), and how soon a stream reader sees its group paused or resumed.";

  private static final String RETRY_BACKOFF_MS_DOC =
      "How long a task waits before polling again after a transient store error.";

  /** Internal: the queues assigned to one task. */
  static final String TASK_QUEUES_CONFIG = "task.queues";

  /** Placeholders of {@link #TOPIC_TEMPLATE_CONFIG}. */
  public static final String QUEUE_PLACEHOLDER = "${queue}";

  public static final String TOPIC_PLACEHOLDER = "${topic}";

  public static final ConfigDef CONFIG_DEF = configDef();

  private final ConsumerMode consumerMode;
  private final StartPosition startPosition;

  /**
   * Parses {@code props}.
   *
   * @throws ConfigException naming the first bad key
   */
  public QueueSourceConfig(Map<String, String> props) {
    super(CONFIG_DEF, props);
    this.consumerMode =
        ConsumerMode.valueOf(getString(CONSUMER_MODE_CONFIG).toUpperCase(Locale.ROOT));
    this.startPosition =
        StartPosition.valueOf(getString(START_POSITION_CONFIG).toUpperCase(Locale.ROOT));
    String headerError = rawHeaderError(props);
    if (headerError != null) {
      throw new ConfigException(headerError);
    }
  }

  /**
   * The error of {@code queue.deliver.at.header} as given, which Connect's trimming hides from its
   * validator (a control character at either end, blanks only), or null; connector {@code
   * validate()} and the constructor share it.
   */
  static String rawHeaderError(Map<String, String> props) {
    return HeaderNames.rawError(DELIVER_AT_HEADER_CONFIG, props.get(DELIVER_AT_HEADER_CONFIG));
  }

  private static ConfigDef configDef() {
    ConfigDef def = new ConfigDef();
    int order = 0;
    def.define(
        QUEUE_NAMES_CONFIG,
        Type.LIST,
        "",
        ConfigValidators.queueNames(),
        Importance.HIGH,
        QUEUE_NAMES_DOC,
        QUEUES_GROUP,
        ++order,
        Width.LONG,
        "Queue names");
    def.define(
        QUEUE_FILTER_CONFIG,
        Type.STRING,
        "",
        new QueueFilterValidator(),
        Importance.HIGH,
        QUEUE_FILTER_DOC,
        QUEUES_GROUP,
        ++order,
        Width.MEDIUM,
        "Queue name filter");
    def.define(
        QUEUE_REFRESH_INTERVAL_MS_CONFIG,
        Type.LONG,
        QUEUE_REFRESH_INTERVAL_MS_DEFAULT,
        ConfigDef.Range.atLeast(0),
        Importance.LOW,
        QUEUE_REFRESH_INTERVAL_MS_DOC,
        QUEUES_GROUP,
        ++order,
        Width.SHORT,
        "Queue refresh interval (ms)");
    def.define(
        QUEUE_GROUP_CONFIG,
        Type.STRING,
        "",
        new ConfigDef.NonNullValidator(),
        Importance.MEDIUM,
        QUEUE_GROUP_DOC,
        QUEUES_GROUP,
        ++order,
        Width.MEDIUM,
        "Consumer group");
    def.define(
        CONSUMER_MODE_CONFIG,
        Type.STRING,
        CONSUMER_MODE_DEFAULT,
        ConfigDef.CaseInsensitiveValidString.in("dedicated", "shared"),
        Importance.MEDIUM,
        CONSUMER_MODE_DOC,
        QUEUES_GROUP,
        ++order,
        Width.SHORT,
        "Consumer mode",
        new ValuesRecommender("dedicated", "shared"));

    defineStoreKeys(def);

    order = 0;
    def.define(
        START_POSITION_CONFIG,
        Type.STRING,
        START_POSITION_DEFAULT,
        ConfigDef.CaseInsensitiveValidString.in("earliest", "latest", "offset", "timestamp"),
        Importance.MEDIUM,
        START_POSITION_DOC,
        START_GROUP,
        ++order,
        Width.SHORT,
        "Start position",
        new ValuesRecommender("earliest", "latest", "offset", "timestamp"));
    def.define(
        START_OFFSET_CONFIG,
        Type.LONG,
        null,
        new NullOrAtLeast(0),
        Importance.LOW,
        START_OFFSET_DOC,
        START_GROUP,
        ++order,
        Width.SHORT,
        "Start offset",
        new VisibleWhen(START_POSITION_CONFIG, "offset"));
    def.define(
        START_TIMESTAMP_MS_CONFIG,
        Type.LONG,
        null,
        new NullOrAtLeast(0),
        Importance.LOW,
        START_TIMESTAMP_MS_DOC,
        START_GROUP,
        ++order,
        Width.SHORT,
        "Start timestamp (epoch ms)",
        new VisibleWhen(START_POSITION_CONFIG, "timestamp"));

    order = 0;
    def.define(
        TOPIC_CONFIG,
        Type.STRING,
        "",
        new TopicNameValidator(true),
        Importance.HIGH,
        TOPIC_DOC,
        KAFKA_GROUP,
        ++order,
        Width.MEDIUM,
        "Topic");
    def.define(
        TOPIC_TEMPLATE_CONFIG,
        Type.STRING,
        "",
        new TopicTemplateValidator(),
        Importance.HIGH,
        TOPIC_TEMPLATE_DOC,
        KAFKA_GROUP,
        ++order,
        Width.MEDIUM,
        "Topic template");
    def.define(
        RESTORE_MODE_CONFIG,
        Type.BOOLEAN,
        false,
        Importance.MEDIUM,
        RESTORE_MODE_DOC,
        KAFKA_GROUP,
        ++order,
        Width.SHORT,
        "Restore mode");
    def.define(
        KAFKA_DLQ_TOPIC_CONFIG,
        Type.STRING,
        "",
        new TopicNameValidator(true),
        Importance.MEDIUM,
        KAFKA_DLQ_TOPIC_DOC,
        KAFKA_GROUP,
        ++order,
        Width.MEDIUM,
        "Kafka dead-letter topic");
    def.define(
        DELIVER_AT_HEADER_CONFIG,
        Type.STRING,
        "",
        HeaderNames.validator(),
        Importance.LOW,
        DELIVER_AT_HEADER_DOC,
        KAFKA_GROUP,
        ++order,
        Width.MEDIUM,
        "Due time header");
    def.define(
        KAFKA_TRANSACTION_MAX_RECORDS_CONFIG,
        Type.INT,
        KAFKA_TRANSACTION_MAX_RECORDS_DEFAULT,
        ConfigDef.Range.atLeast(1),
        Importance.LOW,
        KAFKA_TRANSACTION_MAX_RECORDS_DOC,
        KAFKA_GROUP,
        ++order,
        Width.SHORT,
        "Records per connector-defined transaction");

    order = 0;
    def.define(
        POLL_TIMEOUT_MS_CONFIG,
        Type.LONG,
        POLL_TIMEOUT_MS_DEFAULT,
        ConfigDef.Range.between(1, Duration.ofMinutes(1).toMillis()),
        Importance.LOW,
        POLL_TIMEOUT_MS_DOC,
        FLOW_GROUP,
        ++order,
        Width.SHORT,
        "Poll timeout (ms)");
    def.define(
        POLL_MAX_RECORDS_CONFIG,
        Type.INT,
        POLL_MAX_RECORDS_DEFAULT,
        ConfigDef.Range.between(1, 1_000_000),
        Importance.LOW,
        POLL_MAX_RECORDS_DOC,
        FLOW_GROUP,
        ++order,
        Width.SHORT,
        "Records per poll");
    def.define(
        MAX_PENDING_MESSAGES_CONFIG,
        Type.INT,
        MAX_PENDING_MESSAGES_DEFAULT,
        ConfigDef.Range.atLeast(1),
        Importance.MEDIUM,
        MAX_PENDING_MESSAGES_DOC,
        FLOW_GROUP,
        ++order,
        Width.SHORT,
        "Max in-flight messages");
    def.define(
        MAX_PENDING_BYTES_CONFIG,
        Type.LONG,
        MAX_PENDING_BYTES_DEFAULT,
        ConfigDef.Range.atLeast(1),
        Importance.MEDIUM,
        MAX_PENDING_BYTES_DOC,
        FLOW_GROUP,
        ++order,
        Width.SHORT,
        "Max in-flight bytes");
    def.define(
        MAX_DELIVERIES_CONFIG,
        Type.INT,
        MAX_DELIVERIES_DEFAULT,
        ConfigDef.Range.atLeast(1),
        Importance.MEDIUM,
        MAX_DELIVERIES_DOC,
        FLOW_GROUP,
        ++order,
        Width.SHORT,
        "Max deliveries");
    def.define(
        CLAIM_RENEW_INTERVAL_MS_CONFIG,
        Type.LONG,
        CLAIM_RENEW_INTERVAL_MS_DEFAULT,
        ConfigDef.Range.atLeast(0),
        Importance.LOW,
        CLAIM_RENEW_INTERVAL_MS_DOC,
        FLOW_GROUP,
        ++order,
        Width.SHORT,
        "Claim renewal interval (ms)");
    def.define(
        COMMIT_INTERVAL_MS_CONFIG,
        Type.LONG,
        COMMIT_INTERVAL_MS_DEFAULT,
        ConfigDef.Range.between(1, Duration.ofMinutes(10).toMillis()),
        Importance.LOW,
        COMMIT_INTERVAL_MS_DOC,
        FLOW_GROUP,
        ++order,
        Width.SHORT,
        "Group commit interval (ms)");
    defineRetryBackoff(def, ++order, RETRY_BACKOFF_MS_DOC);
    defineRetryTimeout(def, ++order);

    def.defineInternal(TASK_QUEUES_CONFIG, Type.LIST, "", Importance.LOW);
    defineTaskIndex(def);
    return def;
  }

  // ------------------------------------------------------------------ accessors

  /** The configured queue names; empty when a filter is used. */
  public List<String> queueNames() {
    return List.copyOf(getList(QUEUE_NAMES_CONFIG));
  }

  /** The configured queue-name filter; empty when names are used. */
  public String queueFilter() {
    return getString(QUEUE_FILTER_CONFIG).trim();
  }

  /** Zero when the queue set is resolved only at start. */
  public Duration queueRefreshInterval() {
    return Duration.ofMillis(getLong(QUEUE_REFRESH_INTERVAL_MS_CONFIG));
  }

  /** The consumer group: {@code queue.group}, else {@code connect-<connector name>}. */
  public String group() {
    String g = getString(QUEUE_GROUP_CONFIG).trim();
    return g.isEmpty() ? "connect-" + connectorName() : g;
  }

  public ConsumerMode consumerMode() {
    return consumerMode;
  }

  public StartPosition startPosition() {
    return startPosition;
  }

  /** {@code start.offset}, or -1 when unset. */
  public long startOffset() {
    Long v = getLong(START_OFFSET_CONFIG);
    return v == null ? -1 : v;
  }

  /** {@code start.timestamp.ms} as an instant, or null when unset. */
  public Instant startTimestamp() {
    Long v = getLong(START_TIMESTAMP_MS_CONFIG);
    return v == null ? null : Instant.ofEpochMilli(v);
  }

  /** The fixed topic; empty when a template is used. */
  public String topic() {
    return getString(TOPIC_CONFIG).trim();
  }

  /** The topic template; empty when a fixed topic is used. */
  public String topicTemplate() {
    return getString(TOPIC_TEMPLATE_CONFIG).trim();
  }

  public boolean restoreMode() {
    return getBoolean(RESTORE_MODE_CONFIG);
  }

  /** The Kafka dead-letter topic; empty when none. */
  public String kafkaDlqTopic() {
    return getString(KAFKA_DLQ_TOPIC_CONFIG).trim();
  }

  /**
   * {@code queue.deliver.at.header}: the header to write a message's due time to; empty for none.
   */
  public String deliverAtHeader() {
    return getString(DELIVER_AT_HEADER_CONFIG);
  }

  public int transactionMaxRecords() {
    return getInt(KAFKA_TRANSACTION_MAX_RECORDS_CONFIG);
  }

  public Duration pollTimeout() {
    return Duration.ofMillis(getLong(POLL_TIMEOUT_MS_CONFIG));
  }

  public int pollMaxRecords() {
    return getInt(POLL_MAX_RECORDS_CONFIG);
  }

  public int maxPendingMessages() {
    return getInt(MAX_PENDING_MESSAGES_CONFIG);
  }

  public long maxPendingBytes() {
    return getLong(MAX_PENDING_BYTES_CONFIG);
  }

  public int maxDeliveries() {
    return getInt(MAX_DELIVERIES_CONFIG);
  }

  /** Zero = derive from the visibility timeout. */
  public Duration claimRenewInterval() {
    return Duration.ofMillis(getLong(CLAIM_RENEW_INTERVAL_MS_CONFIG));
  }

  public Duration commitInterval() {
    return Duration.ofMillis(getLong(COMMIT_INTERVAL_MS_CONFIG));
  }

  /** The queues assigned to this task (internal key). */
  List<String> taskQueues() {
    return List.copyOf(getList(TASK_QUEUES_CONFIG));
  }

  // ------------------------------------------------------------------ validators

  /** Recommends a fixed list of values. */
  static final class ValuesRecommender implements ConfigDef.Recommender {
    private final List<Object> values;

    ValuesRecommender(String... values) {
      this.values = List.of((Object[]) values);
    }

    @Override
    public List<Object> validValues(String name, Map<String, Object> parsedConfig) {
      return values;
    }

    @Override
    public boolean visible(String name, Map<String, Object> parsedConfig) {
      return true;
    }
  }

  /** Shows a key only when another key has a given value (case-insensitive). */
  static final class VisibleWhen implements ConfigDef.Recommender {
    private final String key;
    private final String value;

    VisibleWhen(String key, String value) {
      this.key = key;
      this.value = value;
    }

    @Override
    public List<Object> validValues(String name, Map<String, Object> parsedConfig) {
      return List.of();
    }

    @Override
    public boolean visible(String name, Map<String, Object> parsedConfig) {
      Object v = parsedConfig.get(key);
      return v != null && value.equalsIgnoreCase(v.toString());
    }
  }

  /** Null, or a number at least the minimum. */
  static final class NullOrAtLeast implements ConfigDef.Validator {
    private final long min;

    NullOrAtLeast(long min) {
      this.min = min;
    }

    @Override
    public void ensureValid(String name, Object value) {
      if (value != null && ((Number) value).longValue() < min) {
        throw new ConfigException(name, value, "must be at least " + min);
      }
    }

    @Override
    public String toString() {
      return "null or [" + min + ",...]";
    }
  }

  /** An empty value, or a valid topic filter. */
  static final class QueueFilterValidator implements ConfigDef.Validator {
    @Override
    public void ensureValid(String name, Object value) {
      String filter = value == null ? "" : value.toString().trim();
      if (filter.isEmpty()) {
        return;
      }
      try {
        TopicFilters.validateFilter(filter);
      } catch (InvalidConfigException e) {
        throw new ConfigException(
            name, ConfigValidators.shown(value), "not a valid topic filter: " + e.getMessage());
      }
    }

    @Override
    public String toString() {
      return "a topic filter over queue names ('/' levels, '+', '#'), or empty";
    }
  }

  /** An empty value (when {@code allowEmpty}) or a legal Kafka topic name. */
  static final class TopicNameValidator implements ConfigDef.Validator {
    private final boolean allowEmpty;

    TopicNameValidator(boolean allowEmpty) {
      this.allowEmpty = allowEmpty;
    }

    @Override
    public void ensureValid(String name, Object value) {
      String topic = value == null ? "" : value.toString().trim();
      if (topic.isEmpty() && allowEmpty) {
        return;
      }
      String problem = TopicNamer.illegalReason(topic);
      if (problem != null) {
        throw new ConfigException(
            name,
            ConfigValidators.shown(value),
            "not a legal Kafka topic name (expected letters, digits, '.', '_', '-'; at most 249"
                + " characters): "
                + ConfigValidators.shown(problem));
      }
    }

    @Override
    public String toString() {
      return "a Kafka topic name (letters, digits, '.', '_', '-'; at most 249 characters)";
    }
  }

  /**
   * An empty value or a template whose only placeholders are {@code ${queue}} and {@code ${topic}}.
   */
  static final class TopicTemplateValidator implements ConfigDef.Validator {
    @Override
    public void ensureValid(String name, Object value) {
      String template = value == null ? "" : value.toString().trim();
      if (template.isEmpty()) {
        return;
      }
      try {
        TopicNamer.parseTemplate(template);
      } catch (IllegalArgumentException e) {
        throw new ConfigException(
            name, ConfigValidators.shown(value), ConfigValidators.shown(e.getMessage()));
      }
    }

    @Override
    public String toString() {
      return "a topic name with the placeholders ${queue} and ${topic}";
    }
  }

  /** Prints the configuration reference (reStructuredText) for the docs. */
  public static void main(String[] args) {
    System.out.println(CONFIG_DEF.toEnrichedRst());
  }
}
