package io.queuebridge.examples.quickstart;

import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * A Kafka record, or a stream message, reduced to what the quickstart compares and prints: where it
 * is (topic, partition, offset), its timestamp, key, value and headers. Byte arrays are copied in
 * and never exposed, so a snapshot is immutable and thread-safe.
 *
 * @param topic the Kafka topic, or for a stream message the Kafka topic it was captured from
 * @param partition the Kafka partition (of the capture, for a stream message), -1 when unknown
 * @param offset the Kafka offset (of the capture, for a stream message), -1 when unknown
 * @param position the offset in the stream for a stream message, else the Kafka offset
 */
public record RecordSnapshot(
    String topic,
    int partition,
    long offset,
    long position,
    long timestamp,
    byte[] key,
    byte[] value,
    List<Header> headers) {

  public RecordSnapshot {
    key = key == null ? null : key.clone();
    value = value == null ? null : value.clone();
    headers = List.copyOf(headers);
  }

  /** A record as produced, at the coordinates the broker gave it. */
  public static RecordSnapshot produced(ProducerRecord<byte[], byte[]> r, RecordMetadata meta) {
    return new RecordSnapshot(
        meta.topic(),
        meta.partition(),
        meta.offset(),
        meta.offset(),
        r.timestamp() != null ? r.timestamp() : meta.timestamp(),
        r.key(),
        r.value(),
        headers(r.headers()));
  }

  /** A record as consumed. */
  public static RecordSnapshot consumed(ConsumerRecord<byte[], byte[]> r) {
    return new RecordSnapshot(
        r.topic(),
        r.partition(),
        r.offset(),
        r.offset(),
        r.timestamp(),
        r.key(),
        r.value(),
        headers(r.headers()));
  }

  /** A stream message, with the Kafka coordinates the sink recorded (-1 when it recorded none). */
  public static RecordSnapshot stored(Message m) {
    String partition = m.properties().get(KafkaCoordinates.PARTITION);
    String offset = m.properties().get(KafkaCoordinates.OFFSET);
    String topic = m.properties().getOrDefault(KafkaCoordinates.TOPIC, m.topic());
    return new RecordSnapshot(
        topic,
        partition == null ? -1 : Integer.parseInt(partition),
        offset == null ? -1 : Long.parseLong(offset),
        m.offset(),
        m.timestamp(),
        m.key(),
        m.value(),
        m.headers());
  }

  private static List<Header> headers(org.apache.kafka.common.header.Headers headers) {
    List<Header> out = new ArrayList<>();
    headers.forEach(h -> out.add(Header.of(h.key(), h.value())));
    return out;
  }

  @Override
  public byte[] key() {
    return key == null ? null : key.clone();
  }

  @Override
  public byte[] value() {
    return value == null ? null : value.clone();
  }

  /** Whether key, value and headers (order, repeated keys, bytes, null values) are equal. */
  public boolean sameContent(RecordSnapshot other) {
    return Arrays.equals(key, other.key)
        && Arrays.equals(value, other.value)
        && headers.equals(other.headers);
  }

  /**
   * What differs from {@code original} among key, value, headers and, when asked, timestamp and
   * partition; empty when nothing does.
   */
  public List<String> differencesFrom(RecordSnapshot original, boolean placement) {
    List<String> out = new ArrayList<>();
    if (!Arrays.equals(key, original.key)) {
      out.add("key " + show(key) + " != " + show(original.key));
    }
    if (!Arrays.equals(value, original.value)) {
      out.add("value " + show(value) + " != " + show(original.value));
    }
    if (!headers.equals(original.headers)) {
      out.add("headers " + showHeaders() + " != " + original.showHeaders());
    }
    if (placement && timestamp != original.timestamp) {
      out.add("timestamp " + timestamp + " != " + original.timestamp);
    }
    if (placement && partition != original.partition) {
      out.add("partition " + partition + " != " + original.partition);
    }
    return out;
  }

  /** {@code topic[partition]@offset}. */
  public String coordinates() {
    return partition < 0 ? "-" : topic + "[" + partition + "]@" + offset;
  }

  /** The key for display: text when it is UTF-8, else hex; {@code null} for none. */
  public String showKey() {
    return show(key);
  }

  /** The value for display: text when it is UTF-8, else hex; {@code (tombstone)} for null. */
  public String showValue() {
    return value == null ? "(tombstone)" : show(value);
  }

  /** The headers for display: {@code k=v, ...} in order. */
  public String showHeaders() {
    List<String> parts = new ArrayList<>();
    for (Header h : headers) {
      parts.add(h.key() + "=" + show(h.value()));
    }
    return String.join(", ", parts);
  }

  static String show(byte[] bytes) {
    if (bytes == null) {
      return "null";
    }
    try {
      String text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(bytes))
              .toString();
      if (text.chars().noneMatch(Character::isISOControl)) {
        return text;
      }
    } catch (CharacterCodingException notText) {
      // fall through to hex
    }
    return "0x" + HexFormat.of().formatHex(bytes);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RecordSnapshot r
        && partition == r.partition
        && offset == r.offset
        && position == r.position
        && timestamp == r.timestamp
        && Objects.equals(topic, r.topic)
        && sameContent(r);
  }

  @Override
  public int hashCode() {
    return Objects.hash(topic, partition, offset, position, timestamp, Arrays.hashCode(value));
  }

  @Override
  public String toString() {
    return coordinates()
        + " key="
        + showKey()
        + " value="
        + showValue()
        + " headers=["
        + showHeaders()
        + "]";
  }
}
