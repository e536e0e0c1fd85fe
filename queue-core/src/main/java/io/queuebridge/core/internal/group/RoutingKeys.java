package io.queuebridge.core.internal.group;

import io.queuebridge.core.topic.TopicFilters;

/**
 * Routing keys and group filters (SEMANTICS B §3.8.1 with A7). Stateless.
 *
 * <p>The routing key of a message is the part of its topic below the queue's root {@code
 * $queue/<queue>}: {@code $queue/orders/eu/1} in queue {@code orders} has key {@code eu/1}, and the
 * root itself has the empty key. <b>Decision (§7.1 quirk):</b> a topic outside the root (an
 * ordinary captured topic such as {@code sensors/eu/1}) is its own routing key, so group filters
 * work for captured topics too; the reference gave them the empty key, which no filter but {@code
 * #} matched.
 *
 * <p>A group filter matches like a topic filter ({@link TopicFilters#matches}): an empty filter or
 * {@code #} matches everything, {@code +} one level, {@code #} the rest, and {@code a/#} matches
 * {@code a} (A7; the reference did not).
 */
final class RoutingKeys {
  private static final String ROOT = "$queue/";

  private RoutingKeys() {}

  static String routingKey(String queue, String topic) {
    int rootLength = ROOT.length() + queue.length();
    if (topic.startsWith(ROOT) && topic.startsWith(queue, ROOT.length())) {
      if (topic.length() == rootLength) {
        return "";
      }
      if (topic.charAt(rootLength) == '/') {
        return topic.substring(rootLength + 1);
      }
    }
    return topic;
  }

  static boolean matches(String filter, String queue, String topic) {
    if (filter.isEmpty() || filter.equals("#")) {
      return true;
    }
    return TopicFilters.matches(filter, routingKey(queue, topic));
  }
}
