package io.queuebridge.core.store.file;

import io.queuebridge.core.config.Names;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.StoreClosedException;
import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.errors.StoreLockedException;
import io.queuebridge.core.errors.StoreNotFoundException;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.support.QueueConfigCodec;
import io.queuebridge.core.topic.TopicFilters;
import io.queuebridge.core.topic.TopicIndex;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file store: one directory holding every queue's segmented log and consumer-group state
 * (durable, crash-recovered, locked against a second opener). Obtain one from {@link
 * FileStoreProvider} ({@code queue.store.type=file}) or {@link
 * io.queuebridge.core.store.QueueStores#file}.
 *
 * <p><b>Directory layout</b> (format version 1):
 *
 * <pre>
 *   qb-store                       store marker: envelope "QBST" v1, payload "queue-bridge file store"
 *   qb-store.lock                  lock file (FileChannel.tryLock), holds the owner's pid as text
 *   queues/&lt;q&gt;/queue.cfg           the queue's configuration: envelope "QBQC" v1, JSON payload;
 *                                  written last at creation, so it is the commit marker
 *   queues/&lt;q&gt;/&lt;base&gt;.log         segment: frames (see Frames), base = 20-digit zero-padded offset
 *   queues/&lt;q&gt;/&lt;base&gt;.idx / .tix   sparse offset / time index (see SparseIndex)
 *   queues/&lt;q&gt;/&lt;base&gt;.cpt         checkpoint map as of the segment's base (envelope "QBCP" v1)
 *   queues/&lt;q&gt;/queue.head          logical head after an exact truncation inside a segment
 *                                  (envelope "QBHD" v1, 8-byte offset; see LogHead); absent
 *                                  until then, and in stores written before it existed
 *   queues/&lt;q&gt;/queue.verified      sealed segments verified on open, with their size and mtime
 *                                  (envelope "QBVF" v1; see VerifiedSegments)
 *   queues/&lt;q&gt;/groups/&lt;g&gt;.grp      one consumer group's log (see GroupLog)
 *   trash/                         queues being deleted (renamed here atomically, then removed)
 * </pre>
 *
 * {@code <q>} and {@code <g>} are the encoded queue name and group id ({@link Names}). Every file
 * format carries a magic number and a version; a file of a newer version is refused with a message
 * naming the file and both versions (indexes, which are hints, are rebuilt from the segment
 * instead). The versions: docs/STORES.md, "Formats and versions".
 *
 * <p><b>Locking.</b> One opener per directory: another process is kept out by an OS file lock,
 * another instance in this JVM by a static registry of open directories (an OS lock cannot tell two
 * channels of one JVM apart). Both get {@link StoreLockedException} naming the directory.
 *
 * <p><b>Durability.</b> Queue creation, update and deletion are durable on return (tmp, fsync,
 * rename, fsync directory; every newly created directory's parent fsynced). Appends: see {@link
 * FileQueueStore}. Groups: see {@link GroupLog}. {@link #close()} fsyncs what is buffered.
 *
 * <p>Thread-safe. {@link #close()} is idempotent; afterwards every method of both parts throws
 * {@link StoreClosedException}.
 */
public final class FileStorage implements Storage {
  private static final Logger LOG = LoggerFactory.getLogger(FileStorage.class);

  static final String MARKER = "qb-store";
  static final String LOCK = "qb-store.lock";
  static final String QUEUES = "queues";
  static final String TRASH = "trash";
  static final String QUEUE_CONFIG = "queue.cfg";
  static final String GROUPS = "groups";
  private static final byte[] MARKER_PAYLOAD =
      "queue-bridge file store".getBytes(StandardCharsets.US_ASCII);

  final FileStoreConfig config;
  final Path dir;
  final Clock clock;
  final StoreIo io;
  final LogEnv env;
  final ConcurrentHashMap<String, QueueEntry> queues = new ConcurrentHashMap<>();
  final TopicIndex index = new TopicIndex();
  final Object adminLock = new Object();
  private final String description;
  private final StoreLock lock;
  private final ScheduledExecutorService syncer;
  private final RecoveryReport recovery;
  private final FileQueueStore queueStore;
  private final FileGroupStore groupStore;
  private volatile boolean closed;

  /** One queue: configuration, log, groups. */
  static final class QueueEntry {
    final String name;
    final Path dir;
    final SegmentedLog log;
    final ConcurrentHashMap<String, GroupLog> groups = new ConcurrentHashMap<>();
    volatile QueueConfig config;

    QueueEntry(String name, Path dir, SegmentedLog log, QueueConfig config) {
      this.name = name;
      this.dir = dir;
      this.log = log;
      this.config = config;
    }

    Path groupsDir() {
      return dir.resolve(GROUPS);
    }
  }

  private FileStorage(FileStoreConfig config, Path dir, Clock clock, StoreIo io, StoreLock lock) {
    this.config = config;
    this.dir = dir;
    this.clock = clock;
    this.io = io;
    this.lock = lock;
    this.description = "file:" + dir;
    this.env = LogEnv.create(config, clock, io, description, true);
    RecoveryReport.Builder report = new RecoveryReport.Builder();
    try {
      load(report);
      report.runAfterOpen();
    } catch (IOException e) {
      closeQuietly();
      throw new QueueStoreException(null, "opening file store " + dir + " failed: " + e, e);
    } catch (RuntimeException e) {
      closeQuietly();
      throw e;
    }
    this.recovery = report.build();
    this.queueStore = new FileQueueStore(this);
    this.groupStore = new FileGroupStore(this);
    if (config.syncIntervalMs() > 0) {
      syncer =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "qb-file-sync " + dir);
                t.setDaemon(true);
                return t;
              });
      syncer.scheduleWithFixedDelay(
          this::syncAll, config.syncIntervalMs(), config.syncIntervalMs(), TimeUnit.MILLISECONDS);
    } else {
      syncer = null;
    }
    if (!recovery.clean()) {
      LOG.info(
          "file store {} opened after repairs: {} log tail(s) cut ({} bytes), {} group log tail(s)"
              + " cut, {} leftover file(s) removed, {} damaged range(s) in sealed segments refused"
              + " until repaired",
          dir,
          recovery.logCuts().size(),
          recovery.logBytesCut(),
          recovery.groupLogCuts().size(),
          recovery.removedFiles().size(),
          recovery.damage().size());
    }
  }

  /**
   * Opens (creating if needed) the store in {@code config.path()}.
   *
   * @throws StoreLockedException if another process or another instance in this JVM has it open
   * @throws StoreCorruptedException if a file is damaged beyond automatic recovery
   * @throws QueueStoreException for other I/O failures
   */
  static FileStorage open(FileStoreConfig config, Clock clock, StoreIo io) {
    Path abs = config.path().toAbsolutePath().normalize();
    Path real;
    try {
      createDirectories(io, abs);
      real = abs.toRealPath();
    } catch (IOException e) {
      throw new QueueStoreException(
          null, "cannot create file store directory " + abs + ": " + e, e);
    }
    if (!Files.isDirectory(real)) {
      throw new QueueStoreException(null, "file store path is not a directory: " + real);
    }
    StoreLock lock;
    try {
      lock = StoreLock.acquire(real, true);
    } catch (IOException e) {
      throw new QueueStoreException(null, "cannot lock file store " + real + ": " + e, e);
    }
    try {
      return new FileStorage(config, real, clock, io, lock);
    } catch (RuntimeException e) {
      lock.close();
      throw e;
    }
  }

  /**
   * The real path of the existing store {@code abs} (absolute, normalised); reads only.
   *
   * @throws StoreNotFoundException if the path does not exist, is not a directory, or holds no
   *     {@code qb-store} marker
   * @throws StoreCorruptedException if the marker is damaged or of another version
   * @throws IOException if it cannot be read
   */
  static Path existing(Path abs) throws IOException {
    BasicFileAttributes a;
    try {
      a = Files.readAttributes(abs, BasicFileAttributes.class);
    } catch (NoSuchFileException e) {
      throw new StoreNotFoundException("file:" + abs, "the directory does not exist");
    }
    if (!a.isDirectory()) {
      throw new StoreNotFoundException(
          "file:" + abs,
          "the path is " + (a.isRegularFile() ? "a file" : "something else") + ", not a directory");
    }
    Path real = abs.toRealPath();
    Path marker = real.resolve(MARKER);
    if (!Files.isRegularFile(marker)) {
      throw new StoreNotFoundException(
          "file:" + real, "the directory holds no " + MARKER + " marker");
    }
    checkMarker(marker);
    return real;
  }

  /**
   * Creates {@code dir} and missing parents, each new one fsynced into its parent; the store
   * directory itself owner-only ({@code rwx------}) where POSIX permissions exist.
   */
  static void createDirectories(StoreIo io, Path dir) throws IOException {
    Deque<Path> missing = new ArrayDeque<>();
    for (Path p = dir; p != null && !Files.exists(p); p = p.getParent()) {
      missing.push(p);
    }
    boolean posix = dir.getFileSystem().supportedFileAttributeViews().contains("posix");
    while (!missing.isEmpty()) {
      Path p = missing.pop();
      try {
        if (posix && p.equals(dir)) {
          Files.createDirectory(
              p,
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } else {
          Files.createDirectory(p);
        }
      } catch (FileAlreadyExistsException e) {
        continue; // created concurrently
      }
      if (p.getParent() != null) {
        io.syncDirectory(p.getParent());
      }
    }
  }

  /** Creates a directory inside the store (fsynced into its parent). */
  void createDir(Path p) throws IOException {
    Files.createDirectory(p);
    io.syncDirectory(p.getParent());
  }

  // ---------------------------------------------------------------- loading

  private void load(RecoveryReport.Builder report) throws IOException {
    Path marker = dir.resolve(MARKER);
    if (Files.exists(marker)) {
      checkMarker(marker);
    } else {
      try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
        for (Path p : ds) {
          String n = p.getFileName().toString();
          if (!n.equals(LOCK) && !n.equals(MARKER + ".tmp")) {
            throw new QueueStoreException(
                null,
                "refusing to use "
                    + dir
                    + " as a file store: it is not empty ("
                    + n
                    + ") and holds no "
                    + MARKER
                    + " marker");
          }
        }
      }
      if (!Files.isDirectory(dir.resolve(QUEUES))) {
        createDir(dir.resolve(QUEUES));
      }
      if (!Files.isDirectory(dir.resolve(TRASH))) {
        createDir(dir.resolve(TRASH));
      }
      Blobs.writeAtomically(
          io, marker, Blobs.wrap(Blobs.STORE_MAGIC, MARKER_PAYLOAD, MARKER_PAYLOAD.length));
    }
    Files.deleteIfExists(dir.resolve(MARKER + ".tmp"));
    if (!Files.isDirectory(dir.resolve(QUEUES))) {
      createDir(dir.resolve(QUEUES));
    }
    if (!Files.isDirectory(dir.resolve(TRASH))) {
      createDir(dir.resolve(TRASH));
    }
    emptyTrash(report);
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir.resolve(QUEUES))) {
      for (Path qdir : ds) {
        if (!Files.isDirectory(qdir)) {
          continue;
        }
        Path cfg = qdir.resolve(QUEUE_CONFIG);
        if (!Files.exists(cfg)) {
          LOG.warn(
              "file store {}: {} has no {} (an interrupted queue creation); it is repaired when the"
                  + " queue is created again",
              dir,
              qdir,
              QUEUE_CONFIG);
          continue;
        }
        loadQueue(qdir, cfg, report);
      }
    }
  }

  /**
   * The configuration in {@code cfg}, the {@code queue.cfg} of the queue directory {@code qdir}.
   *
   * @throws java.nio.file.NoSuchFileException if there is no such file
   * @throws StoreCorruptedException if it is damaged or names a queue whose directory is another
   * @throws IOException if it cannot be read
   */
  static QueueConfig readQueueConfig(Path qdir, Path cfg) throws IOException {
    byte[] payload =
        Blobs.unwrap(
            Blobs.QUEUE_CONFIG_MAGIC, "queue configuration", cfg, Files.readAllBytes(cfg), null);
    QueueConfig config;
    try {
      config = QueueConfigCodec.fromJson(payload);
    } catch (IllegalArgumentException e) {
      throw new StoreCorruptedException(
          null, cfg.toString(), -1, "bad queue configuration: " + e.getMessage());
    }
    String name = config.name();
    String expected = Names.encode("queue name", name);
    if (!qdir.getFileName().toString().equals(expected)) {
      throw new StoreCorruptedException(
          name,
          cfg.toString(),
          -1,
          "configuration of queue '"
              + name
              + "' found in directory "
              + qdir.getFileName()
              + ", expected "
              + expected);
    }
    return config;
  }

  /**
   * Checks the store marker's content.
   *
   * @throws StoreCorruptedException if it is not the marker of a file store of this version
   * @throws IOException if it cannot be read
   */
  static void checkMarker(Path marker) throws IOException {
    byte[] payload =
        Blobs.unwrap(Blobs.STORE_MAGIC, "store marker", marker, Files.readAllBytes(marker), null);
    if (!java.util.Arrays.equals(payload, MARKER_PAYLOAD)) {
      throw new StoreCorruptedException(
          null, marker.toString(), Blobs.HEADER, "unexpected store marker content");
    }
  }

  private void loadQueue(Path qdir, Path cfg, RecoveryReport.Builder report) throws IOException {
    QueueConfig config = readQueueConfig(qdir, cfg);
    String name = config.name();
    Files.deleteIfExists(qdir.resolve(QUEUE_CONFIG + ".tmp"));
    SegmentedLog log = SegmentedLog.open(name, qdir, env, report);
    log.dedupWindow(config.dedupWindow());
    QueueEntry entry = new QueueEntry(name, qdir, log, config);
    Path gdir = entry.groupsDir();
    if (!Files.isDirectory(gdir)) {
      createDir(gdir);
    }
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(gdir)) {
      for (Path f : ds) {
        String n = f.getFileName().toString();
        if (n.endsWith(".tmp")) {
          Files.deleteIfExists(f);
          report.removed(f);
        } else if (n.endsWith(GroupLog.SUFFIX)) {
          GroupLog g = GroupLog.open(name, f, io, groupSyncAlways(), report);
          String encoded = n.substring(0, n.length() - GroupLog.SUFFIX.length());
          if (!encoded.equals(Names.encode("group id", g.id))) {
            g.close();
            throw new StoreCorruptedException(
                name,
                f.toString(),
                -1,
                "holds group '" + g.id + "', not the group its name encodes");
          }
          entry.groups.put(g.id, g);
        }
      }
    }
    for (String filter : config.topics()) {
      try {
        TopicFilters.validateFilter(filter);
      } catch (InvalidConfigException e) {
        LOG.warn(
            "file store {}: queue {} has an invalid persisted topic filter: {}",
            dir,
            name,
            e.getMessage());
      }
    }
    queues.put(name, entry);
    index.addQueue(name, config.topics());
  }

  boolean groupSyncAlways() {
    return config.groupSync() == FileStoreConfig.GroupSync.ALWAYS || config.syncEveryAppend();
  }

  private void emptyTrash(RecoveryReport.Builder report) throws IOException {
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir.resolve(TRASH))) {
      for (Path p : ds) {
        deleteRecursively(p);
        report.removed(p);
      }
    }
  }

  static void deleteRecursively(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    Files.walkFileTree(
        root,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Files.delete(file);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
            if (exc != null) {
              throw exc;
            }
            Files.delete(d);
            return FileVisitResult.CONTINUE;
          }
        });
  }

  /** Moves a queue directory to the trash atomically (durable), then deletes it. */
  void discard(Path qdir) throws IOException {
    Path target = dir.resolve(TRASH).resolve(qdir.getFileName() + "." + System.nanoTime());
    Files.move(qdir, target, StandardCopyOption.ATOMIC_MOVE);
    io.syncDirectory(qdir.getParent());
    io.syncDirectory(target.getParent());
    try {
      deleteRecursively(target);
    } catch (IOException e) {
      LOG.warn(
          "file store {}: could not remove {} (removed at next open): {}",
          dir,
          target,
          e.toString());
    }
  }

  // ---------------------------------------------------------------- access

  QueueEntry entry(String name) {
    checkOpen();
    QueueEntry e = name == null ? null : queues.get(name);
    if (e == null) {
      throw new QueueNotFoundException(name);
    }
    return e;
  }

  void checkOpen() {
    if (closed) {
      throw new StoreClosedException(description);
    }
  }

  private void syncAll() {
    try {
      for (QueueEntry e : queues.values()) {
        e.log.syncActive();
        for (GroupLog g : e.groups.values()) {
          g.syncIfDirty();
        }
      }
    } catch (RuntimeException e) {
      LOG.warn("file store {}: background sync failed: {}", dir, e.toString());
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

  /**
   * What opening this store repaired, and the damage it found in sealed segments and refuses to
   * serve until {@link FileStores#repair} (BEHAVIOUR F-RECOVER); empty when the store was clean.
   */
  public RecoveryReport recovery() {
    return recovery;
  }

  /** The store directory (real, absolute path). */
  public Path directory() {
    return dir;
  }

  /** Barriers (segment fsyncs) completed since open; for tests. */
  long syncCount() {
    return env.syncs().sum();
  }

  /** Indexes rebuilt since open because their file was missing or damaged; for tests. */
  long indexRebuilds() {
    return env.indexRebuilds().sum();
  }

  ReadHandles readHandles() {
    return env.handles();
  }

  /**
   * Makes buffered appends and group changes durable, then closes every file and releases the lock.
   * Idempotent.
   */
  @Override
  public void close() {
    synchronized (adminLock) {
      if (closed) {
        return;
      }
      closed = true;
    }
    if (syncer != null) {
      syncer.shutdown();
      try {
        if (!syncer.awaitTermination(30, TimeUnit.SECONDS)) {
          LOG.warn("file store {}: background sync did not stop within 30 s", dir);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    closeQuietly();
  }

  private void closeQuietly() {
    for (QueueEntry e : queues.values()) {
      e.log.close();
      for (GroupLog g : e.groups.values()) {
        g.close();
      }
    }
    env.handles().close();
    lock.close();
  }

  @Override
  public String toString() {
    return description;
  }

  List<String> queueNamesForTest() {
    return new ArrayList<>(queues.keySet());
  }
}
