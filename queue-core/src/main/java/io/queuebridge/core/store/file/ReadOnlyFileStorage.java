package io.queuebridge.core.store.file;

import io.queuebridge.core.config.Names;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.StoreClosedException;
import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.errors.StoreNotFoundException;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.topic.TopicIndex;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A file store opened read-only ({@link FileStoreProvider#openReadOnly}), beside a writer that may
 * hold it in this or another process, or with no writer at all.
 *
 * <p><b>Nothing is written.</b> No lock is taken (neither the OS lock on {@code qb-store.lock} nor
 * this JVM's registry of open directories), no file or directory is created, changed or removed: no
 * recovery, no repair, no index saved. Torn tails, leftovers of interrupted writes and missing
 * indexes are read around, as the writer's recovery would see them, without touching them.
 *
 * <p><b>What a call sees.</b> Each call looks at the files as they are when it runs, through the
 * parts that follow them: a queue's log ({@link LogFollower}: whole, valid frames only; a frame the
 * writer is still writing is not there yet) and each group's log ({@link GroupFollower}: whole
 * records only). So appends, rolls, truncations, retention, group changes, new and deleted queues
 * and groups become visible to later calls. A queue is looked up by its directory, whose identity
 * is checked on each call (a queue deleted and created again is a new queue); its configuration
 * file is read again only when it changed. Listing queues costs a {@code stat} or two per queue; a
 * per-queue call costs a few, whatever the size of the store (see the two followers).
 *
 * <p>Every change is refused with {@link io.queuebridge.core.errors.ReadOnlyStoreException} ({@link
 * ReadOnlyFileQueueStore}, {@link ReadOnlyFileGroupStore}). {@link #close()} releases the open read
 * channels; afterwards every call throws {@link StoreClosedException}.
 *
 * <p>Thread-safe.
 */
final class ReadOnlyFileStorage implements Storage {
  final Path dir;
  final LogEnv env;
  private final String description;
  private final ConcurrentHashMap<String, FollowedQueue> queues = new ConcurrentHashMap<>();
  private final TopicIndex index = new TopicIndex();
  private final Object lookupLock = new Object();
  private final ReadOnlyFileQueueStore queueStore;
  private final ReadOnlyFileGroupStore groupStore;
  private volatile boolean closed;

  /** One queue as last seen: its directory's identity, configuration, log and groups. */
  static final class FollowedQueue {
    final String name;
    final Path dir;
    final Object dirKey;
    final LogFollower log;
    final ConcurrentHashMap<String, GroupFollower> groups = new ConcurrentHashMap<>();
    volatile QueueConfig config;
    FileStamp configStamp; // guarded by the storage's lookup lock

    FollowedQueue(String name, Path dir, Object dirKey, LogFollower log) {
      this.name = name;
      this.dir = dir;
      this.dirKey = dirKey;
      this.log = log;
    }

    Path groupsDir() {
      return dir.resolve(FileStorage.GROUPS);
    }

    void release() {
      log.close();
      groups.values().forEach(GroupFollower::close);
    }
  }

  private ReadOnlyFileStorage(FileStoreConfig config, Path dir, StoreIo io) {
    this.dir = dir;
    this.description = "file:" + dir;
    this.env = LogEnv.create(config, Clock.systemUTC(), io, description, false);
    this.queueStore = new ReadOnlyFileQueueStore(this);
    this.groupStore = new ReadOnlyFileGroupStore(this);
  }

  /**
   * Opens the existing store in {@code config.path()} for reading; creates nothing.
   *
   * @throws StoreNotFoundException if the path does not exist, is not a directory, or holds no
   *     {@code qb-store} marker
   * @throws StoreCorruptedException if the marker is damaged or of another version
   * @throws QueueStoreException for other I/O failures
   */
  static ReadOnlyFileStorage open(FileStoreConfig config, StoreIo io) {
    Path abs = config.path().toAbsolutePath().normalize();
    try {
      Path real = FileStorage.existing(abs);
      return new ReadOnlyFileStorage(config, real, io);
    } catch (IOException e) {
      throw new QueueStoreException(
          null, "opening file store " + abs + " read-only failed: " + e, e);
    }
  }

  // ---------------------------------------------------------------- queues

  /**
   * The queue named {@code name} as it is now.
   *
   * @throws StoreClosedException if the store was closed
   * @throws QueueNotFoundException if there is no such queue (now)
   */
  FollowedQueue queue(String name) {
    checkOpen();
    if (name == null) {
      throw new QueueNotFoundException(null);
    }
    String encoded;
    try {
      encoded = Names.encode("queue name", name);
    } catch (InvalidConfigException e) {
      throw new QueueNotFoundException(name); // no store could hold it
    }
    try {
      FollowedQueue q = current(name, dir.resolve(FileStorage.QUEUES).resolve(encoded));
      if (q == null) {
        throw new QueueNotFoundException(name);
      }
      return q;
    } catch (IOException e) {
      throw new QueueStoreException(name, "reading queue " + name + " failed: " + e, e);
    }
  }

  /**
   * The queue in {@code qdir} as it is now, its configuration read again if it changed; null if the
   * directory holds no committed queue (deleted, or a creation not finished).
   */
  private FollowedQueue current(String name, Path qdir) throws IOException {
    FileStamp dirStamp = FileStamp.of(qdir);
    Path cfg = qdir.resolve(FileStorage.QUEUE_CONFIG);
    synchronized (lookupLock) {
      FollowedQueue q = queues.get(name);
      if (dirStamp == null) {
        forget(q);
        return null;
      }
      if (q != null && !sameDirectory(q, dirStamp)) {
        forget(q); // deleted and created again: a new queue
        q = null;
      }
      FileStamp cfgStamp = FileStamp.of(cfg);
      if (cfgStamp == null) {
        forget(q);
        return null;
      }
      if (q != null && cfgStamp.equals(q.configStamp)) {
        return q;
      }
      QueueConfig config;
      try {
        config = FileStorage.readQueueConfig(qdir, cfg);
      } catch (NoSuchFileException e) {
        forget(q);
        return null;
      }
      if (!config.name().equals(name)) {
        throw new StoreCorruptedException(
            name, cfg.toString(), -1, "holds queue '" + config.name() + "', expected " + name);
      }
      if (q == null) {
        q =
            new FollowedQueue(
                name, qdir, dirStamp.key(), new LogFollower(name, qdir, env, this::checkOpen));
        queues.put(name, q);
      }
      q.config = config;
      q.configStamp = cfgStamp;
      index.addQueue(name, config.topics());
      return q;
    }
  }

  /** The same directory, where the file system tells; assumed so where it cannot. */
  private static boolean sameDirectory(FollowedQueue q, FileStamp now) {
    return q.dirKey == null || now.key() == null || q.dirKey.equals(now.key());
  }

  private void forget(FollowedQueue q) {
    if (q != null && queues.remove(q.name, q)) {
      index.removeQueue(q.name);
      q.release();
    }
  }

  /** Every committed queue's configuration, as the directory holds them now. */
  List<QueueConfig> listQueues() {
    checkOpen();
    List<QueueConfig> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    try {
      try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir.resolve(FileStorage.QUEUES))) {
        for (Path qdir : ds) {
          String name;
          try {
            name = Names.decode(qdir.getFileName().toString());
          } catch (IllegalArgumentException e) {
            continue; // not a queue directory
          }
          FollowedQueue q = current(name, qdir);
          if (q != null) {
            out.add(q.config);
            seen.add(name);
          }
        }
      } catch (NoSuchFileException e) {
        // a store whose first open has not created the directory yet: no queues
      }
    } catch (IOException e) {
      throw new QueueStoreException(null, "listing the queues of " + dir + " failed: " + e, e);
    }
    synchronized (lookupLock) {
      for (FollowedQueue q : List.copyOf(queues.values())) {
        if (!seen.contains(q.name)) {
          forget(q);
        }
      }
    }
    return out;
  }

  /** As the writer's topic index answers, over the queues as they are now. */
  List<String> findMatchingQueues(String topic) {
    listQueues();
    return index.findMatching(topic);
  }

  /** The follower of group {@code id} of {@code q}, whose file is {@code file}. */
  GroupFollower group(FollowedQueue q, String id, Path file) {
    return q.groups.computeIfAbsent(id, k -> new GroupFollower(q.name, file, env.io()));
  }

  // ---------------------------------------------------------------- Storage

  void checkOpen() {
    if (closed) {
      throw new StoreClosedException(description);
    }
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

  /** Releases every open read channel. Idempotent. */
  @Override
  public void close() {
    synchronized (lookupLock) {
      if (closed) {
        return;
      }
      closed = true;
      for (Map.Entry<String, FollowedQueue> e : queues.entrySet()) {
        e.getValue().release();
      }
      queues.clear();
    }
    env.handles().close();
  }

  @Override
  public String toString() {
    return description;
  }
}
