/**
 * Support for store implementers: what the {@code memory}, {@code file} and {@code postgres} stores
 * (and a third-party store) reuse so that they agree. Public because the stores live in other
 * packages and another module; not part of the SPI (applications never need it), and nothing here
 * is used outside the store packages.
 *
 * <ul>
 *   <li>{@link io.queuebridge.core.store.support.StoreChecks}: the argument checks every store
 *       applies, so stores refuse the same calls with the same errors.
 *   <li>{@link io.queuebridge.core.store.support.QueueLogStore} over one {@link
 *       io.queuebridge.core.store.support.QueueLog} per queue: the checks and the forwarding of
 *       every per-queue method, for stores that keep a log object per queue in the process (memory,
 *       file).
 *   <li>{@link io.queuebridge.core.store.support.ReadOnlyQueueLogStore} and {@link
 *       io.queuebridge.core.store.support.ReadOnlyGroupStore}: the two halves of a store opened
 *       read-only, refusing every change with one error and forwarding the reads (memory, file).
 *   <li>{@link io.queuebridge.core.store.support.GroupTable}: one consumer group as mutable state
 *       with the rules of every fine-grained group operation (memory, file).
 *   <li>{@link io.queuebridge.core.store.support.DedupIndex}: one queue's remembered deduplication
 *       ids behind {@code appendDeduplicated}, loaded from the log (memory, file).
 *   <li>{@link io.queuebridge.core.store.support.QueueConfigCodec}: a queue configuration as JSON
 *       (file, postgres).
 * </ul>
 *
 * <p>The naming rules for queue names and group ids, and their encoding as file names, are {@link
 * io.queuebridge.core.config.Names}: a queue configuration checks its name with them, so they sit
 * below the store packages.
 *
 * <p><b>Why a package of its own.</b> These helpers used to sit in the SPI package (and two in the
 * file store's), public only because another store needed them, which blurred what a store must
 * implement with what it may reuse. Here {@link io.queuebridge.core.store} holds the SPI alone and
 * each store package exposes exactly its documented surface.
 */
package io.queuebridge.core.store.support;
