package io.queuebridge.core.store.memory;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.support.QueueLogStore;
import io.queuebridge.core.store.support.StoreChecks;
import java.util.List;

/**
 * The queue-log half of {@link MemoryStorage}: one {@link MemoryLog} per queue, behind the shared
 * argument checks and forwarding of {@link QueueLogStore}.
 *
 * <ul>
 *   <li>{@link #createQueue} applies the full {@link QueueConfig#validate()}; {@link #updateQueue}
 *       checks the topic filters only and re-indexes them; {@link #deleteQueue} refuses reserved
 *       queues and reports unknown ones.
 *   <li>Stored messages are the caller's immutable {@link Message}s stamped with their offset; the
 *       message builder already copied the caller's arrays, so no caller buffer is kept.
 *   <li>The sync methods are plain serialised appends (nothing survives the process): {@link
 *       #supportsDurableSync()} is false. They still refuse a thread interrupted before the append,
 *       and checkpoints are merged in the same critical section as the batch.
 *   <li>{@link #timeOffset} and {@link #sizeOffset} are exact; {@link #truncate} is exact; {@link
 *       #bytes} is the key, value and header bytes of the retained messages, kept as they come and
 *       go; {@link #awaitAppend} is woken by appends, never polls.
 * </ul>
 *
 * <p>Thread-safe. Nothing blocks except on the queue's lock and in {@link #awaitAppend}.
 */
final class MemoryQueueStore extends QueueLogStore {
  private final MemoryStorage storage;

  MemoryQueueStore(MemoryStorage storage) {
    super(storage);
    this.storage = storage;
  }

  @Override
  public void createQueue(QueueConfig config) {
    StoreChecks.checkCreate(config, storage::checkOpen);
    synchronized (storage.adminLock) {
      storage.checkOpen();
      if (storage.queues.putIfAbsent(config.name(), new MemoryQueue(config)) != null) {
        throw new QueueAlreadyExistsException(config.name());
      }
      storage.index.addQueue(config.name(), config.topics());
    }
  }

  @Override
  public QueueConfig getQueue(String name) {
    return storage.queue(name).config;
  }

  @Override
  public void updateQueue(QueueConfig config) {
    StoreChecks.checkUpdate(config, storage::checkOpen);
    synchronized (storage.adminLock) {
      MemoryQueue q = storage.queue(config.name());
      q.config = config;
      storage.index.addQueue(q.name, config.topics());
    }
  }

  @Override
  public void deleteQueue(String name) {
    synchronized (storage.adminLock) {
      MemoryQueue q = storage.queue(name);
      StoreChecks.checkDeletable(q.config);
      storage.queues.remove(name);
      storage.index.removeQueue(name);
      q.dropGroups();
      q.log.kill(() -> new QueueNotFoundException(name));
    }
  }

  @Override
  public List<QueueConfig> listQueues() {
    storage.checkOpen();
    return storage.queues.values().stream().map(q -> q.config).toList();
  }

  @Override
  public List<String> findMatchingQueues(String topic) {
    storage.checkOpen();
    return storage.index.findMatching(topic);
  }

  /** Always false: nothing in memory survives a process exit. */
  @Override
  public boolean supportsDurableSync() {
    return false;
  }

  @Override
  protected MemoryLog log(String queue) {
    return storage.queue(queue).log;
  }

  /** Threads waiting in {@link #awaitAppend} on {@code queue}; for tests. */
  int waiters(String queue) {
    return storage.queue(queue).log.waiters();
  }
}
