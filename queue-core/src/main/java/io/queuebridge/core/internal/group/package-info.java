/**
 * Internal: the consumer-group engine behind {@link io.queuebridge.core.group.ConsumerGroups} —
 * membership, claims and work stealing, settlement, dead letters, stream cursors, retention and
 * ephemeral-queue expiry, built on the store SPI only. Built and owned by {@link
 * io.queuebridge.core.QueueManager}; not part of the API (it may change in any release, and an
 * architecture test keeps the other modules off it).
 */
package io.queuebridge.core.internal.group;
