package io.queuebridge.core.topic;

import io.queuebridge.core.errors.InvalidConfigException;

/**
 * MQTT-style topic filters: {@code /} separates levels, {@code +} matches one level, {@code #} the
 * rest (BEHAVIOUR T-MATCH, T-VALID). Stateless and thread-safe; nothing here blocks.
 *
 * <p>{@link #matches} is on the publish hot path and allocates nothing: it walks both strings by
 * index instead of splitting them.
 *
 * <p>{@code $share/<name>/<filter>} is validated as a shared-subscription filter but is
 * <em>not</em> unwrapped by {@link #matches} (nor by {@link TopicIndex}): it is an ordinary {@code
 * $}-filter whose first level is the literal {@code $share}, so it matches only topics that start
 * with {@code $share/<name>/}. A queue that wants the inner filter's topics registers the inner
 * filter.
 */
public final class TopicFilters {
  static final char SEPARATOR = '/';
  static final char SINGLE_LEVEL = '+';
  static final char MULTI_LEVEL = '#';
  static final char SYSTEM_PREFIX = '$';

  private static final String SHARE_PREFIX = "$share/";

  private TopicFilters() {}

  /**
   * Whether {@code filter} matches {@code topic} (BEHAVIOUR T-MATCH).
   *
   * <ul>
   *   <li>Either side null or empty: false. Identical strings: true (checked first, so even a
   *       malformed filter matches its own text).
   *   <li>A topic starting with {@code $} is matched only by a filter starting with {@code $}
   *       (whose first level is then never {@code +} or {@code #}): {@code #} and {@code +/…} never
   *       match {@code $SYS/…}, {@code $SYS/#} does.
   *   <li>Levels are split on {@code /}; empty levels are real levels. {@code #} matches the rest
   *       of the topic including nothing ({@code a/#} matches {@code a}); {@code +} matches exactly
   *       one level, which may be empty ({@code +/+} matches {@code /foo}); any other level must
   *       equal the topic's level; without {@code #} both must end together.
   * </ul>
   *
   * <p>The filter is not validated: a {@code #} level that is not last still matches the rest here,
   * and a level such as {@code a#} is a literal. Use {@link #validateFilter} on input; {@link
   * TopicIndex} never lets a misplaced {@code #} capture anything.
   *
   * <p>Allocation-free.
   */
  public static boolean matches(String filter, String topic) {
    if (filter == null || topic == null) {
      return false;
    }
    int fLen = filter.length();
    int tLen = topic.length();
    if (fLen == 0 || tLen == 0) {
      return false;
    }
    if (filter.equals(topic)) {
      return true;
    }
    // A '$' filter's first level starts with '$', so it can never be '+' or '#'.
    if (topic.charAt(0) == SYSTEM_PREFIX && filter.charAt(0) != SYSTEM_PREFIX) {
      return false;
    }
    int f = 0; // start of the current filter level
    int t = 0; // start of the current topic level; tLen + 1 once the topic is exhausted
    while (true) {
      int fEnd = filter.indexOf(SEPARATOR, f);
      if (fEnd < 0) {
        fEnd = fLen;
      }
      int levelLen = fEnd - f;
      if (levelLen == 1 && filter.charAt(f) == MULTI_LEVEL) {
        return true; // the rest of the topic, including nothing
      }
      if (t > tLen) {
        return false; // the filter has a level the topic lacks
      }
      int tEnd = topic.indexOf(SEPARATOR, t);
      if (tEnd < 0) {
        tEnd = tLen;
      }
      boolean single = levelLen == 1 && filter.charAt(f) == SINGLE_LEVEL;
      if (!single && (tEnd - t != levelLen || !filter.regionMatches(f, topic, t, levelLen))) {
        return false;
      }
      if (fEnd == fLen) {
        return tEnd == tLen; // both must end together
      }
      f = fEnd + 1;
      t = tEnd + 1; // == tLen + 1 when the topic has just ended
    }
  }

