package io.queuebridge.core.store.memory;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.StoreClosedException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.support.QueueLog;
import io.queuebridge.core.store.support.ReadOnlyGroupStore;
import io.queuebridge.core.store.support.ReadOnlyQueueLogStore;
import java.util.List;
import java.util.Optional;

/**
 * A read-only view of an open memory store ({@link MemoryStoreProvider#openReadOnly}): every read
 * goes straight to the store, so it sees every change at once; every change is refused with {@link
 * io.queuebridge.core.errors.ReadOnlyStoreException}. Closing the view closes only the view
 * (afterwards its calls throw {@link StoreClosedException}); once the store itself is closed the
 * view's reads throw what the store throws.
 *
 * <p>Thread-safe.
 */
final class ReadOnlyMemoryStorage implements Storage {
  private final MemoryStorage target;
  private final Queues queues;
  private final Groups groups;
  private volatile boolean closed;

  ReadOnlyMemoryStorage(MemoryStorage target) {
    this.target = target;
    this.queues = new Queues();
    this.groups = new Groups();
  }

  @Override
  public DurableQueueStore queues() {
    return queues;
  }

  @Override
  public ConsumerGroupStore groups() {
    return groups;
  }

  @Override
  public String description() {
    return target.description();
  }

  /** Closes the view, not the store. Idempotent. */
  @Override
  public void close() {
    closed = true;
  }

  @Override
  public String toString() {
    return description();
  }

  private void checkOpen() {
    if (closed) {
      throw new StoreClosedException(description());
    }
  }

  private final class Queues extends ReadOnlyQueueLogStore {
    Queues() {
      super(ReadOnlyMemoryStorage.this);
    }

    @Override
    protected QueueLog log(String queue) {
      checkOpen();
      return target.queue(queue).log;
    }

    @Override
    protected void checkOpen() {
      ReadOnlyMemoryStorage.this.checkOpen();
    }

    @Override
    public QueueConfig getQueue(String name) {
      checkOpen();
      return target.queues().getQueue(name);
    }

    @Override
    public List<QueueConfig> listQueues() {
      checkOpen();
      return target.queues().listQueues();
    }

    @Override
    public List<String> findMatchingQueues(String topic) {
      checkOpen();
      return target.queues().findMatchingQueues(topic);
    }

    /** False, as for the store: nothing in memory survives the process. */
    @Override
    public boolean supportsDurableSync() {
      return false;
    }
  }

  private final class Groups extends ReadOnlyGroupStore {
    Groups() {
      super(target.description());
    }

    @Override
    protected void checkOpen() {
      ReadOnlyMemoryStorage.this.checkOpen();
    }

    private ConsumerGroupStore store() {
      checkOpen();
      return target.groups();
    }

    @Override
    public Optional<ConsumerGroupState> findGroup(String queue, String groupId) {
      return store().findGroup(queue, groupId);
    }

    @Override
    public List<ConsumerGroupState> listGroups(String queue) {
      return store().listGroups(queue);
    }

    @Override
    public ConsumerGroupState getGroup(String queue, String groupId) {
      return store().getGroup(queue, groupId);
    }

    @Override
    public Optional<PendingEntry> findPending(String queue, String groupId, long offset) {
      return store().findPending(queue, groupId, offset);
    }

    @Override
    public List<PendingEntry> getPending(String queue, String groupId, String consumerId) {
      return store().getPending(queue, groupId, consumerId);
    }

    @Override
    public List<PendingEntry> getAllPending(String queue, String groupId) {
      return store().getAllPending(queue, groupId);
    }

    @Override
    public List<ConsumerInfo> listConsumers(String queue, String groupId) {
      return store().listConsumers(queue, groupId);
    }
  }
}
