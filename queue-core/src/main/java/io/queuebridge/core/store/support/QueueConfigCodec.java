package io.queuebridge.core.store.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queuebridge.core.config.AckDurability;
import io.queuebridge.core.config.DlqConfig;
import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.config.RetentionPolicy;
import io.queuebridge.core.config.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Support for store implementers: a queue's configuration as JSON, the format every persistent
 * store keeps it in (the file store as the payload of {@code queue.cfg}, inside its envelope with
 * magic {@code QBQC}, version 1; the PostgreSQL store in a column). Every field of {@link
 * QueueConfig} is written; durations are ISO-8601 ({@code PT30S}) and instants ISO-8601 UTC, so
 * values round-trip exactly. Reading requires every field (version 1 has them all) but {@code
 * dedupWindow}, {@code maxDelay} and {@code ordering}, added later (BEHAVIOUR Q-DEDUP, Q-DELAY,
 * Q-ORDER): each is written only when it differs from its default, and absent reads as that
 * default, so configurations stored before them read unchanged and a queue that keeps their
 * defaults is stored byte for byte as before. Unknown fields are ignored. Stateless and
 * thread-safe.
 *
 * <p><b>{@code batchSize} and {@code heartbeatTimeout}</b> are kept in an object {@code
 * groupSettings} ({@code {"batchSize": 3, "heartbeatTimeout": "PT2S"}}), each written only when the
 * queue sets it (above zero) and the object only when it holds one; absent reads as zero, the
 * manager's setting. The top-level {@code batchSize} and {@code heartbeatTimeout} are the fields of
 * earlier releases, in which these settings did nothing: they are ignored when read, so a queue
 * stored by an earlier release keeps using the manager's settings, as it always did (whatever
 * values it stored), and always written with the values those releases defaulted to ({@code 100},
 * {@code PT2M}), so an earlier release still reads the configuration, and a queue that sets neither
 * is stored byte for byte as before.
 *
 * <p>One format for every store instead of a copy in each; not part of the SPI.
 */
public final class QueueConfigCodec {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The top-level {@code batchSize} written for earlier releases (their default); never read. */
  static final int LEGACY_BATCH_SIZE = 100;

  /** The top-level {@code heartbeatTimeout} written for earlier releases; never read. */
  static final String LEGACY_HEARTBEAT_TIMEOUT = "PT2M";

  private QueueConfigCodec() {}

  /** A payload that is not a configuration: not JSON, or a field missing or malformed. */
  private static final class Malformed extends IllegalArgumentException {
    Malformed(String message) {
      super(message);
    }
  }

  /** The configuration as UTF-8 JSON; every field is written. */
  public static byte[] toJson(QueueConfig c) {
    ObjectNode n = JSON.createObjectNode();
    n.put("name", c.name());
    ArrayNode topics = n.putArray("topics");
    c.topics().forEach(topics::add);
    n.put("reserved", c.reserved());
    n.put("type", c.type().name());
    n.put("primaryGroup", c.primaryGroup());
    n.put("durable", c.durable());
    n.put("ackDurability", c.ackDurability().name());
    n.put("expiresAfter", c.expiresAfter().toString());
    n.put("lastConsumerDisconnect", c.lastConsumerDisconnect().map(Instant::toString).orElse(null));
    ObjectNode retry = n.putObject("retryPolicy");
    RetryPolicy r = c.retryPolicy();
    retry.put("maxRetries", r.maxRetries());
    retry.put("initialBackoff", r.initialBackoff().toString());
    retry.put("maxBackoff", r.maxBackoff().toString());
    retry.put("backoffMultiplier", r.backoffMultiplier());
    retry.put("totalTimeout", r.totalTimeout().toString());
    ObjectNode dlq = n.putObject("dlq");
    dlq.put("enabled", c.dlq().enabled());
    dlq.put("topic", c.dlq().topic());
    ObjectNode ret = n.putObject("retention");
    ret.put("retentionTime", c.retention().retentionTime().toString());
    ret.put("retentionBytes", c.retention().retentionBytes());
    ret.put("retentionMessages", c.retention().retentionMessages());
    n.put("maxMessageSize", c.maxMessageSize());
    n.put("maxDepth", c.maxDepth());
    n.put("messageTtl", c.messageTtl().toString());
    n.put("deliveryTimeout", c.deliveryTimeout().toString());
    n.put("batchSize", LEGACY_BATCH_SIZE); // for earlier releases, see the class comment
    n.put("heartbeatTimeout", LEGACY_HEARTBEAT_TIMEOUT);
    if (c.deduplicates()) {
      n.put("dedupWindow", c.dedupWindow().toString()); // absent = off, as in earlier releases
    }
    if (!c.maxDelay().equals(QueueConfig.DEFAULT_MAX_DELAY)) {
      n.put("maxDelay", c.maxDelay().toString()); // absent = the default, as in earlier releases
    }
    if (!c.ordering().isNone()) {
      n.put("ordering", c.ordering().toString()); // absent = none, as in earlier releases
    }
    if (c.batchSize() > 0 || c.heartbeatTimeout().compareTo(Duration.ZERO) > 0) {
      ObjectNode own = n.putObject("groupSettings"); // absent = the manager's
      if (c.batchSize() > 0) {
        own.put("batchSize", c.batchSize());
      }
      if (c.heartbeatTimeout().compareTo(Duration.ZERO) > 0) {
        own.put("heartbeatTimeout", c.heartbeatTimeout().toString());
      }
    }
    try {
      return JSON.writeValueAsBytes(n);
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode queue config " + c.name(), e);
    }
  }

