package io.queuebridge.core;

import io.queuebridge.core.delivery.DeliveryMetrics;
import io.queuebridge.core.group.GroupMetrics;
import java.util.Objects;

/**
 * A snapshot of a {@link QueueManager}'s counters (BEHAVIOUR Q-METRICS): capture, the
 * consumer-group engine and the push delivery engine. Counters are monotonic since the manager was
 * built (the group counters until {@link
 * io.queuebridge.core.internal.group.GroupCoordinator#resetMetrics()} ); the gauges are documented
 * in {@link GroupMetrics} and {@link DeliveryMetrics}. Immutable.
 *
 * @param captureFailures captures attempted and lost, one per lost queue: the topic could not be
 *     resolved, a matched queue's configuration could not be read, the message was over the queue's
 *     maximum size, or the append failed ({@code queues.capture_failures})
 * @param captureDropped captures never attempted: the queue's capture lane was full, capture was
 *     stopped, the drain deadline had passed, or the classic queue was at its {@code maxDepth}
 *     ({@code queues.capture_dropped})
 * @param groups claims, steals, acknowledgements, dead letters and the PEL gauge
 * @param delivery push subscriptions, passes, handler outcomes and dropped triggers
 * @param duplicatesRefused publishes that stored nothing because their deduplication id was
 *     remembered within the queue's window, one per queue (BEHAVIOUR Q-DEDUP; {@code
 *     queues.duplicates_refused})
 */
public record QueueManagerMetrics(
    long captureFailures,
    long captureDropped,
    GroupMetrics groups,
    DeliveryMetrics delivery,
    long duplicatesRefused) {

  public QueueManagerMetrics {
    Objects.requireNonNull(groups, "groups");
    Objects.requireNonNull(delivery, "delivery");
  }
}
