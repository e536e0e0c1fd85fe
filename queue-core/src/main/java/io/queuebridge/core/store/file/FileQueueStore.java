package io.queuebridge.core.store.file;

import io.queuebridge.core.Message;
import io.queuebridge.core.QueueConfig;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.StoreChecks;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queue-log half of {@link FileStorage} (SEMANTICS §2.1, §2.2, §2.4).
 *
 * <ul>
 *   <li>{@link #createQueue} applies the full {@link QueueConfig#validate()} and the file-name
 *       rules of {@link Names}; it repairs a torn earlier creation (directory without
 *       configuration) instead of reporting "already exists". {@link #updateQueue} checks topic
 *       filters only. {@link #deleteQueue} refuses reserved queues. All three are durable on
 *       return.
 *   <li>{@link #append} / {@link #appendBatch} return after the write reached the OS (survives a
 *       process kill); the background thread fsyncs every {@code sync.interval.ms}. With {@code
 *       sync.interval.ms=0} every append is durable on return.
 *   <li>{@link #appendAndSync} / {@link #appendBatchAndSync} return after a group-commit barrier
 *       covering the write; {@link #supportsDurableSync()} is true. Checkpoints travel in the same
 *       frame as the batch, so they are durable, or lost, together with it.
 *   <li>{@link #truncate} deletes whole segments; {@link #timeOffset} and {@link #sizeOffset} are
 *       coarse (segment/index granularity) and never later than exact / never over-trim.
 *   <li>{@link #awaitAppend} is woken by appends, never polls.
 * </ul>
 *
 * <p>Thread-safe.
 */
final class FileQueueStore implements DurableQueueStore {
  private static final Logger LOG = LoggerFactory.getLogger(FileQueueStore.class);
  private final FileStorage storage;

  FileQueueStore(FileStorage storage) {
    this.storage = storage;
  }

  @Override
  public void createQueue(QueueConfig config) {
    StoreChecks.checkCreate(config, storage::checkOpen);
    String encoded = Names.encode("queue name", config.name());
    synchronized (storage.adminLock) {
      storage.checkOpen();
      if (storage.queues.containsKey(config.name())) {
        throw new QueueAlreadyExistsException(config.name());
      }
      Path qdir = storage.dir.resolve(FileStorage.QUEUES).resolve(encoded);
      try {
        if (Files.exists(qdir)) {
          LOG.warn(
              "file store {}: repairing the interrupted creation of queue {} ({})",
              storage.dir,
              config.name(),
              qdir);
          storage.discard(qdir);
        }
        storage.createDir(qdir);
        SegmentedLog log;
        try {
          Files.createDirectory(qdir.resolve(FileStorage.GROUPS));
          log = SegmentedLog.create(config.name(), qdir, storage.env); // fsyncs qdir
          Blobs.writeAtomically(
              storage.io, qdir.resolve(FileStorage.QUEUE_CONFIG), wrap(config)); // the commit point
        } catch (IOException | RuntimeException e) {
          try {
            storage.discard(qdir);
          } catch (IOException e2) {
            e.addSuppressed(e2);
          }
          throw e;
        }
        storage.queues.put(
            config.name(), new FileStorage.QueueEntry(config.name(), qdir, log, config));
        storage.index.addQueue(config.name(), config.topics());
      } catch (IOException e) {
        throw new QueueStoreException(
            config.name(), "creating queue " + config.name() + " failed: " + e, e);
      }
    }
  }

  private static byte[] wrap(QueueConfig config) {
    byte[] json = QueueConfigCodec.toJson(config);
    return Blobs.wrap(Blobs.QUEUE_CONFIG_MAGIC, json, json.length);
  }

  @Override
  public QueueConfig getQueue(String name) {
    return storage.entry(name).config;
  }

  @Override
  public void updateQueue(QueueConfig config) {
    StoreChecks.checkUpdate(config, storage::checkOpen);
    synchronized (storage.adminLock) {
      FileStorage.QueueEntry e = storage.entry(config.name());
      try {
        Blobs.writeAtomically(storage.io, e.dir.resolve(FileStorage.QUEUE_CONFIG), wrap(config));
      } catch (IOException ex) {
        throw new QueueStoreException(
            config.name(), "updating queue " + config.name() + " failed: " + ex, ex);
      }
      e.config = config;
      storage.index.addQueue(config.name(), config.topics());
    }
  }

  @Override
  public void deleteQueue(String name) {
    synchronized (storage.adminLock) {
      FileStorage.QueueEntry e = storage.entry(name);
      StoreChecks.checkDeletable(e.config);
      storage.queues.remove(name);
      storage.index.removeQueue(name);
      e.log.delete();
      for (GroupLog g : e.groups.values()) {
        g.close();
      }
      try {
        storage.discard(e.dir);
      } catch (IOException ex) {
        throw new QueueStoreException(name, "deleting queue " + name + " failed: " + ex, ex);
      }
    }
  }

  @Override
  public List<QueueConfig> listQueues() {
    storage.checkOpen();
    return storage.queues.values().stream().map(e -> e.config).toList();
  }

  @Override
  public List<String> findMatchingQueues(String topic) {
    storage.checkOpen();
    return storage.index.findMatching(topic);
  }

  @Override
  public long append(String queue, Message message) {
    Objects.requireNonNull(message, "message");
    return appendUninterruptibly(queue, List.of(message), Map.of(), false);
  }

  @Override
  public long appendBatch(String queue, List<Message> messages) {
    return appendUninterruptibly(queue, StoreChecks.checkBatch(queue, messages), Map.of(), false);
  }

  @Override
  public long appendAndSync(String queue, Message message) throws InterruptedException {
    Objects.requireNonNull(message, "message");
    StoreChecks.checkNotInterrupted(queue);
    return storage.entry(queue).log.append(List.of(message), Map.of(), true, true);
  }

  @Override
  public long appendBatchAndSync(
      String queue, List<Message> messages, Map<String, String> checkpoints)
      throws InterruptedException {
    List<Message> batch = StoreChecks.checkBatch(queue, messages);
    Map<String, String> cp = Map.copyOf(Objects.requireNonNull(checkpoints, "checkpoints"));
    StoreChecks.checkNotInterrupted(queue);
    return storage.entry(queue).log.append(batch, cp, true, true);
  }

  private long appendUninterruptibly(
      String queue, List<Message> batch, Map<String, String> cp, boolean durable) {
    try {
      return storage.entry(queue).log.append(batch, cp, durable, false);
    } catch (InterruptedException e) {
      throw new AssertionError("uninterruptible append was interrupted", e);
    }
  }

  /**
   * The checkpoint map as of the last batch written, consistent with what {@link #read} can see: a
   * batch whose barrier failed stays readable until the store is reopened (its messages "may or may
   * not be in the log"), and so do its checkpoints. After a reopen it is exactly what survived,
   * messages and checkpoints together.
   */
  @Override
  public Map<String, String> checkpoints(String queue) {
    return storage.entry(queue).log.checkpoints();
  }

  /** True: a completed barrier is an fsync of the segment that took the write. */
  @Override
  public boolean supportsDurableSync() {
    return true;
  }

  @Override
  public Message read(String queue, long offset) {
    return storage.entry(queue).log.read(offset);
  }

  @Override
  public List<Message> readBatch(String queue, long start, int limit) {
    StoreChecks.checkReadLimit(queue, limit);
    return storage.entry(queue).log.readBatch(start, limit);
  }

  @Override
  public long head(String queue) {
    return storage.entry(queue).log.head();
  }

  @Override
  public long tail(String queue) {
    return storage.entry(queue).log.tail();
  }

  @Override
  public long count(String queue) {
    return storage.entry(queue).log.count();
  }

  @Override
  public void truncate(String queue, long minOffset) {
    storage.entry(queue).log.truncate(minOffset);
  }

  /**
   * Coarse: the base of the first batch, found through the time index, after which a record time
   * (createdAt, else the append time) reaches {@code time}. Never later than the exact answer; may
   * be earlier by up to one time-index interval's worth of batches.
   */
  @Override
  public OptionalLong timeOffset(String queue, Instant time) {
    Objects.requireNonNull(time, "time");
    return OptionalLong.of(storage.entry(queue).log.timeOffset(Frames.millis(time)));
  }

  /**
   * Whole segments: the base of the newest segment that does not fit in the budget together with
   * every newer segment (on-disk bytes). Under-trims, never over-trims.
   *
   * @throws IllegalArgumentException if {@code retentionBytes} is negative
   */
  @Override
  public OptionalLong sizeOffset(String queue, long retentionBytes) {
    StoreChecks.checkRetentionBytes(queue, retentionBytes);
    return OptionalLong.of(storage.entry(queue).log.sizeOffset(retentionBytes));
  }

  @Override
  public boolean awaitAppend(String queue, long offset, Duration timeout)
      throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    return storage.entry(queue).log.awaitAppend(offset, timeout);
  }

  /** Closes the whole {@link FileStorage} (both halves). Idempotent. */
  @Override
  public void close() {
    storage.close();
  }

  @Override
  public String toString() {
    return storage.description();
  }
}