  /**
   * Checks a topic filter (BEHAVIOUR T-VALID): non-empty, no NUL, valid UTF-8 (no unpaired
   * surrogate); {@code $share/<name>/<filter>} needs a non-empty name without {@code +} or {@code
   * #} and a non-empty inner filter; then, per level of the (inner) filter, a level containing
   * {@code #} must be exactly {@code #} and the last level, and a level containing {@code +} must
   * be exactly {@code +}.
   *
   * @throws InvalidConfigException with field {@code "topic filter"}, the filter as value and the
   *     rule it breaks as the expectation
   */
  public static void validateFilter(String filter) {
    String field = "topic filter";
    if (filter == null || filter.isEmpty()) {
      throw new InvalidConfigException(field, filter, "a non-empty topic filter");
    }
    checkText(field, filter);
    int start = 0;
    if (filter.startsWith(SHARE_PREFIX)) {
      int nameStart = SHARE_PREFIX.length();
      int slash = filter.indexOf(SEPARATOR, nameStart);
      if (slash < 0) {
        throw new InvalidConfigException(
            field, filter, "a shared subscription of the form $share/<name>/<filter>");
      }
      if (slash == nameStart) {
        throw new InvalidConfigException(
            field, filter, "a non-empty share name in $share/<name>/<filter>");
      }
      for (int i = nameStart; i < slash; i++) {
        char c = filter.charAt(i);
        if (c == SINGLE_LEVEL || c == MULTI_LEVEL) {
          throw new InvalidConfigException(
              field, filter, "a share name without '+' or '#' in $share/<name>/<filter>");
        }
      }
      start = slash + 1;
      if (start == filter.length()) {
        throw new InvalidConfigException(field, filter, "a non-empty filter after $share/<name>/");
      }
    }
    int len = filter.length();
    int levelStart = start;
    while (levelStart <= len) {
      int levelEnd = filter.indexOf(SEPARATOR, levelStart);
      if (levelEnd < 0) {
        levelEnd = len;
      }
      for (int i = levelStart; i < levelEnd; i++) {
        char c = filter.charAt(i);
        if (c == MULTI_LEVEL && (levelEnd - levelStart != 1 || levelEnd != len)) {
          throw new InvalidConfigException(
              field, filter, "'#' only as a whole level and only as the last level");
        }
        if (c == SINGLE_LEVEL && levelEnd - levelStart != 1) {
          throw new InvalidConfigException(field, filter, "'+' only as a whole level");
        }
      }
      levelStart = levelEnd + 1;
    }
  }

  /**
   * Checks a topic name for publishing (BEHAVIOUR T-VALID): non-empty, no {@code +} or {@code #},
   * no NUL, valid UTF-8 (no unpaired surrogate).
   *
   * @throws InvalidConfigException with field {@code "topic"}, the topic as value and the rule it
   *     breaks as the expectation
   */
  public static void validateTopicName(String topic) {
    String field = "topic";
    if (topic == null || topic.isEmpty()) {
      throw new InvalidConfigException(field, topic, "a non-empty topic name");
    }
    checkText(field, topic);
    for (int i = 0; i < topic.length(); i++) {
      char c = topic.charAt(i);
      if (c == SINGLE_LEVEL || c == MULTI_LEVEL) {
        throw new InvalidConfigException(
            field, topic, "a topic name without the wildcards '+' and '#'");
      }
    }
  }

  /** Rejects NUL and unpaired surrogates (a Java string that has no UTF-8 encoding). */
  private static void checkText(String field, String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\0') {
        throw new InvalidConfigException(field, s, "no NUL character (at index " + i + ")");
      }
      if (Character.isHighSurrogate(c)) {
        if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
          continue;
        }
        throw new InvalidConfigException(
            field, s, "valid UTF-8 (unpaired high surrogate at index " + i + ")");
      }
      if (Character.isLowSurrogate(c)) {
        throw new InvalidConfigException(
            field, s, "valid UTF-8 (unpaired low surrogate at index " + i + ")");
      }
    }
  }
}
