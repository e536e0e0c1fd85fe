package io.queuebridge.core.store.memory;

import io.queuebridge.core.Message;
import io.queuebridge.core.QueueConfig;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.StoreChecks;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * The queue-log half of {@link MemoryStorage} (SEMANTICS B §2.1, §2.2, §2.3a).
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
 *       #awaitAppend} is woken by appends, never polls.
 * </ul>
 *
 * <p>Thread-safe. Nothing blocks except on the queue's lock and in {@link #awaitAppend}.
 */
final class MemoryQueueStore implements DurableQueueStore {
  private final MemoryStorage storage;

  MemoryQueueStore(MemoryStorage storage) {
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

  @Override
  public long append(String queue, Message message) {
    Objects.requireNonNull(message, "message");
    return storage.queue(queue).log.append(message);
  }

  @Override
  public long appendBatch(String queue, List<Message> messages) {
    return storage.queue(queue).log.append(StoreChecks.checkBatch(queue, messages), Map.of());
  }

  @Override
  public long appendAndSync(String queue, Message message) throws InterruptedException {
    Objects.requireNonNull(message, "message");
    StoreChecks.checkNotInterrupted(queue);
    return append(queue, message);
  }

  @Override
  public long appendBatchAndSync(
      String queue, List<Message> messages, Map<String, String> checkpoints)
      throws InterruptedException {
    List<Message> batch = StoreChecks.checkBatch(queue, messages);
    Map<String, String> merged = Map.copyOf(Objects.requireNonNull(checkpoints, "checkpoints"));
    StoreChecks.checkNotInterrupted(queue);
    return storage.queue(queue).log.append(batch, merged);
  }

  @Override
  public Map<String, String> checkpoints(String queue) {
    return storage.queue(queue).log.checkpoints();
  }

  /** Always false: nothing in memory survives a process exit. */
  @Override
  public boolean supportsDurableSync() {
    return false;
  }

  @Override
  public Message read(String queue, long offset) {
    return storage.queue(queue).log.read(offset);
  }

  @Override
  public List<Message> readBatch(String queue, long start, int limit) {
    StoreChecks.checkReadLimit(queue, limit);
    return storage.queue(queue).log.readBatch(start, limit);
  }

  @Override
  public long head(String queue) {
    return storage.queue(queue).log.head();
  }

  @Override
  public long tail(String queue) {
    return storage.queue(queue).log.tail();
  }

  @Override
  public long count(String queue) {
    long[] bounds = storage.queue(queue).log.bounds();
    return bounds[1] - bounds[0];
  }

  @Override
  public void truncate(String queue, long minOffset) {
    storage.queue(queue).log.truncate(minOffset);
  }

  /** Exact: the first offset whose createdAt is at or after {@code time}, skipping null ones. */
  @Override
  public OptionalLong timeOffset(String queue, Instant time) {
    Objects.requireNonNull(time, "time");
    return OptionalLong.of(storage.queue(queue).log.timeOffset(time));
  }

  /**
   * Exact for the memory store's own size estimate (see {@link MemoryLog#estimate}).
   *
   * @throws IllegalArgumentException if {@code retentionBytes} is negative
   */
  @Override
  public OptionalLong sizeOffset(String queue, long retentionBytes) {
    StoreChecks.checkRetentionBytes(queue, retentionBytes);
    return OptionalLong.of(storage.queue(queue).log.sizeOffset(retentionBytes));
  }

  /**
   * Woken by appends (no polling); a deleted queue or a closed store ends the wait with an error.
   */
  @Override
  public boolean awaitAppend(String queue, long offset, Duration timeout)
      throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    return storage.queue(queue).log.awaitAppend(offset, timeout);
  }

  /** Closes the whole {@link MemoryStorage} (both halves). Idempotent. */
  @Override
  public void close() {
    storage.close();
  }

  /** Threads waiting in {@link #awaitAppend} on {@code queue}; for tests. */
  int waiters(String queue) {
    return storage.queue(queue).log.waiters();
  }

  @Override
  public String toString() {
    return storage.description();
  }
}
