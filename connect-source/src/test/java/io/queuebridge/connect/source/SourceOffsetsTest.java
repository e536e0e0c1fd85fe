package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.apache.kafka.connect.errors.ConnectException;
import org.junit.jupiter.api.Test;

class SourceOffsetsTest {
  private static final Map<String, String> P = SourceOffsets.partition("q", "g");

  @Test
  void partitionAndOffsetHaveTheNamedKeys() {
    assertThat(P).containsExactlyInAnyOrderEntriesOf(Map.of("queue", "q", "group", "g"));
    assertThat(SourceOffsets.offset(42)).containsExactlyEntriesOf(Map.of("offset", 42L));
    assertThat(SourceOffsets.nextOffset(P, Map.of("offset", 7))).isEqualTo(7);
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
