package io.queuebridge.connect.source;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.store.QueueStore;

/**
 * What every {@link QueueReader} of one task shares: the store, the group engine, the task's
 * identity in the consumer group, the record factory, the in-flight budget and the metrics.
 *
 * @param manager the shared store's manager (queue configurations)
 * @param queues the shared store's queue logs (reads, tails, waits)
 * @param groups the store's one group engine
 * @param group the consumer group ({@code queue.group})
 * @param consumerId this task's member id, {@code <connector>-<task>}
 * @param factory turns messages into records; used by the poll thread only
 * @param inFlight the task's budget of unacknowledged classic-queue messages
 * @param metrics the task's metrics
 * @param maxDeliveries deliveries after which a classic-queue message is poison
 * @param toleratesErrors whether {@code errors.tolerance=all}
 */
record ReaderContext(
    QueueManager manager,
    QueueStore queues,
    ConsumerGroups groups,
    String group,
    String consumerId,
    RecordFactory factory,
    InFlight inFlight,
    SourceMetrics metrics,
    int maxDeliveries,
    boolean toleratesErrors) {}
