package io.queuebridge.core.internal.group;

import io.queuebridge.core.topic.TopicFilters;

/**
 * Routing keys and group filters (BEHAVIOUR Q-ROUTE). Stateless.
 *
 * <p>The routing key of a message is the part of its topic below the queue's root {@code
 * $queue/<queue>}: {@code $queue/orders/eu/1} in queue {@code orders} has key {@code eu/1}, and the
 * root itself has the empty key. A topic outside the root (an ordinary captured topic such as
 * {@code sensors/eu/1}) is its own routing key, so group filters work for captured topics too (with
 * an empty key, no filter but {@code #} would match them).
 *
 * <p>A group filter matches like a topic filter ({@link TopicFilters#matches}): an empty filter or
 * {@code #} matches everything, {@code +} one level, {@code #} the rest, and {@code a/#} matches
 * {@code a}.
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
