/**
 * The job-queue API: {@link io.queuebridge.core.job.JobDriver} (dispatch, consume with competing
 * consumers, stop), {@link io.queuebridge.core.job.JobMessage}, {@link
 * io.queuebridge.core.job.JobHandler} and the settle-once {@link io.queuebridge.core.job.Delivery}
 * (acknowledge, retry after a delay, reject, fail). Two drivers: {@link
 * io.queuebridge.core.job.MemoryJobDriver} (in memory, nothing survives the process) and {@link
 * io.queuebridge.core.job.QueueJobDriver} (durable, on a {@link io.queuebridge.core.QueueManager}'s
 * work queues over any store). Public API; the package-private classes are shared by the two
 * drivers.
 */
package io.queuebridge.core.job;
