package io.queuebridge.connect.source;

import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Turns stored messages into {@link SourceRecord}s that {@code ByteArrayConverter} passes through
 * byte for byte: key and value with {@link Schema#OPTIONAL_BYTES_SCHEMA} (null stays null, empty
 * stays empty), every header in order, repeats included, as bytes with the same schema (a null
 * header value stays null).
 *
 * <p><b>Timestamp.</b> The message's record timestamp when it has one; otherwise, outside restore
 * mode, the time the queue accepted it; otherwise none (the producer stamps it).
 *
 * <p><b>Restore mode</b> also writes the record to the partition the sink recorded ({@link
 * KafkaCoordinates#PARTITION}); a message without that property goes wherever the producer puts it,
 * one with an unparsable or negative value is poison ({@link DataException}).
 *
 * <p><b>Due time.</b> With a due-time header name ({@code queue.deliver.at.header}), a message that
 * has a due time ({@link Message#deliverAt()}) carries it in that header, in place of any header of
 * that name it has: epoch milliseconds as ASCII digits, rounded up, 0 for a time before 1970.
 *
 * <p><b>Dead letters</b> ({@link #toDeadLetter}) carry the message's key, value and headers and the
 * {@code __connect.errors.*} headers below, as UTF-8 bytes.
 *
 * <p>Not thread-safe (the {@link TopicNamer} caches); one per task, used by the poll thread.
 */
final class RecordFactory {
  static final String REASON_HEADER = "__connect.errors.reason";
  static final String QUEUE_HEADER = "__connect.errors.queue.name";
  static final String OFFSET_HEADER = "__connect.errors.queue.offset";
  static final String DELIVERY_COUNT_HEADER = "__connect.errors.delivery.count";
  static final String TOPIC_HEADER = "__connect.errors.topic";

  private static final Schema BYTES = Schema.OPTIONAL_BYTES_SCHEMA;

  private final TopicNamer namer;
  private final boolean restore;
  private final String deadLetterTopic;
  private final String deliverAtHeader;

  RecordFactory(TopicNamer namer, boolean restore, String deadLetterTopic) {
    this(namer, restore, deadLetterTopic, "");
  }

  /**
   * @param deliverAtHeader the header to write a message's due time to; empty for none
   */
  RecordFactory(TopicNamer namer, boolean restore, String deadLetterTopic, String deliverAtHeader) {
    this.namer = namer;
    this.restore = restore;
    this.deadLetterTopic = deadLetterTopic;
    this.deliverAtHeader = deliverAtHeader;
  }

  /** Whether poison messages are also written to a Kafka topic. */
  boolean hasDeadLetterTopic() {
    return !deadLetterTopic.isEmpty();
  }

  /**
   * The record for {@code message} of {@code queue}, carrying {@code partition} and the offset
   * after the message.
   *
   * @throws DataException if the message cannot become a record (no legal topic, a bad partition in
   *     restore mode): the message is poison
   */
  SourceRecord toRecord(Map<String, ?> sourcePartition, String queue, Message message) {
    String topic = namer.topicFor(queue, message);
    Integer kafkaPartition = restore ? originalPartition(queue, message) : null;
    Long timestamp = timestamp(message);
    return new SourceRecord(
        sourcePartition,
        SourceOffsets.offset(message.offset() + 1),
        topic,
        kafkaPartition,
        BYTES,
        message.keyUnsafe(),
        BYTES,
        message.valueUnsafe(),
        timestamp,
        headers(message));
  }

  /**
   * The dead letter of {@code message} for the Kafka dead-letter topic.
   *
   * @throws IllegalStateException if no dead-letter topic is configured
   */
  SourceRecord toDeadLetter(
      Map<String, ?> sourcePartition,
      String queue,
      Message message,
      int deliveryCount,
      String reason) {
    if (deadLetterTopic.isEmpty()) {
      throw new IllegalStateException("no Kafka dead-letter topic configured");
    }
    ConnectHeaders headers = headers(message);
    headers.add(REASON_HEADER, utf8(reason), BYTES);
    headers.add(QUEUE_HEADER, utf8(queue), BYTES);
    headers.add(OFFSET_HEADER, utf8(Long.toString(message.offset())), BYTES);
    headers.add(DELIVERY_COUNT_HEADER, utf8(Integer.toString(deliveryCount)), BYTES);
    headers.add(TOPIC_HEADER, utf8(TopicNamer.capturedTopic(message)), BYTES);
    return new SourceRecord(
        sourcePartition,
        SourceOffsets.offset(message.offset() + 1),
        deadLetterTopic,
        null,
        BYTES,
        message.keyUnsafe(),
        BYTES,
        message.valueUnsafe(),
        timestamp(message),
        headers);
  }

  private Long timestamp(Message message) {
    if (message.timestamp() >= 0) {
      return message.timestamp();
    }
    if (!restore && message.createdAt() != null) {
      return message.createdAt().toEpochMilli();
    }
    return null;
  }

  private static Integer originalPartition(String queue, Message message) {
    String p = message.properties().get(KafkaCoordinates.PARTITION);
    if (p == null) {
      return null;
    }
    int partition;
    try {
      partition = Integer.parseInt(p.trim());
    } catch (NumberFormatException e) {
      throw new DataException(
          "restore mode: property "
              + KafkaCoordinates.PARTITION
              + " of offset "
              + message.offset()
              + " in queue "
              + queue
              + " is '"
              + p
              + "', not a partition number");
    }
    if (partition < 0) {
      throw new DataException(
          "restore mode: property "
              + KafkaCoordinates.PARTITION
              + " of offset "
              + message.offset()
              + " in queue "
              + queue
              + " is negative: "
              + partition);
    }
    return partition;
  }

  private ConnectHeaders headers(Message message) {
    ConnectHeaders headers = new ConnectHeaders();
    Instant due = deliverAtHeader.isEmpty() ? null : message.deliverAt();
    for (Header h : message.headers()) {
      if (due == null || !deliverAtHeader.equals(h.key())) {
        headers.add(h.key(), h.valueUnsafe(), BYTES);
      }
    }
    if (due != null) {
      headers.add(deliverAtHeader, utf8(Long.toString(epochMillisUp(due))), BYTES);
    }
    return headers;
  }

  /** {@code due} in milliseconds since the epoch, rounded up (never before it); 0 before 1970. */
  static long epochMillisUp(Instant due) {
    if (due.isBefore(Instant.EPOCH)) {
      return 0;
    }
    long millis = due.toEpochMilli();
    return due.getNano() % 1_000_000 == 0 ? millis : millis + 1;
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
