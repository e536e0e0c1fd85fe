package io.queuebridge.connect.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.junit.jupiter.params.provider.Arguments;

/**
 * The hostile values of the connectors' {@code validate} tables, per key kind, and the checks every
 * answer must pass: the value comes back as an error on its own key, naming the key and the value
 * (shown safely) and saying what was expected.
 */
public final class HostileConfigValues {
  private HostileConfigValues() {}

  /** Hostile values for a number key: negative, beyond the type, not a number, empty. */
  public static final List<String> NUMBERS =
      List.of(
          "-1",
          "-2147483649",
          "-9223372036854775808",
          "9223372036854775807",
          "99999999999999999999",
          "1e3",
          "0x10",
          "abc",
          "");

  /** Hostile values for a name key (a queue, stream, group or topic name). */
  public static final List<String> NAMES =
      List.of("", "a\u0000b", "line\nbreak", "lone\uD800", "x".repeat(10_000));

  /**
   * One case per (number key of {@code def} not in {@code skip}, hostile number), named {@code key
   * = value}: the arguments are the key and the value.
   */
  public static Stream<Arguments> numberCases(ConfigDef def, Set<String> skip) {
    List<Arguments> out = new ArrayList<>();
    for (ConfigDef.ConfigKey k : def.configKeys().values()) {
      boolean number =
          k.type == ConfigDef.Type.INT
              || k.type == ConfigDef.Type.LONG
              || k.type == ConfigDef.Type.SHORT
              || k.type == ConfigDef.Type.DOUBLE;
      if (!number || skip.contains(k.name)) {
        continue;
      }
      for (String v : NUMBERS) {
        out.add(arguments(named(k.name + " = " + shown(v), k.name), v));
      }
    }
    return out.stream();
  }

  /** The value as a message shows it: control characters as {@code \\uXXXX}, long ones cut. */
  public static String shown(String v) {
    if (v.isEmpty()) {
      return "(empty)";
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < Math.min(v.length(), 40); i++) {
      char c = v.charAt(i);
      sb.append(
          Character.isISOControl(c) || Character.isSurrogate(c)
              ? String.format("\\u%04X", (int) c)
              : String.valueOf(c));
    }
    return v.length() > 40 ? sb + "...(" + v.length() + " chars)" : sb.toString();
  }

  /** Every error of a {@code validate} answer, by key. */
  public static Map<String, List<String>> errors(Config config) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (ConfigValue v : config.configValues()) {
      if (!v.errorMessages().isEmpty()) {
        out.put(v.name(), v.errorMessages());
      }
    }
    return out;
  }

  /**
   * The answer refuses {@code value} on {@code key}, and only there: every message on it names the
   * value (its first characters when long, a safe rendering of control characters) and says what
   * was expected.
   */
  public static void assertRefusedOnItsKey(
      Map<String, List<String>> errors, String key, String value) {
    assertThat(errors).as("errors of %s = %s", key, shown(value)).containsOnlyKeys(key);
    for (String message : errors.get(key)) {
      assertThat(message)
          .as("the message on %s", key)
          .containsIgnoringCase(key)
          .doesNotContain("\u0000", "\n")
          .hasSizeLessThan(1_000)
          .containsPattern(
              "(?i)(must|expected|not a number|not a valid|at least|at most|between|one of|absolute"
                  + "|non-empty|empty|installed|refused)");
      if (!value.isEmpty()) {
        String head = value.substring(0, Math.min(value.length(), 20));
        boolean plain =
            head.chars()
                .noneMatch(c -> Character.isISOControl(c) || Character.isSurrogate((char) c));
        if (plain && value.contains(",")) { // a list: the message names the element refused
          assertThat(Stream.of(value.split(",", -1)).map(e -> "'" + e + "'"))
              .as("the message names the element refused")
              .anyMatch(message::contains);
        } else if (plain) {
          assertThat(message).as("the message names the value").contains(head);
        } else {
          assertThat(message)
              .as("the message shows the value safely")
              .containsPattern("\\\\u[0-9A-F]{4}");
        }
      }
    }
  }
}
