/**
 * The {@code memory} store: queue logs and consumer groups in this JVM's heap, fast and not durable
 * ({@code supportsDurableSync()} is false).
 *
 * <p><b>Public surface.</b> {@link io.queuebridge.core.store.memory.MemoryStoreProvider} only
 * (found by {@link java.util.ServiceLoader} as {@code memory}; {@code QueueStores.memory()} opens
 * one in code). Everything else is package-private: {@code MemoryStorage} (the open store), {@code
 * MemoryQueueStore} over one {@code MemoryLog} per queue (a ring buffer), and {@code
 * MemoryGroupStore} over one {@code GroupData} per group; {@code ReadOnlyMemoryStorage}, the
 * read-only view of an open store, found through {@code OpenMemoryStores}.
 */
package io.queuebridge.core.store.memory;
