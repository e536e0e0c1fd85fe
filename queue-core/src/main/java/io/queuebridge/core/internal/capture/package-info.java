/**
 * Internal: the capture dispatcher behind {@link
 * io.queuebridge.core.QueueManager#publishToMatchingQueues} — bounded lanes of worker threads that
 * append captured publishes to every matching queue, with rate-limited drop logging. Built and
 * owned by {@link io.queuebridge.core.QueueManager}; not part of the API.
 */
package io.queuebridge.core.internal.capture;
