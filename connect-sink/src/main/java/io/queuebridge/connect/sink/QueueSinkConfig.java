package io.queuebridge.connect.sink;

import io.queuebridge.connect.common.ConfigValidators;
import io.queuebridge.connect.common.HeaderNames;
import io.queuebridge.connect.common.QueueConnectorConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.config.RetentionPolicy;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.ConfigException;

/**
 * The sink connector's configuration, parsed once. Connector and task share {@link #CONFIG_DEF}.
 * The store keys ({@code queue.store.*}), {@code queue.retry.backoff.ms} and {@code
 * errors.tolerance} are the ones both connectors share: see {@link QueueConnectorConfig}.
 */
public final class QueueSinkConfig extends QueueConnectorConfig {

  /** How records are routed into queues. */
  public enum Routing {
    /** Every record into the one protected durable stream {@code queue.name}. */
    EXACT,
    /** Every record into each existing queue whose topic filters match the record's topic. */
    MATCHING
  }

  public static final String STREAM_GROUP = "Stream";
  public static final String MAPPING_GROUP = "Record mapping";

  public static final String QUEUE_NAME_CONFIG = "queue.name";
  private static final String QUEUE_NAME_DOC =
      "The protected durable stream the records are written into. Declared on start: created if"
          + " absent as a reserved durable stream with the contract below, asserted equal if"
          + " present (a difference fails validation and the task; the stored stream is never"
          + " changed). With queue.routing=matching it is still declared, and receives the"
          + " records whose topics it matches, like any other queue.";

  public static final String QUEUE_ROUTING_CONFIG = "queue.routing";
  public static final String QUEUE_ROUTING_DEFAULT = "exact";
  private static final String QUEUE_ROUTING_DOC =
      "'exact': every record into queue.name. 'matching': every record into each queue whose"
          + " topic filters match the record's Kafka topic (queues that match nothing skip the"
          + " record).";

  public static final String QUEUE_TOPICS_CONFIG = "queue.topics";
  private static final String QUEUE_TOPICS_DOC =
      "Topic filters of the stream (part of its protected contract). Empty means"
          + " '$queue/<queue.name>/#', which only explicit addressing reaches.";

  public static final String QUEUE_RETENTION_MS_CONFIG = "queue.retention.ms";
  private static final String QUEUE_RETENTION_MS_DOC =
      "Retention of the stream by age, in milliseconds; 0 keeps messages forever (contract field"
          + " retention.max_age).";

  public static final String QUEUE_RETENTION_BYTES_CONFIG = "queue.retention.bytes";
  private static final String QUEUE_RETENTION_BYTES_DOC =
      "Retention of the stream by size, in bytes; 0 = no limit (contract field"
          + " retention.max_length_bytes).";

  public static final String QUEUE_RETENTION_MESSAGES_CONFIG = "queue.retention.messages";
  private static final String QUEUE_RETENTION_MESSAGES_DOC =
      "Retention of the stream by count; 0 = no limit (contract field"
          + " retention.max_length_messages).";

  public static final String QUEUE_MAX_MESSAGE_BYTES_CONFIG = "queue.max.message.bytes";
  public static final long QUEUE_MAX_MESSAGE_BYTES_DEFAULT = QueueConfig.DEFAULT_MAX_MESSAGE_SIZE;
  private static final String QUEUE_MAX_MESSAGE_BYTES_DOC =
      "Largest record accepted (key + value + headers), in bytes (contract field"
          + " limits.max_message_size). Larger records are errant: reported to the dead-letter"
          + " topic under errors.tolerance=all, otherwise they fail the task.";

  public static final String QUEUE_MESSAGE_TTL_MS_CONFIG = "queue.message.ttl.ms";
  private static final String QUEUE_MESSAGE_TTL_MS_DOC =
      "Time to live of each message from append, in milliseconds; 0 = never expires (contract"
          + " field limits.message_ttl).";

  public static final String QUEUE_MAX_DELAY_MS_CONFIG = "queue.max.delay.ms";
  private static final String QUEUE_MAX_DELAY_MS_DOC =
      "How far ahead of its write a record's due time (queue.delay.header,"
          + " queue.deliver.at.header) may be, in milliseconds, for the stream this connector"
          + " creates; 0 = no delayed records (contract field limits.max_delay). A record asking"
          + " for more is errant. At most 36,500 days. A target queue of queue.routing=matching"
          + " keeps its own maxDelay.";

  public static final String FORWARD_KEY_CONFIG = "forward.kafka.key";
  private static final String FORWARD_KEY_DOC = "Keep each record's key.";

