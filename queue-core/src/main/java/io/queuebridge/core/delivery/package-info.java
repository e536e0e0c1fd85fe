/**
 * Push consumption: {@link io.queuebridge.core.QueueManager#consume} registers a {@link
 * io.queuebridge.core.delivery.DeliveryHandler} with {@link
 * io.queuebridge.core.delivery.ConsumeOptions} and returns a {@link
 * io.queuebridge.core.delivery.Subscription}; {@link io.queuebridge.core.delivery.DeliveryMetrics}
 * counts what was handed out. Public API. The engine that schedules the handlers is internal
 * ({@code io.queuebridge.core.internal.delivery}).
 */
package io.queuebridge.core.delivery;
