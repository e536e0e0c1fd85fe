package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.TimestampType;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.converters.ByteArrayConverter;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.Converter;
import org.junit.jupiter.api.Test;

class RecordFactoryTest {
  private static final Map<String, String> P = SourceOffsets.partition("q", "g");

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Message.Builder message() {
    return Message.builder().offset(41).topic("capture/x");
  }

  @Test
  void restoreModeWritesKeyValueHeadersTimestampAndPartitionBack() {
    Message m =
        message()
            .key(b("k"))
            .value(null)
            .header("rep", b("a"))
            .header("nul", (byte[]) null)
            .header("rep", new byte[] {0, (byte) 255})
            .timestamp(1234L, TimestampType.CREATE_TIME)
            .property(KafkaCoordinates.PARTITION, "3")
            .build();
    SourceRecord r = new RecordFactory(TopicNamer.fixed("out"), true, "").toRecord(P, "q", m);
    assertThat(r.topic()).isEqualTo("out");
    assertThat(r.kafkaPartition()).isEqualTo(3);
    assertThat(r.key()).isEqualTo(b("k"));
    assertThat(r.value()).isNull();
    assertThat(r.keySchema()).isEqualTo(Schema.OPTIONAL_BYTES_SCHEMA);
    assertThat(r.valueSchema()).isEqualTo(Schema.OPTIONAL_BYTES_SCHEMA);
    assertThat(r.timestamp()).isEqualTo(1234L);
    assertThat(r.sourcePartition()).isEqualTo(P);
    assertThat(r.sourceOffset()).isEqualTo(Map.of("offset", 42L));
    List<String> headers = new ArrayList<>();
    Converter bytes = new ByteArrayConverter();
    for (Header h : r.headers()) {
      byte[] v = bytes.fromConnectData("out", h.schema(), h.value());
      headers.add(h.key() + "=" + (v == null ? "null" : java.util.Arrays.toString(v)));
    }
    assertThat(headers).containsExactly("rep=[97]", "nul=null", "rep=[0, -1]");
  }

  @Test
  void withoutRestoreModeTheProducerPicksThePartitionAndTheAppendTimeStandsIn() {
    Instant created = Instant.ofEpochMilli(99_000);
    Message m =
        message()
            .value(b("v"))
            .createdAt(created)
            .property(KafkaCoordinates.PARTITION, "3")
            .build();
    SourceRecord r = new RecordFactory(TopicNamer.fixed("out"), false, "").toRecord(P, "q", m);
    assertThat(r.kafkaPartition()).isNull();
    assertThat(r.timestamp()).isEqualTo(99_000L);
    SourceRecord restored =
        new RecordFactory(TopicNamer.fixed("out"), true, "").toRecord(P, "q", m);
    assertThat(restored.timestamp()).as("restore mode invents no timestamp").isNull();
  }

  @Test
  void anUnparsablePartitionIsPoisonInRestoreMode() {
    Message m = message().value(b("v")).property(KafkaCoordinates.PARTITION, "x1").build();
    assertThatThrownBy(
            () -> new RecordFactory(TopicNamer.fixed("out"), true, "").toRecord(P, "q", m))
        .isInstanceOf(DataException.class)
        .hasMessageContaining("'x1'")
        .hasMessageContaining("offset 41");
  }

  @Test
  void deadLettersCarryTheMessageAndTheErrorHeaders() {
    Message m = message().key(b("k")).value(b("v")).header("h", b("1")).build();
    SourceRecord r =
        new RecordFactory(TopicNamer.fixed("out"), true, "dlq").toDeadLetter(P, "q", m, 4, "why");
    assertThat(r.topic()).isEqualTo("dlq");
    assertThat(r.kafkaPartition()).isNull();
    assertThat(r.value()).isEqualTo(b("v"));
    assertThat(r.sourceOffset()).isEqualTo(Map.of("offset", 42L));
    assertThat(
            new String(
                (byte[]) r.headers().lastWithName(RecordFactory.REASON_HEADER).value(),
                StandardCharsets.UTF_8))
        .isEqualTo("why");
    assertThat(
            new String(
                (byte[]) r.headers().lastWithName(RecordFactory.DELIVERY_COUNT_HEADER).value(),
                StandardCharsets.UTF_8))
        .isEqualTo("4");
    assertThat(
            new String(
                (byte[]) r.headers().lastWithName(RecordFactory.TOPIC_HEADER).value(),
                StandardCharsets.UTF_8))
        .isEqualTo("capture/x");
    assertThat(r.headers().lastWithName("h")).isNotNull();
  }

  private static List<String> headersOf(SourceRecord r) {
    List<String> out = new ArrayList<>();
    for (Header h : r.headers()) {
      out.add(h.key() + "=" + new String((byte[]) h.value(), StandardCharsets.UTF_8));
    }
    return out;
  }

  @Test
  void aDueTimeIsWrittenToTheDueTimeHeaderInPlaceOfAHeaderOfThatName() {
    Message m =
        message()
            .value(b("v"))
            .header("due", b("stale"))
            .header("h", b("1"))
            .header("due", b("stale again"))
            .property(MessageProperties.DELIVER_AT, "2026-12-03T10:00:00.123Z")
            .build();
    RecordFactory f = new RecordFactory(TopicNamer.fixed("out"), false, "dlq", "due");
    assertThat(headersOf(f.toRecord(P, "q", m))).containsExactly("h=1", "due=1796292000123");
    assertThat(headersOf(f.toDeadLetter(P, "q", m, 1, "why")))
        .as("a dead letter carries the due time too")
        .startsWith("h=1", "due=1796292000123");
    assertThat(headersOf(new RecordFactory(TopicNamer.fixed("out"), false, "").toRecord(P, "q", m)))
        .as("without the setting the headers are the message's")
        .containsExactly("due=stale", "h=1", "due=stale again");
  }

  @Test
  void aMessageWithoutADueTimeKeepsItsHeaders() {
    Message m = message().value(b("v")).header("due", b("mine")).build();
    Message unparsable =
        message().value(b("v")).property(MessageProperties.DELIVER_AT, "tomorrow").build();
    RecordFactory f = new RecordFactory(TopicNamer.fixed("out"), false, "", "due");
    assertThat(headersOf(f.toRecord(P, "q", m))).containsExactly("due=mine");
    assertThat(headersOf(f.toRecord(P, "q", unparsable))).isEmpty();
  }

  @Test
  void theDueTimeIsRoundedUpToTheMillisecondAndNeverNegative() {
    assertThat(RecordFactory.epochMillisUp(Instant.ofEpochMilli(5))).isEqualTo(5);
    assertThat(RecordFactory.epochMillisUp(Instant.ofEpochSecond(0, 5_000_001))).isEqualTo(6);
    assertThat(RecordFactory.epochMillisUp(Instant.ofEpochSecond(0, 1))).isEqualTo(1);
    assertThat(RecordFactory.epochMillisUp(Instant.ofEpochSecond(-1))).isZero();
    assertThat(RecordFactory.epochMillisUp(Instant.EPOCH)).isZero();
  }
}