  public static final String FORWARD_HEADERS_CONFIG = "forward.kafka.headers";
  private static final String FORWARD_HEADERS_DOC =
      "Keep each record's headers (order, repeated keys and byte values).";

  public static final String FORWARD_METADATA_CONFIG = "forward.kafka.metadata";
  private static final String FORWARD_METADATA_DOC =
      "Keep each record's timestamp and its type, and its Kafka coordinates (original topic,"
          + " partition, offset) as message properties. Restoring a topic byte for byte needs"
          + " this.";

  public static final String DELAY_HEADER_CONFIG = "queue.delay.header";
  private static final String DELAY_HEADER_DOC =
      "Name of a record header holding a delay for its record (delayed delivery), or empty (the"
          + " default) for none. The value is the delay in milliseconds as a decimal integer, 0 ="
          + " none: bytes or a string of the ASCII digits 0-9 only (no sign, space, decimal point"
          + " or exponent), as ByteArrayConverter or StringConverter hand it over, or an integer"
          + " (INT8 to INT64, or a Decimal without a fraction), as SimpleHeaderConverter parses"
          + " it. The delay counts from when the sink writes the record: a classic target queue"
          + " hands it to no consumer before then; a stream keeps the due time as the message's"
          + " x-deliver-at property and its readers see the message at once. A record without the"
          + " header is for delivery at once. A record whose header has no value, a malformed or"
          + " negative one, appears twice, or asks for more than a target queue's maxDelay"
          + " (queue.max.delay.ms for the connector's stream, 7 days by default) or messageTtl is"
          + " errant: reported to the dead-letter topic under"
          + " errors.tolerance=all, otherwise it fails the task; the other records are written."
          + " Read whatever forward.kafka.headers says; the header itself is forwarded like any"
          + " other.";

  public static final String DELIVER_AT_HEADER_CONFIG = "queue.deliver.at.header";
  private static final String DELIVER_AT_HEADER_DOC =
      "Name of a record header holding an absolute due time for its record, or empty (the"
          + " default) for none: milliseconds since 1970-01-01T00:00:00Z in the forms"
          + " queue.delay.header accepts, or a Connect Timestamp (as SimpleHeaderConverter parses"
          + " an ISO-8601 value such as 2026-01-01T00:00:00.000Z). A time not after the worker's"
          + " clock when the record is written means at once; one further ahead than a target"
          + " queue's maxDelay or messageTtl is errant. Otherwise as queue.delay.header; a record"
          + " carrying both headers is errant. Must name another header than queue.delay.header.";

  private static final String RETRY_BACKOFF_MS_DOC =
      "After a transient store error or a queue refusing a batch as full, how long the task keeps"
          + " its partitions paused before it resumes them (rewound to the records not yet"
          + " written); a full queue must also have room again.";

  public static final String WRITE_PIPELINED_CONFIG = "queue.write.pipelined";
  public static final boolean WRITE_PIPELINED_DEFAULT = true;
  private static final String WRITE_PIPELINED_DOC =
      "true: put() hands its batch to the task's writer threads and returns, so Connect"
          + " fetches the next records while the batch is appended and fsync'ed; up to two"
          + " batches are in flight, the second checked, stamped and encoded while the first is"
          + " made durable, and they reach the store in order; records put while both are in"
          + " flight are written together with one barrier; offsets are committed only once"
          + " durable. false: put() returns only after its own batch is durable (one barrier per"
          + " put). Exactly once either way.";

  public static final ConfigDef CONFIG_DEF = configDef();

  private final Routing routing;

  /**
   * @throws ConfigException for a value no key accepts alone, or for the checks across keys of
   *     {@link #crossKeyErrors}
   */
  public QueueSinkConfig(Map<String, String> props) {
    super(CONFIG_DEF, props);
    this.routing = Routing.valueOf(getString(QUEUE_ROUTING_CONFIG).toUpperCase(Locale.ROOT));
    Map<String, String> errors = crossKeyErrors(props);
    if (!errors.isEmpty()) {
      throw new ConfigException(errors.values().iterator().next());
    }
  }

