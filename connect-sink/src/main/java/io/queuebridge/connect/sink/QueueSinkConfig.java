package io.queuebridge.connect.sink;

import io.queuebridge.connect.common.ConfigValidators;
import io.queuebridge.connect.common.QueueConnectorConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.config.RetentionPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;

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

  private static final String RETRY_BACKOFF_MS_DOC =
      "After a transient store error or a queue refusing a batch as full, how long the task keeps"
          + " its partitions paused before it resumes them (rewound to the records not yet"
          + " written); a full queue must also have room again.";

  public static final String WRITE_PIPELINED_CONFIG = "queue.write.pipelined";
  public static final boolean WRITE_PIPELINED_DEFAULT = true;
  private static final String WRITE_PIPELINED_DOC =
      "true: put() hands its batch to a writer thread and returns, so Connect fetches the next"
          + " records while the batch is appended and fsync'ed; records put while the writer is"
          + " busy are written together with one barrier; offsets are committed only once"
          + " durable. false: put() returns only after its own batch is durable (one barrier per"
          + " put). Exactly once either way.";

  public static final ConfigDef CONFIG_DEF = configDef();

  private final Routing routing;

  public QueueSinkConfig(Map<String, String> props) {
    super(CONFIG_DEF, props);
    this.routing = Routing.valueOf(getString(QUEUE_ROUTING_CONFIG).toUpperCase(Locale.ROOT));
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
   * retention, size limit and TTL.
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

  public boolean pipelinedWrites() {
    return getBoolean(WRITE_PIPELINED_CONFIG);
  }

  /** Prints the configuration reference (reStructuredText) for the docs. */
  public static void main(String[] args) {
    System.out.println(CONFIG_DEF.toEnrichedRst());
  }
}
