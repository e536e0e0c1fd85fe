package io.queuebridge.core.store.file;

import io.queuebridge.core.config.Names;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.store.support.QueueConfigCodec;
import io.queuebridge.core.store.support.QueueLogStore;
import io.queuebridge.core.store.support.StoreChecks;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queue-log half of {@link FileStorage}: one {@link SegmentedLog} per queue, behind the shared
 * argument checks and forwarding of {@link QueueLogStore}.
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
 *   <li>{@link #truncate} is exact: the head becomes the requested offset (persisted in the queue's
 *       head file when it falls inside a segment) and whole segments below it are deleted; {@link
 *       #timeOffset} and {@link #sizeOffset} are coarse (segment/index granularity) and never later
 *       than exact / never over-trim. {@link #bytes} is the size of the segment files.
 *   <li>{@link #awaitAppend} is woken by appends, never polls.
 * </ul>
 *
 * <p>Thread-safe.
 */
final class FileQueueStore extends QueueLogStore {
  private static final Logger LOG = LoggerFactory.getLogger(FileQueueStore.class);
  private final FileStorage storage;

  FileQueueStore(FileStorage storage) {
    super(storage);
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
        SegmentedLog log = null;
        try {
          Files.createDirectory(qdir.resolve(FileStorage.GROUPS));
          log = SegmentedLog.create(config.name(), qdir, storage.env); // fsyncs qdir
          Blobs.writeAtomically(
              storage.io, qdir.resolve(FileStorage.QUEUE_CONFIG), wrap(config)); // the commit point
        } catch (IOException | RuntimeException e) {
          if (log != null) {
            log.delete(); // releases the new segment's writer (its space on a full disk)
          }
          try {
            storage.discard(qdir);
          } catch (IOException e2) {
            e.addSuppressed(e2);
          }
          throw e;
        }
        log.dedupWindow(config.dedupWindow());
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
      e.log.dedupWindow(config.dedupWindow());
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

  /** True: a completed barrier is an fsync of the segment that took the write. */
  @Override
  public boolean supportsDurableSync() {
    return true;
  }

  @Override
  protected SegmentedLog log(String queue) {
    return storage.entry(queue).log;
  }
}
