package io.queuebridge.core.topic;

/**
 * The reference for {@link TopicFilters#matches}: the straightforward split-based algorithm of
 * BEHAVIOUR T-MATCH, kept in tests (and used by the JMH benchmarks as the baseline). It allocates
 * two arrays and a string per level on every call, which is why production does not use it.
 */
final class SplitTopicMatcher {
  private SplitTopicMatcher() {}

  static boolean matches(String filter, String topic) {
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
}
