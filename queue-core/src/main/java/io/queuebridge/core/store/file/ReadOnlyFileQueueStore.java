package io.queuebridge.core.store.file;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.store.support.QueueLog;
import io.queuebridge.core.store.support.ReadOnlyQueueLogStore;
import java.util.List;

/**
 * The queue-log half of {@link ReadOnlyFileStorage}: one {@link LogFollower} per queue behind the
 * shared refusals, checks and forwarding of {@link ReadOnlyQueueLogStore}. Reads answer as the
 * writer's store does ({@link FileQueueStore}: exact head, coarse time and size lookups, {@link
 * #bytes} the size of the segment files), as of the files when the call runs; {@link #awaitAppend}
 * polls the files.
 *
 * <p>Thread-safe.
 */
final class ReadOnlyFileQueueStore extends ReadOnlyQueueLogStore {
  private final ReadOnlyFileStorage storage;

  ReadOnlyFileQueueStore(ReadOnlyFileStorage storage) {
    super(storage);
    this.storage = storage;
  }

  @Override
  protected QueueLog log(String queue) {
    return storage.queue(queue).log;
  }

  @Override
  protected void checkOpen() {
    storage.checkOpen();
  }

  @Override
  public QueueConfig getQueue(String name) {
    return storage.queue(name).config;
  }

  @Override
  public List<QueueConfig> listQueues() {
    return storage.listQueues();
  }

  @Override
  public List<String> findMatchingQueues(String topic) {
    return storage.findMatchingQueues(topic);
  }

  /** True, as for the writer: the flag describes the store, which this view cannot append to. */
  @Override
  public boolean supportsDurableSync() {
    return true;
  }
}
