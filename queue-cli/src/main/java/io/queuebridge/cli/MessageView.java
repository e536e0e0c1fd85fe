package io.queuebridge.cli;

import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.TimestampType;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One message as {@code tail} shows it; {@code -o json} prints one of these per line.
 *
 * @param queue the queue it was read from
 * @param offset its offset
 * @param id the publisher-side id; empty when none was assigned
 * @param topic the topic it was published or captured on
 * @param createdAt when the queue accepted it (null when the store does not record it)
 * @param expiresAt when it expires; null = never
 * @param key the key; null = none
 * @param value the value; null = a tombstone
 * @param headers the headers, in order (keys may repeat)
 * @param properties every message property (queue metadata), in order
 * @param timestamp the record timestamp in epoch milliseconds; null when it has none
 * @param timestampType {@code create_time}, {@code log_append_time} or {@code no_timestamp}
 * @param kafka where the sink read it in Kafka; null when it was not captured from Kafka
 */
record MessageView(
    String queue,
    long offset,
    String id,
    String topic,
    Instant createdAt,
    Instant expiresAt,
    Payload key,
    Payload value,
    List<HeaderView> headers,
    Map<String, String> properties,
    Long timestamp,
    String timestampType,
    Kafka kafka) {

  /** One header: its key and value. */
  record HeaderView(String key, Payload value) {}

  /** The Kafka coordinates the sink recorded, as recorded (message properties are text). */
  record Kafka(String topic, String partition, String offset) {}

  static MessageView of(String queue, Message m, boolean hex) {
    Map<String, String> props = m.properties();
    Kafka kafka =
        props.containsKey(KafkaCoordinates.TOPIC)
            ? new Kafka(
                props.get(KafkaCoordinates.TOPIC),
                props.get(KafkaCoordinates.PARTITION),
                props.get(KafkaCoordinates.OFFSET))
            : null;
    return new MessageView(
        queue,
        m.offset(),
        m.id(),
        m.topic(),
        m.createdAt(),
        m.expiresAt(),
        Payload.of(m.keyUnsafe(), hex),
        Payload.of(m.valueUnsafe(), hex),
        m.headers().stream().map(h -> header(h, hex)).toList(),
        props,
        m.timestampType() == TimestampType.NO_TIMESTAMP ? null : m.timestamp(),
        m.timestampType().name().toLowerCase(Locale.ROOT),
        kafka);
  }

  private static HeaderView header(Header h, boolean hex) {
    return new HeaderView(h.key(), Payload.of(h.valueUnsafe(), hex));
  }
}
