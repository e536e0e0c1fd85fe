/**
 * Every error the queue core, its stores and its job API raise, in one hierarchy rooted at {@link
 * io.queuebridge.core.errors.QueueException} (unchecked). Whether retrying can help is told by
 * type, never by message text:
 *
 * <ul>
 *   <li>{@link io.queuebridge.core.errors.RetriableQueueException}: the same call may succeed later
 *       — a full queue ({@link io.queuebridge.core.errors.QueueFullException}), a full pending
 *       entry list ({@link io.queuebridge.core.errors.PelFullException}), a store that failed an
 *       I/O operation, a durability barrier or a connection ({@link
 *       io.queuebridge.core.errors.QueueStoreException});
 *   <li>{@link io.queuebridge.core.errors.FatalQueueException}: it will fail the same way —
 *       corruption, contract drift, a locked or closed store, a missing queue or group, an invalid
 *       argument or configuration, a call the state does not allow; the job API's own errors
 *       ({@link io.queuebridge.core.errors.JobException}) and the one "already settled" error of
 *       deliveries and jobs ({@link io.queuebridge.core.errors.DeliveryAlreadySettledException})
 *       are on this branch.
 * </ul>
 *
 * <p>A caller that only needs to decide "back off and retry, or give up" checks {@code e instanceof
 * RetriableQueueException} (or {@link io.queuebridge.core.errors.QueueException#isRetriable()});
 * the connectors do exactly that.
 */
package io.queuebridge.core.errors;
