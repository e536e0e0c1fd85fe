package io.queuebridge.connect.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.message.TimestampType;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.sink.SinkRecord;
import org.junit.jupiter.api.Test;

class RecordMapperTest {
  private static SinkRecord record(Object key, Object value, ConnectHeaders headers) {
    return new SinkRecord(
        "t",
        3,
        null,
        key,
        null,
        value,
        42,
        1234L,
        org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME,
        headers);
  }

  @Test
  void bytesPassThroughAndNullStaysNull() {
    PublishRequest r =
        new RecordMapper(true, true, true)
            .toRequest(record(null, null, new ConnectHeaders()), List.of());
    assertThat(r.key()).isNull();
    assertThat(r.value()).isNull();
    byte[] bytes = {0, 1, (byte) 255};
    r =
        new RecordMapper(true, true, true)
            .toRequest(record(bytes, new byte[0], new ConnectHeaders()), List.of());
    assertThat(r.key()).isEqualTo(bytes);
    assertThat(r.value()).isEmpty();
  }

  @Test
  void stringsBecomeUtf8AndByteBuffersTheirRemainingBytes() {
    PublishRequest r =
        new RecordMapper(true, true, true)
            .toRequest(
                record("clé", ByteBuffer.wrap(new byte[] {7, 8, 9}, 1, 2), new ConnectHeaders()),
                List.of());
    assertThat(r.key()).isEqualTo("clé".getBytes(StandardCharsets.UTF_8));
    assertThat(r.value()).containsExactly(8, 9);
  }

  @Test
  void structuredValuesBecomeJsonInSchemaFieldOrder() {
    Schema schema =
        SchemaBuilder.struct()
            .field("b", Schema.INT32_SCHEMA)
            .field("a", Schema.STRING_SCHEMA)
            .build();
    Struct s = new Struct(schema).put("b", 2).put("a", "x");
    PublishRequest r =
        new RecordMapper(true, true, true)
            .toRequest(record(Map.of("k", List.of(1, 2)), s, new ConnectHeaders()), List.of());
    assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo("{\"b\":2,\"a\":\"x\"}");
    assertThat(new String(r.key(), StandardCharsets.UTF_8)).isEqualTo("{\"k\":[1,2]}");
  }

  @Test
  void headersKeepOrderRepeatsAndNullValues() {
    ConnectHeaders h = new ConnectHeaders();
    h.addBytes("a", new byte[] {1});
    h.addString("b", "two");
    h.addBytes("a", new byte[] {3});
    h.add("n", null, Schema.OPTIONAL_BYTES_SCHEMA);
    PublishRequest r =
        new RecordMapper(true, true, true).toRequest(record(null, null, h), List.of());
    assertThat(r.headers())
        .containsExactly(
            Header.of("a", new byte[] {1}),
            Header.of("b", "two"),
            Header.of("a", new byte[] {3}),
            Header.of("n", (byte[]) null));
  }

  @Test
  void metadataKeepsTimestampTypeAndOriginalCoordinates() {
    PublishRequest r =
        new RecordMapper(true, true, true)
            .toRequest(record(null, null, new ConnectHeaders()), List.of());
    assertThat(r.timestamp()).isEqualTo(1234L);
    assertThat(r.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
    assertThat(r.properties())
        .containsEntry(KafkaCoordinates.TOPIC, "t")
        .containsEntry(KafkaCoordinates.PARTITION, "3")
        .containsEntry(KafkaCoordinates.OFFSET, "42");
  }

  @Test
  void switchesDropKeyHeadersAndMetadata() {
    ConnectHeaders h = new ConnectHeaders();
    h.addString("x", "y");
    PublishRequest r =
        new RecordMapper(false, false, false).toRequest(record("k", "v", h), List.of());
    assertThat(r.key()).isNull();
    assertThat(r.headers()).isEmpty();
    assertThat(r.properties()).isEmpty();
    assertThat(r.timestampType()).isEqualTo(TimestampType.NO_TIMESTAMP);
    assertThat(r.value()).isEqualTo("v".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void unserialisableValueIsADataExceptionNamingWhatFailed() {
    Object cyclic =
        new Object() {
          @SuppressWarnings("unused")
          public Object getSelf() {
            return this;
          }
        };
    assertThatThrownBy(
            () ->
                new RecordMapper(true, true, true)
                    .toRequest(record(null, cyclic, new ConnectHeaders()), List.of()))
        .isInstanceOf(DataException.class)
        .hasMessageContaining("value");
  }
}
