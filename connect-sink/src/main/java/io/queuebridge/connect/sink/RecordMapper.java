package io.queuebridge.connect.sink;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.message.TimestampType;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.sink.SinkRecord;

/**
 * Turns a {@link SinkRecord} into a {@link PublishRequest}, losslessly where the converters allow:
 * bytes pass through ({@code ByteArrayConverter} for keys, values and headers is the recommended
 * setup), strings become UTF-8, structured values become JSON, null stays null, headers keep order
 * and repeated keys, and the record's timestamp and Kafka coordinates are kept. A due time the
 * record asks for in its delay headers ({@code queue.delay.header}, {@code
 * queue.deliver.at.header}) is set on the request once every target queue accepts it ({@link
 * DueTimeHeaders}); those headers are forwarded like any other.
 *
 * <p>Stateless apart from its switches; thread-safe.
 */
final class RecordMapper {
  private static final ObjectMapper JSON = new ObjectMapper();

  // The partition numbers most topics have, as strings made once instead of once per record.
  private static final String[] PARTITIONS = new String[256];

  static {
    for (int i = 0; i < PARTITIONS.length; i++) {
      PARTITIONS[i] = Integer.toString(i);
    }
  }

  private final boolean keepKey;
  private final boolean keepHeaders;
  private final boolean keepMetadata;
  private final DueTimeHeaders dueTimes;

  /** A mapper that reads no delay header. */
  RecordMapper(boolean keepKey, boolean keepHeaders, boolean keepMetadata) {
    this(keepKey, keepHeaders, keepMetadata, DueTimeHeaders.NONE);
  }

  RecordMapper(
      boolean keepKey, boolean keepHeaders, boolean keepMetadata, DueTimeHeaders dueTimes) {
    this.keepKey = keepKey;
    this.keepHeaders = keepHeaders;
    this.keepMetadata = keepMetadata;
    this.dueTimes = dueTimes;
  }

  /** As {@code config} says; a due time is measured against {@code clock}. */
  RecordMapper(QueueSinkConfig config, Clock clock) {
    this(
        config.forwardKey(),
        config.forwardHeaders(),
        config.forwardMetadata(),
        DueTimeHeaders.of(config, clock));
  }

  /**
   * The request for one record, going to {@code targets}.
   *
   * @param targets the queues the request is for: each must accept its due time
   * @throws DataException if a key, value or header cannot be turned into bytes, or the record's
   *     due time is malformed or not accepted by a target ({@link DueTimeHeaders#apply})
   */
  PublishRequest toRequest(SinkRecord record, List<QueueConfig> targets) {
    PublishRequest.Builder b = PublishRequest.builder(record.topic());
    dueTimes.apply(record, targets, b);
    if (keepKey) {
      b.key(toBytes(record.key(), "key"));
    }
    b.value(toBytes(record.value(), "value"));
    if (keepHeaders && !record.headers().isEmpty()) {
      List<io.queuebridge.core.message.Header> headers = new ArrayList<>();
      for (Header h : record.headers()) {
        headers.add(
            io.queuebridge.core.message.Header.of(
                h.key(), toBytes(h.value(), "header " + h.key())));
      }
      b.headers(headers);
    }
    if (keepMetadata) {
      if (record.timestamp() != null) {
        b.timestamp(record.timestamp(), timestampType(record.timestampType()));
      }
      b.property(KafkaCoordinates.TOPIC, record.originalTopic());
      b.property(KafkaCoordinates.PARTITION, partition(record.originalKafkaPartition()));
      b.property(KafkaCoordinates.OFFSET, String.valueOf(record.originalKafkaOffset()));
    }
    // The key and value are the converter's own arrays, or ones toBytes has just made: nobody
    // writes to them afterwards, so the request takes them without a copy.
    return b.buildOwned();
  }

  /** {@code partition} as the {@link KafkaCoordinates#PARTITION} property's value. */
  private static String partition(Integer partition) {
    return partition != null && partition >= 0 && partition < PARTITIONS.length
        ? PARTITIONS[partition]
        : String.valueOf(partition);
  }

  private static TimestampType timestampType(org.apache.kafka.common.record.TimestampType type) {
    if (type == null) {
      return TimestampType.NO_TIMESTAMP;
    }
    return switch (type) {
      case CREATE_TIME -> TimestampType.CREATE_TIME;
      case LOG_APPEND_TIME -> TimestampType.LOG_APPEND_TIME;
      case NO_TIMESTAMP_TYPE -> TimestampType.NO_TIMESTAMP;
    };
  }

  static byte[] toBytes(Object value, String what) {
    if (value == null) {
      return null;
    }
    if (value instanceof byte[] bytes) {
      return bytes;
    }
    if (value instanceof ByteBuffer buffer) {
      ByteBuffer dup = buffer.duplicate();
      byte[] out = new byte[dup.remaining()];
      dup.get(out);
      return out;
    }
    if (value instanceof String s) {
      return s.getBytes(StandardCharsets.UTF_8);
    }
    try {
      return JSON.writeValueAsBytes(toJsonTree(value));
    } catch (JsonProcessingException | RuntimeException e) {
      throw new DataException(
          "cannot serialise the " + what + " (" + value.getClass().getName() + ") as JSON", e);
    }
  }

  private static Object toJsonTree(Object value) {
    if (value instanceof Struct struct) {
      Map<String, Object> out = new LinkedHashMap<>();
      for (Field f : struct.schema().fields()) {
        out.put(f.name(), toJsonTree(struct.get(f)));
      }
      return out;
    }
    if (value instanceof Map<?, ?> map) {
      Map<String, Object> out = new LinkedHashMap<>();
      map.forEach((k, v) -> out.put(String.valueOf(k), toJsonTree(v)));
      return out;
    }
    if (value instanceof List<?> list) {
      return list.stream().map(RecordMapper::toJsonTree).toList();
    }
    if (value instanceof ByteBuffer buffer) {
      return toBytes(buffer, "bytes");
    }
    return value;
  }
}
