/**
 * Queue Bridge's queue core: queues and streams with consumer groups, dead-letter queues, retention
 * and protected durable streams, over any store of the {@link io.queuebridge.core.store store SPI}.
 * No Kafka dependency.
 *
 * <p><b>Public API.</b> These packages are what applications, the connectors and the command line
 * use; everything in them is supported:
 *
 * <ul>
 *   <li>this package: the facade {@link io.queuebridge.core.QueueManager} and its {@link
 *       io.queuebridge.core.QueueManagerConfig} and {@link
 *       io.queuebridge.core.QueueManagerMetrics}; the operator moves' requests and reports ({@link
 *       io.queuebridge.core.RedriveRequest}, {@link io.queuebridge.core.RedriveReport}); {@link
 *       io.queuebridge.core.SharedStores} for plugins that share one open store among several
 *       users;
 *   <li>{@link io.queuebridge.core.message}: messages, headers, publish requests, the reserved
 *       property names;
 *   <li>{@link io.queuebridge.core.config}: queue configuration (types, retention, retry, DLQ,
 *       acknowledgement durability), group modes and cursor options, the scheduler hook;
 *   <li>{@link io.queuebridge.core.errors}: every error, retriable or fatal by type;
 *   <li>{@link io.queuebridge.core.group}: consumer groups as callers use them ({@link
 *       io.queuebridge.core.group.ConsumerGroups}, {@link
 *       io.queuebridge.core.group.GroupDelivery});
 *   <li>{@link io.queuebridge.core.delivery}: push consumption ({@link
 *       io.queuebridge.core.QueueManager#consume});
 *   <li>{@link io.queuebridge.core.job}: the job-queue API and its two drivers;
 *   <li>{@link io.queuebridge.core.topic}: topic filters;
 *   <li>{@link io.queuebridge.core.store}: the store SPI, its providers and the built-in stores.
 * </ul>
 *
 * <p><b>Internals.</b> {@code io.queuebridge.core.internal.*} holds the engines behind the facade
 * (the consumer-group engine, the push delivery engine, the capture dispatcher). They are public
 * only so that the facade in this package can reach them; they may change in any release, and an
 * architecture test keeps every other module off them. Package-private classes of this package (the
 * manager's collaborators, the protected-contract rules) are internal too.
 */
package io.queuebridge.core;
