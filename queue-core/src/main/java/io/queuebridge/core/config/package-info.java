/**
 * What queues and consumer groups are configured with: {@link
 * io.queuebridge.core.config.QueueConfig} and its parts ({@link
 * io.queuebridge.core.config.QueueType}, {@link io.queuebridge.core.config.RetentionPolicy}, {@link
 * io.queuebridge.core.config.RetryPolicy}, {@link io.queuebridge.core.config.DlqConfig}, {@link
 * io.queuebridge.core.config.AckDurability}), how a group reads ({@link
 * io.queuebridge.core.config.GroupMode}, {@link io.queuebridge.core.config.CursorOption}), and the
 * hook that runs the manager's periodic work ({@link
 * io.queuebridge.core.config.PeriodicScheduler}).
 *
 * <p>Values and one interface; they depend only on {@link io.queuebridge.core.errors} (the
 * validation errors) and {@link io.queuebridge.core.topic} (topic filters), so the store SPI and
 * the engines can use them. The manager's own settings, {@link
 * io.queuebridge.core.QueueManagerConfig}, stay beside the manager.
 */
package io.queuebridge.core.config;
