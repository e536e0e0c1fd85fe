/**
 * Internal: the push delivery engine behind {@link io.queuebridge.core.QueueManager#consume} —
 * coalesced scheduling of the registered handlers over the consumer-group engine. Built and owned
 * by {@link io.queuebridge.core.QueueManager}; not part of the API.
 */
package io.queuebridge.core.internal.delivery;
