package io.queuebridge.core.store.file;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queuebridge.core.AckDurability;
import io.queuebridge.core.DlqConfig;
import io.queuebridge.core.QueueConfig;
import io.queuebridge.core.QueueType;
import io.queuebridge.core.RetentionPolicy;
import io.queuebridge.core.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A queue's configuration as the JSON payload of {@code queue.cfg} (inside a {@link Blobs}
 * envelope, magic {@code QBQC}, version 1). Every field of {@link QueueConfig} is written;
 * durations are ISO-8601 ({@code PT30S}) and instants ISO-8601 UTC, so values round-trip exactly.
 * Reading requires every field (version 1 has them all); unknown fields are ignored. Stateless and
 * thread-safe.
 *
 * <p>Public so that other persistent stores (the PostgreSQL store keeps the same JSON in a column)
 * share one format instead of copying it; not part of the SPI.
 */
public final class QueueConfigCodec {
  private static final ObjectMapper JSON = new ObjectMapper();

  private QueueConfigCodec() {}

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
    n.put("batchSize", c.batchSize());
    n.put("heartbeatTimeout", c.heartbeatTimeout().toString());
    try {
      return JSON.writeValueAsBytes(n);
    } catch (IOException e) {
      throw new IllegalStateException("cannot encode queue config " + c.name(), e);
    }
  }

  /**
   * Parses a payload written by {@link #toJson}.
   *
   * @throws RuntimeException (an internal {@code FormatException}) naming the missing or malformed
   *     field
   */
  public static QueueConfig fromJson(byte[] json) {
    JsonNode n;
    try {
      n = JSON.readTree(json);
    } catch (IOException e) {
      throw new FormatException("not JSON: " + e.getMessage(), -1);
    }
    if (n == null || !n.isObject()) {
      throw new FormatException("not a JSON object", -1);
    }
    List<String> topics = new ArrayList<>();
    for (JsonNode t : field(n, "topics")) {
      topics.add(t.asText());
    }
    JsonNode retry = field(n, "retryPolicy");
    JsonNode dlq = field(n, "dlq");
    JsonNode ret = field(n, "retention");
    JsonNode lcd = field(n, "lastConsumerDisconnect");
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
          .batchSize((int) number(n, "batchSize"))
          .heartbeatTimeout(duration(n, "heartbeatTimeout"))
          .build();
    } catch (IllegalArgumentException | java.time.DateTimeException e) {
      throw new FormatException("bad value: " + e.getMessage(), -1);
    }
  }

  private static JsonNode field(JsonNode n, String name) {
    JsonNode v = n.get(name);
    if (v == null) {
      throw new FormatException("missing field '" + name + "'", -1);
    }
    return v;
  }

  private static String text(JsonNode n, String name) {
    JsonNode v = field(n, name);
    if (!v.isTextual()) {
      throw new FormatException("field '" + name + "' is not a string", -1);
    }
    return v.asText();
  }

  private static boolean bool(JsonNode n, String name) {
    JsonNode v = field(n, name);
    if (!v.isBoolean()) {
      throw new FormatException("field '" + name + "' is not a boolean", -1);
    }
    return v.asBoolean();
  }

  private static long number(JsonNode n, String name) {
    JsonNode v = field(n, name);
    if (!v.isIntegralNumber()) {
      throw new FormatException("field '" + name + "' is not an integer", -1);
    }
    return v.asLong();
  }

  private static Duration duration(JsonNode n, String name) {
    return Duration.parse(text(n, name));
  }
}
