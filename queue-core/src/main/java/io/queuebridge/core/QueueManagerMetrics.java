package io.queuebridge.core;

/**
 * A snapshot of a {@link QueueManager}'s counters (SEMANTICS B §3.13). Counters are monotonic since
 * the manager was built. Immutable.
 *
 * @param captureFailures captures attempted and lost, one per lost queue: the topic could not be
 *     resolved, a matched queue's configuration could not be read, the message was over the queue's
 *     maximum size, or the append failed ({@code queues.capture_failures})
 * @param captureDropped captures never attempted: the queue's capture lane was full, capture was
 *     stopped, the drain deadline had passed, or the classic queue was at its {@code maxDepth}
 *     ({@code queues.capture_dropped})
 */
public record QueueManagerMetrics(long captureFailures, long captureDropped) {}
