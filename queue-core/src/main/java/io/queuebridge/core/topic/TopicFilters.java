package io.queuebridge.core.topic;

import io.queuebridge.core.InvalidConfigException;

/**
 * MQTT-style topic filters: {@code /} separates levels, {@code +} matches one level, {@code #} the
 * rest (SEMANTICS B §4.1–4.2). Stateless and thread-safe.
 */
public final class TopicFilters {
  private TopicFilters() {}

  /**
   * Whether {@code filter} matches {@code topic} ({@code T-MATCH}). Allocation-free.
   *
   * <p>TODO(topic helper): implement.
   */
  public static boolean matches(String filter, String topic) {
    throw new UnsupportedOperationException("not implemented yet");
  }

  /**
   * Checks a topic filter (§4.2).
   *
   * @throws InvalidConfigException naming the filter and the rule it breaks
   */
  public static void validateFilter(String filter) {
    throw new UnsupportedOperationException("not implemented yet");
  }

  /**
   * Checks a topic name for publishing (§4.2).
   *
   * @throws InvalidConfigException naming the topic and the rule it breaks
   */
  public static void validateTopicName(String topic) {
    throw new UnsupportedOperationException("not implemented yet");
  }
}
