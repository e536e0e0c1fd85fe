package io.queuebridge.core.topic;

import io.queuebridge.core.InvalidConfigException;
import java.nio.charset.StandardCharsets;

/**
 * MQTT-style topic filters: {@code /} separates levels, {@code +} matches one level, {@code #} the
 * rest (SEMANTICS B §4.1–4.2). Stateless and thread-safe.
 *
 * <p>NOTE: a straightforward split-based implementation; the topic work replaces {@link #matches}
 * with an allocation-free one and keeps this as the reference in tests.
 */
public final class TopicFilters {
  private TopicFilters() {}

  /** Whether {@code filter} matches {@code topic} ({@code T-MATCH}). */
  public static boolean matches(String filter, String topic) {
    if (filter == null || topic == null || filter.isEmpty() || topic.isEmpty()) {
      return false;
    }
    if (filter.equals(topic)) {
      return true;
    }
    String[] f = filter.split("/", -1);
    String[] t = topic.split("/", -1);
    if (topic.charAt(0) == '$'
        && (filter.charAt(0) != '$' || f[0].equals("+") || f[0].equals("#"))) {
      return false;
    }
    for (int i = 0; i < f.length; i++) {
      if (f[i].equals("#")) {
        return true;
      }
      if (i >= t.length) {
        return false;
      }
      if (!f[i].equals("+") && !f[i].equals(t[i])) {
        return false;
      }
    }
    return f.length == t.length;
  }

  /**
   * Checks a topic filter (§4.2).
   *
   * @throws InvalidConfigException naming the filter and the rule it breaks
   */
  public static void validateFilter(String filter) {
    if (filter == null || filter.isEmpty()) {
      throw new InvalidConfigException("topic filter", filter, "a non-empty topic filter");
    }
    checkText("topic filter", filter);
    String inner = filter;
    if (filter.startsWith("$share/")) {
      int slash = filter.indexOf('/', "$share/".length());
      String name = slash < 0 ? filter.substring(7) : filter.substring(7, slash);
      if (slash < 0 || name.isEmpty() || name.contains("+") || name.contains("#")) {
        throw new InvalidConfigException(
            "topic filter", filter, "$share/<name>/<filter> with a non-empty name without + or #");
      }
      inner = filter.substring(slash + 1);
      if (inner.isEmpty()) {
        throw new InvalidConfigException(
            "topic filter", filter, "a non-empty filter after $share/<name>/");
      }
    }
    String[] levels = inner.split("/", -1);
    for (int i = 0; i < levels.length; i++) {
      String level = levels[i];
      if (level.contains("#") && (!level.equals("#") || i != levels.length - 1)) {
        throw new InvalidConfigException(
            "topic filter", filter, "'#' only as a whole level and only as the last level");
      }
      if (level.contains("+") && !level.equals("+")) {
        throw new InvalidConfigException("topic filter", filter, "'+' only as a whole level");
      }
    }
  }

  /**
   * Checks a topic name for publishing (§4.2).
   *
   * @throws InvalidConfigException naming the topic and the rule it breaks
   */
  public static void validateTopicName(String topic) {
    if (topic == null || topic.isEmpty()) {
      throw new InvalidConfigException("topic", topic, "a non-empty topic name");
    }
    checkText("topic", topic);
    if (topic.indexOf('+') >= 0 || topic.indexOf('#') >= 0) {
      throw new InvalidConfigException("topic", topic, "a topic name without '+' or '#'");
    }
  }

  private static void checkText(String what, String s) {
    if (s.indexOf('\0') >= 0) {
      throw new InvalidConfigException(what, s, "no NUL character");
    }
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    if (!new String(utf8, StandardCharsets.UTF_8).equals(s)) {
      throw new InvalidConfigException(what, s, "valid UTF-8 (no unpaired surrogates)");
    }
  }
}
