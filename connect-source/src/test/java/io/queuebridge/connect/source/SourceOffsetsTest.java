package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.json.JsonConverter;
import org.junit.jupiter.api.Test;

class SourceOffsetsTest {
  private static final Map<String, String> P = SourceOffsets.partition("q", "g");

  @Test
  void partitionAndOffsetHaveTheNamedKeys() {
    assertThat(P).containsExactlyInAnyOrderEntriesOf(Map.of("queue", "q", "group", "g"));
    assertThat(SourceOffsets.offset(42)).containsExactlyEntriesOf(Map.of("offset", 42L));
    assertThat(SourceOffsets.nextOffset(P, Map.of("offset", 7))).isEqualTo(7);
  }

  /**
   * Connect finds a stored offset by the serialised bytes of its key, and its offsets REST API
   * re-serialises partitions it has read back: the bytes must not depend on how a map was built.
   */
  @Test
  void partitionSerialisesToTheSameBytesAfterConnectReadsItBack() {
    JsonConverter json = new JsonConverter();
    json.configure(Map.of("schemas.enable", "false"), true);
    byte[] written =
        json.fromConnectData(
            "offsets",
            null,
            List.of("connector", SourceOffsets.partition("orders/eu", "connect-x")));
    Object readBack = json.toConnectData("offsets", written).value();
    assertThat(json.fromConnectData("offsets", null, readBack)).isEqualTo(written);
  }

  @Test
  void badOffsetsAreRefusedNamingPartitionValueAndExpectation() {
    assertThatThrownBy(() -> SourceOffsets.validateOffset(P, Map.of("offset", -1L)))
        .isInstanceOf(ConnectException.class)
        .hasMessageContaining("-1")
        .hasMessageContaining("queue=q");
    assertThatThrownBy(() -> SourceOffsets.validateOffset(P, Map.of("offset", "12")))
        .hasMessageContaining("'12' (String)")
        .hasMessageContaining("expected an integer >= 0");
    assertThatThrownBy(() -> SourceOffsets.validateOffset(P, Map.of("offset", 1.5)))
        .hasMessageContaining("Double");
    assertThatThrownBy(() -> SourceOffsets.validateOffset(P, Map.of("offset", 1, "x", 2)))
        .hasMessageContaining("expected exactly [offset]");
  }

  @Test
  void badPartitionsAreRefused() {
    assertThatThrownBy(() -> SourceOffsets.validatePartition(Map.of("queue", "q"), "g"))
        .hasMessageContaining("expected exactly [queue, group]");
    assertThatThrownBy(
            () -> SourceOffsets.validatePartition(Map.of("queue", "", "group", "g"), "g"))
        .hasMessageContaining("'queue' must be a non-empty string");
    assertThatThrownBy(() -> SourceOffsets.validatePartition(P, "other"))
        .hasMessageContaining("names group 'g'")
        .hasMessageContaining("'other'");
    SourceOffsets.validatePartition(P, "g");
  }
}
