package io.queuebridge.core.store.memory;

import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.StoreClosedException;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.topic.TopicIndex;
import java.lang.ref.WeakReference;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The memory store: queue logs and consumer groups in this JVM's heap, gone when it is closed or
 * the process exits; never durable.
 *
 * <p><b>Concurrency.</b> Queues live in a concurrent map; creating, updating and deleting a queue
 * (which also maintains the topic index) is serialised by one admin lock, while everything else
 * goes straight to the queue: its log has its own read/write lock ({@link MemoryLog}) and each of
 * its groups is changed atomically in a concurrent map. Closing takes the admin lock, marks the
 * store closed and kills every log, so waiters wake up and in-flight calls fail with {@link
 * StoreClosedException}.
 *
 * <p>Thread-safe.
 */
final class MemoryStorage implements Storage {
  final ConcurrentMap<String, MemoryQueue> queues = new ConcurrentHashMap<>();
  final TopicIndex index = new TopicIndex();
  final Object adminLock = new Object();

  private final String description;
  private final MemoryQueueStore queueStore;
  private final MemoryGroupStore groupStore;
  private volatile boolean closed;

  /** This store's entry in {@link OpenMemoryStores}. */
  final WeakReference<MemoryStorage> registration = new WeakReference<>(this);

  MemoryStorage(String description) {
    this.description = Objects.requireNonNull(description, "description");
    this.queueStore = new MemoryQueueStore(this);
    this.groupStore = new MemoryGroupStore(this);
  }

  @Override
  public DurableQueueStore queues() {
    return queueStore;
  }

  @Override
  public ConsumerGroupStore groups() {
    return groupStore;
  }

  @Override
  public String description() {
    return description;
  }

  /** Drops every queue and group. Idempotent. */
  @Override
  public void close() {
    synchronized (adminLock) {
      if (closed) {
        return;
      }
      closed = true;
      OpenMemoryStores.closed(this);
      for (MemoryQueue q : queues.values()) {
        index.removeQueue(q.name);
        q.dropGroups();
        q.log.kill(() -> new StoreClosedException(description));
      }
      queues.clear();
    }
  }

  @Override
  public String toString() {
    return description;
  }

  boolean isClosed() {
    return closed;
  }

  /**
   * @throws StoreClosedException if the store was closed
   */
  void checkOpen() {
    if (closed) {
      throw new StoreClosedException(description);
    }
  }

  /**
   * The open queue named {@code name}.
   *
   * @throws StoreClosedException if the store was closed
   * @throws QueueNotFoundException if there is no such queue
   */
  MemoryQueue queue(String name) {
    Objects.requireNonNull(name, "queue");
    checkOpen();
    MemoryQueue q = queues.get(name);
    if (q == null) {
      checkOpen(); // closing empties the map: report the closure, not a missing queue
      throw new QueueNotFoundException(name);
    }
    return q;
  }
}
