/**
 * The store SPI: what the queue manager needs from a store, and what a store implements.
 *
 * <p><b>Public surface.</b> The contracts {@link io.queuebridge.core.store.QueueStore}, {@link
 * io.queuebridge.core.store.DurableQueueStore}, {@link
 * io.queuebridge.core.store.ConsumerGroupStore} and {@link io.queuebridge.core.store.Storage} (one
 * open store holding both halves); {@link io.queuebridge.core.store.QueueStoreProvider}, found by
 * {@link java.util.ServiceLoader}, and {@link io.queuebridge.core.store.QueueStores}, which finds
 * and opens providers; the immutable values in their signatures, {@link
 * io.queuebridge.core.store.ConsumerGroupState}, {@link io.queuebridge.core.store.PendingEntry} and
 * {@link io.queuebridge.core.store.ConsumerInfo}. Nothing else lives here.
 *
 * <p><b>Stores.</b> {@code memory} ({@link io.queuebridge.core.store.memory}), {@code file} ({@link
 * io.queuebridge.core.store.file}) and, in its own module, {@code postgres}. What a store
 * implementation may reuse so that stores agree (argument checks, group rules, naming rules, the
 * configuration format) is in {@link io.queuebridge.core.store.support}; a store is correct when it
 * passes the contract kit ({@code StoreContractTest} in this module's test jar).
 */
package io.queuebridge.core.store;
