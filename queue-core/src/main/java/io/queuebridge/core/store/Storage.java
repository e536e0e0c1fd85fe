package io.queuebridge.core.store;

/**
 * One open store: the queue logs and the consumer-group state that live together (one directory,
 * one database). Obtained from a {@link QueueStoreProvider}; closing it closes both parts.
 *
 * <p>Thread-safe. {@link #close()} is idempotent; using a part after close throws {@link
 * io.queuebridge.core.errors.StoreClosedException}.
 */
public interface Storage extends AutoCloseable {

  /** The queue logs. The same instance on every call. */
  DurableQueueStore queues();

  /** The consumer-group state. The same instance on every call. */
  ConsumerGroupStore groups();

  /** A description for logs and errors ({@code file:/var/lib/qb}); never holds secrets. */
  String description();

  /** Makes buffered data durable where the store can, then releases every resource. */
  @Override
  void close();
}
