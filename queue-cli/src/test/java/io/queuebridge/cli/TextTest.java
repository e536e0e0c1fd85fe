package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class TextTest {
  @Test
  void agesShowTheirTwoLargestUnits() {
    assertThat(Text.age(null)).isEqualTo("-");
    assertThat(Text.age(999L)).isEqualTo("0s");
    assertThat(Text.age(59_999L)).isEqualTo("59s");
    assertThat(Text.age(65_000L)).isEqualTo("1m05s");
    assertThat(Text.age(3_600_000L + 5 * 60_000L + 7_000L)).isEqualTo("1h05m");
    assertThat(Text.age(3 * 86_400_000L + 4 * 3_600_000L)).isEqualTo("3d04h");
  }

  @Test
  void configuredDurationsAreExact() {
    assertThat(Text.duration(Duration.ZERO)).isEqualTo("0");
    assertThat(Text.duration(Duration.ofDays(7))).isEqualTo("7d");
    assertThat(Text.duration(Duration.ofMinutes(90))).isEqualTo("1h30m");
    assertThat(Text.duration(Duration.ofMillis(1500))).isEqualTo("1s500ms");
    assertThat(Text.duration(Duration.ofNanos(1_000_001))).isEqualTo("1ms1ns");
  }

  @Test
  void oneLineJoinsLines() {
    assertThat(Text.oneLine("a\n  b\r\nc")).isEqualTo("a b c");
  }
}