  /**
   * Parses a payload written by {@link #toJson}.
   *
   * @param json the payload; must not be null
   * @throws IllegalArgumentException naming the missing or malformed field, or saying that the
   *     payload is not a JSON object
   */
  public static QueueConfig fromJson(byte[] json) {
    JsonNode n;
    try {
      n = JSON.readTree(json);
    } catch (IOException e) {
      throw new Malformed("not JSON: " + e.getMessage());
    }
    if (n == null || !n.isObject()) {
      throw new Malformed("not a JSON object");
    }
    List<String> topics = new ArrayList<>();
    for (JsonNode t : field(n, "topics")) {
      topics.add(t.asText());
    }
    JsonNode retry = field(n, "retryPolicy");
    JsonNode dlq = field(n, "dlq");
    JsonNode ret = field(n, "retention");
    JsonNode lcd = field(n, "lastConsumerDisconnect");
    JsonNode own = n.get("groupSettings");
    if (own != null && !own.isObject()) {
      throw new Malformed("field 'groupSettings' is not an object");
    }
    try {
      return QueueConfig.durable(text(n, "name"))
          .topics(topics)
          .reserved(bool(n, "reserved"))
          .type(QueueType.valueOf(text(n, "type")))
          .primaryGroup(text(n, "primaryGroup"))
          .durable(bool(n, "durable"))
          .ackDurability(AckDurability.valueOf(text(n, "ackDurability")))
          .expiresAfter(duration(n, "expiresAfter"))
          .lastConsumerDisconnect(lcd.isNull() ? null : Instant.parse(lcd.asText()))
          .retryPolicy(
              new RetryPolicy(
                  (int) number(retry, "maxRetries"),
                  duration(retry, "initialBackoff"),
                  duration(retry, "maxBackoff"),
                  field(retry, "backoffMultiplier").asDouble(),
                  duration(retry, "totalTimeout")))
          .dlq(new DlqConfig(bool(dlq, "enabled"), text(dlq, "topic")))
          .retention(
              new RetentionPolicy(
                  duration(ret, "retentionTime"),
                  number(ret, "retentionBytes"),
                  number(ret, "retentionMessages")))
          .maxMessageSize(number(n, "maxMessageSize"))
          .maxDepth(number(n, "maxDepth"))
          .messageTtl(duration(n, "messageTtl"))
          .deliveryTimeout(duration(n, "deliveryTimeout"))
          // the top-level batchSize and heartbeatTimeout of earlier releases are not read
          .batchSize(own != null && own.has("batchSize") ? (int) number(own, "batchSize") : 0)
          .heartbeatTimeout(
              own != null && own.has("heartbeatTimeout")
                  ? duration(own, "heartbeatTimeout")
                  : Duration.ZERO)
          .dedupWindow(n.has("dedupWindow") ? duration(n, "dedupWindow") : Duration.ZERO)
          .maxDelay(n.has("maxDelay") ? duration(n, "maxDelay") : QueueConfig.DEFAULT_MAX_DELAY)
          .ordering(
              n.has("ordering")
                  ? OrderingKey.parse("ordering", text(n, "ordering"))
                  : OrderingKey.NONE)
          .build();
    } catch (Malformed e) {
      throw e;
    } catch (IllegalArgumentException
        | java.time.DateTimeException
        | io.queuebridge.core.errors.InvalidConfigException e) {
      throw new Malformed("bad value: " + e.getMessage());
    }
  }

  private static JsonNode field(JsonNode n, String name) {
    JsonNode v = n.get(name);
    if (v == null) {
      throw new Malformed("missing field '" + name + "'");
    }
    return v;
  }

  private static String text(JsonNode n, String name) {
    JsonNode v = field(n, name);
    if (!v.isTextual()) {
      throw new Malformed("field '" + name + "' is not a string");
    }
    return v.asText();
  }

  private static boolean bool(JsonNode n, String name) {
    JsonNode v = field(n, name);
    if (!v.isBoolean()) {
      throw new Malformed("field '" + name + "' is not a boolean");
    }
    return v.asBoolean();
  }

  private static long number(JsonNode n, String name) {
    JsonNode v = field(n, name);
    if (!v.isIntegralNumber()) {
      throw new Malformed("field '" + name + "' is not an integer");
    }
    return v.asLong();
  }

  private static Duration duration(JsonNode n, String name) {
    return Duration.parse(text(n, name));
  }
}
