/**
 * Consumer groups as applications and connectors use them: {@link
 * io.queuebridge.core.group.ConsumerGroups} (membership, claims and settlement in queue mode,
 * cursor reads and commits in stream mode, the groups' state), returned by {@link
 * io.queuebridge.core.QueueManager#consumerGroups()}; the settle-once handle {@link
 * io.queuebridge.core.group.GroupDelivery}; a stream read's {@link
 * io.queuebridge.core.group.StreamBatch}; the engine's {@link
 * io.queuebridge.core.group.GroupSettings} and {@link io.queuebridge.core.group.GroupMetrics}; and
 * the listeners the manager's configuration takes. Public API. The engine that implements these
 * interfaces is internal ({@code io.queuebridge.core.internal.group}).
 */
package io.queuebridge.core.group;