  /**
   * What {@code props} gets wrong that no key's validator sees, by key (empty when nothing): a
   * header key whose raw value has a control character where Connect's trimming would hide it from
   * the validator (leading or trailing) or is blank (so that it would silently mean none), and both
   * header keys naming the same header. Connector {@code validate()} and the constructor share it.
   */
  static Map<String, String> crossKeyErrors(Map<String, String> props) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String key : List.of(DELAY_HEADER_CONFIG, DELIVER_AT_HEADER_CONFIG)) {
      String error = HeaderNames.rawError(key, props.get(key));
      if (error != null) {
        out.put(key, error);
      }
    }
    String delay = props.get(DELAY_HEADER_CONFIG);
    String at = props.get(DELIVER_AT_HEADER_CONFIG);
    if (delay != null && at != null && !delay.trim().isEmpty() && delay.trim().equals(at.trim())) {
      out.putIfAbsent(
          DELIVER_AT_HEADER_CONFIG,
          DELIVER_AT_HEADER_CONFIG
              + " = '"
              + ConfigValidators.shown(at.trim())
              + "' names the same header as "
              + DELAY_HEADER_CONFIG
              + "; expected another header (one holds a delay, the other a time), or empty for"
              + " none");
    }
    return out;
  }

  private static ConfigDef configDef() {
    ConfigDef def = new ConfigDef();
    int order = 0;
    def.define(
        QUEUE_NAME_CONFIG,
        Type.STRING,
        ConfigDef.NO_DEFAULT_VALUE,
        ConfigValidators.queueName(),
        Importance.HIGH,
        QUEUE_NAME_DOC,
        STREAM_GROUP,
        ++order,
        Width.MEDIUM,
        "Stream name");
    def.define(
        QUEUE_ROUTING_CONFIG,
        Type.STRING,
        QUEUE_ROUTING_DEFAULT,
        ConfigDef.CaseInsensitiveValidString.in("exact", "matching"),
        Importance.MEDIUM,
        QUEUE_ROUTING_DOC,
        STREAM_GROUP,
        ++order,
        Width.SHORT,
        "Routing");
    def.define(
        QUEUE_TOPICS_CONFIG,
        Type.LIST,
        "",
        Importance.LOW,
        QUEUE_TOPICS_DOC,
        STREAM_GROUP,
        ++order,
        Width.LONG,
        "Stream topic filters");
    def.define(
        QUEUE_RETENTION_MS_CONFIG,
        Type.LONG,
        0L,
        ConfigDef.Range.atLeast(0),
        Importance.MEDIUM,
        QUEUE_RETENTION_MS_DOC,
        STREAM_GROUP,
        ++order,
        Width.SHORT,
        "Retention by age (ms)");
    def.define(
        QUEUE_RETENTION_BYTES_CONFIG,
        Type.LONG,
        0L,
        ConfigDef.Range.atLeast(0),
        Importance.MEDIUM,
        QUEUE_RETENTION_BYTES_DOC,
        STREAM_GROUP,
        ++order,
        Width.SHORT,
        "Retention by size (bytes)");
    def.define(
        QUEUE_RETENTION_MESSAGES_CONFIG,
        Type.LONG,
        0L,
        ConfigDef.Range.atLeast(0),
        Importance.MEDIUM,
        QUEUE_RETENTION_MESSAGES_DOC,
        STREAM_GROUP,
        ++order,
        Width.SHORT,
        "Retention by count");
    def.define(
        QUEUE_MAX_MESSAGE_BYTES_CONFIG,
        Type.LONG,
        QUEUE_MAX_MESSAGE_BYTES_DEFAULT,
        ConfigDef.Range.atLeast(1),
        Importance.MEDIUM,
        QUEUE_MAX_MESSAGE_BYTES_DOC,
        STREAM_GROUP,
        ++order,
        Width.SHORT,
        "Max message size (bytes)");
    def.define(
        QUEUE_MESSAGE_TTL_MS_CONFIG,
        Type.LONG,
        0L,
        ConfigDef.Range.atLeast(0),
        Importance.LOW,
        QUEUE_MESSAGE_TTL_MS_DOC,
        STREAM_GROUP,
        ++order,
        Width.SHORT,
        "Message TTL (ms)");
    def.define(
        QUEUE_MAX_DELAY_MS_CONFIG,
        Type.LONG,
        QueueConfig.DEFAULT_MAX_DELAY.toMillis(),
        ConfigDef.Range.atLeast(0),
        Importance.LOW,
        QUEUE_MAX_DELAY_MS_DOC,
        STREAM_GROUP,
        ++order,
        Width.SHORT,
        "Max delay (ms)");

    defineStoreKeys(def);

    order = 0;
    def.define(
        FORWARD_KEY_CONFIG,
        Type.BOOLEAN,
        true,
        Importance.LOW,
        FORWARD_KEY_DOC,
        MAPPING_GROUP,
        ++order,
        Width.SHORT,
        "Keep keys");
    def.define(
        FORWARD_HEADERS_CONFIG,
        Type.BOOLEAN,
        true,
        Importance.LOW,
        FORWARD_HEADERS_DOC,
        MAPPING_GROUP,
        ++order,
        Width.SHORT,
        "Keep headers");
    def.define(
        FORWARD_METADATA_CONFIG,
        Type.BOOLEAN,
        true,
        Importance.LOW,
        FORWARD_METADATA_DOC,
        MAPPING_GROUP,
        ++order,
        Width.SHORT,
        "Keep timestamps and coordinates");
    def.define(
        DELAY_HEADER_CONFIG,
        Type.STRING,
        "",
        HeaderNames.validator(),
        Importance.MEDIUM,
        DELAY_HEADER_DOC,
        MAPPING_GROUP,
        ++order,
        Width.MEDIUM,
        "Delay header");
    def.define(
        DELIVER_AT_HEADER_CONFIG,
        Type.STRING,
        "",
        HeaderNames.validator(),
        Importance.LOW,
        DELIVER_AT_HEADER_DOC,
        MAPPING_GROUP,
        ++order,
        Width.MEDIUM,
        "Due time header");

    order = 0;
    defineRetryBackoff(def, ++order, RETRY_BACKOFF_MS_DOC);
    defineRetryTimeout(def, ++order);
    def.define(
        WRITE_PIPELINED_CONFIG,
        Type.BOOLEAN,
        WRITE_PIPELINED_DEFAULT,
        Importance.LOW,
        WRITE_PIPELINED_DOC,
        FLOW_GROUP,
        ++order,
        Width.SHORT,
        "Pipelined writes");
    defineTaskIndex(def);
    return def;
  }

  public String queueName() {
    return getString(QUEUE_NAME_CONFIG);
  }

  public Routing routing() {
    return routing;
  }

  /** The stream's topic filters: configured, or {@code $queue/<name>/#}. */
  public List<String> streamTopics() {
    List<String> topics = getList(QUEUE_TOPICS_CONFIG);
    return topics.isEmpty() ? List.of("$queue/" + queueName() + "/#") : List.copyOf(topics);
  }

  /**
   * The protected contract of the stream: a reserved durable stream with the configured topics,
   * retention, size limit, TTL and maximum delay.
   */
  public QueueConfig streamContract() {
    return QueueConfig.reservedStream(queueName())
        .topics(streamTopics())
        .type(QueueType.STREAM)
        .retention(
            new RetentionPolicy(
                Duration.ofMillis(getLong(QUEUE_RETENTION_MS_CONFIG)),
                getLong(QUEUE_RETENTION_BYTES_CONFIG),
                getLong(QUEUE_RETENTION_MESSAGES_CONFIG)))
        .maxMessageSize(getLong(QUEUE_MAX_MESSAGE_BYTES_CONFIG))
        .messageTtl(Duration.ofMillis(getLong(QUEUE_MESSAGE_TTL_MS_CONFIG)))
        .maxDelay(Duration.ofMillis(getLong(QUEUE_MAX_DELAY_MS_CONFIG)))
        .build();
  }

  /** Maps a contract field (config-file vocabulary) to the connector key that sets it. */
  public static String configKeyOfContractField(String field) {
    return switch (field) {
      case "topics" -> QUEUE_TOPICS_CONFIG;
      case "retention.max_age" -> QUEUE_RETENTION_MS_CONFIG;
      case "retention.max_length_bytes" -> QUEUE_RETENTION_BYTES_CONFIG;
      case "retention.max_length_messages" -> QUEUE_RETENTION_MESSAGES_CONFIG;
      case "limits.max_message_size" -> QUEUE_MAX_MESSAGE_BYTES_CONFIG;
      case "limits.message_ttl" -> QUEUE_MESSAGE_TTL_MS_CONFIG;
      case "limits.max_delay" -> QUEUE_MAX_DELAY_MS_CONFIG;
      default -> QUEUE_NAME_CONFIG;
    };
  }

  public boolean forwardKey() {
    return getBoolean(FORWARD_KEY_CONFIG);
  }

  public boolean forwardHeaders() {
    return getBoolean(FORWARD_HEADERS_CONFIG);
  }

  public boolean forwardMetadata() {
    return getBoolean(FORWARD_METADATA_CONFIG);
  }

  /** {@code queue.delay.header}: the header holding a record's delay; empty for none. */
  public String delayHeader() {
    return getString(DELAY_HEADER_CONFIG);
  }

  /** {@code queue.deliver.at.header}: the header holding a record's due time; empty for none. */
  public String deliverAtHeader() {
    return getString(DELIVER_AT_HEADER_CONFIG);
  }

  public boolean pipelinedWrites() {
    return getBoolean(WRITE_PIPELINED_CONFIG);
  }

  /** Prints the configuration reference (reStructuredText) for the docs. */
  public static void main(String[] args) {
    System.out.println(CONFIG_DEF.toEnrichedRst());
  }
}
