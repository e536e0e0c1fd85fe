package io.queuebridge.connect.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;

/**
 * Renders a {@link ConfigDef} as Markdown tables, one per group in definition order (internal keys
 * left out: they are not for users), and keeps a generated section of a committed document in step
 * with it. Used by the connectors' drift tests.
 */
public final class ConfigReference {
  private ConfigReference() {}

  /** The Markdown reference of {@code def}. */
  public static String markdown(ConfigDef def) {
    Map<String, List<ConfigDef.ConfigKey>> byGroup = new LinkedHashMap<>();
    for (String group : def.groups()) {
      byGroup.put(group, new ArrayList<>());
    }
    List<ConfigDef.ConfigKey> keys = new ArrayList<>(def.configKeys().values());
    keys.sort((a, b) -> Integer.compare(a.orderInGroup, b.orderInGroup));
    for (ConfigDef.ConfigKey key : keys) {
      if (key.internalConfig) {
        continue;
      }
      byGroup
          .computeIfAbsent(key.group == null ? "Other" : key.group, g -> new ArrayList<>())
          .add(key);
    }
    StringBuilder out = new StringBuilder();
    byGroup.forEach(
        (group, groupKeys) -> {
          if (groupKeys.isEmpty()) {
            return;
          }
          out.append("### ").append(group).append("\n\n");
          out.append("| Key | Type | Default | Valid values | Importance | Description |\n");
          out.append("|---|---|---|---|---|---|\n");
          for (ConfigDef.ConfigKey k : groupKeys) {
            out.append("| `")
                .append(k.name)
                .append("` | ")
                .append(k.type.name().toLowerCase(java.util.Locale.ROOT))
                .append(" | ")
                .append(defaultOf(k))
                .append(" | ")
                .append(k.validator == null ? "" : cell(k.validator.toString()))
                .append(" | ")
                .append(k.importance.name().toLowerCase(java.util.Locale.ROOT))
                .append(" | ")
                .append(cell(k.documentation))
                .append(" |\n");
          }
          out.append('\n');
        });
    return out.toString();
  }

  private static String defaultOf(ConfigDef.ConfigKey k) {
    if (!k.hasDefault()) {
      return "(required)";
    }
    if (k.defaultValue == null) {
      return "null";
    }
    String v = ConfigDef.convertToString(k.defaultValue, k.type);
    return v.isEmpty() ? "\"\"" : "`" + v + "`";
  }

  private static String cell(String s) {
    return s.replace("|", "\\|").replace("\n", " ");
  }

  /**
   * Checks that the section {@code name} of {@code doc} is the {@link #markdown} of {@code def};
   * with {@code -Dqueuebridge.docs.update=true} it rewrites the section first.
   *
   * @param what the reference, for the failure message
   * @throws AssertionError if the section drifted from {@code def}
   * @throws IllegalStateException if the markers are missing
   */
  public static void assertUpToDate(Path doc, String name, ConfigDef def, String what)
      throws IOException {
    String generated = markdown(def).strip() + "\n";
    if (Boolean.getBoolean("queuebridge.docs.update")) {
      writeSection(doc, name, generated);
    }
    assertThat(section(doc, name))
        .as(
            what
                + " is out of date; regenerate it with -Dqueuebridge.docs.update=true (see this"
                + " test's javadoc)")
        .isEqualTo(generated);
  }

  /**
   * The text between {@code <!-- BEGIN name -->} and {@code <!-- END name -->} in {@code doc}.
   *
   * @throws IllegalStateException if the markers are missing
   */
  public static String section(Path doc, String name) throws IOException {
    String text = Files.readString(doc, StandardCharsets.UTF_8);
    int begin = text.indexOf(begin(name));
    int end = text.indexOf(end(name));
    if (begin < 0 || end < begin) {
      throw new IllegalStateException(doc + " lacks the markers of section " + name);
    }
    return text.substring(begin + begin(name).length(), end).strip() + "\n";
  }

  /** Replaces the section {@code name} of {@code doc} with {@code content}. */
  public static void writeSection(Path doc, String name, String content) throws IOException {
    String text = Files.readString(doc, StandardCharsets.UTF_8);
    int begin = text.indexOf(begin(name));
    int end = text.indexOf(end(name));
    if (begin < 0 || end < begin) {
      throw new IllegalStateException(doc + " lacks the markers of section " + name);
    }
    String updated =
        text.substring(0, begin + begin(name).length())
            + "\n"
            + content.strip()
            + "\n"
            + text.substring(end);
    Files.writeString(doc, updated, StandardCharsets.UTF_8);
  }

  private static String begin(String name) {
    return "<!-- BEGIN " + name + " (generated: do not edit) -->";
  }

  private static String end(String name) {
    return "<!-- END " + name + " -->";
  }
}
