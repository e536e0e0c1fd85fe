package io.queuebridge.core.store.file;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.PendingEntry;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The explicit repair of a closed file store ({@link FileStores#repair}): finds, per queue, the
 * damage in its sealed segments as opening does ({@link LogRecovery#scanSealed}), and cuts the log
 * at the first damaged frame. Runs under the store's lock, on the files alone (no store is open).
 *
 * <p>Single-threaded; one instance per run.
 */
final class FileStoreRepair {
  private static final Logger LOG = LoggerFactory.getLogger(FileStoreRepair.class);
  private static final Pattern SEGMENT = Pattern.compile("\\d{20}\\.log");

  private final FileStoreConfig config;
  private final StoreIo io;
  private final boolean dryRun;
  private final Clock clock = Clock.systemUTC();

  private FileStoreRepair(FileStoreConfig config, StoreIo io, boolean dryRun) {
    this.config = config;
    this.io = io;
    this.dryRun = dryRun;
  }

  /** See {@link FileStores#repair(Path, boolean)}. */
  static RepairReport run(FileStoreConfig config, StoreIo io, boolean dryRun) {
    Path abs = config.path().toAbsolutePath().normalize();
    try {
      Path real = FileStorage.existing(abs);
      StoreLock lock = StoreLock.acquire(real, !dryRun);
      try {
        return new FileStoreRepair(config, io, dryRun).repair(real);
      } finally {
        lock.close();
      }
    } catch (IOException e) {
      throw new QueueStoreException(null, "repairing file store " + abs + " failed: " + e, e);
    }
  }

  /** What one queue's cut is, found before anything changes. */
  private record Plan(
      RepairReport.QueueRepair report,
      Path dir,
      Segment damaged,
      long position,
      List<Segment> deleted,
      long logicalHead,
      List<VerifiedSegments.Stamp> intact) {}

  private RepairReport repair(Path store) throws IOException {
    TreeMap<String, Path> queueDirs = new TreeMap<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(store.resolve(FileStorage.QUEUES))) {
      for (Path qdir : ds) {
        Path cfg = qdir.resolve(FileStorage.QUEUE_CONFIG);
        if (Files.isDirectory(qdir) && Files.exists(cfg)) {
          QueueConfig qc = FileStorage.readQueueConfig(qdir, cfg);
          queueDirs.put(qc.name(), qdir);
        }
      }
    }
    List<RepairReport.QueueRepair> repaired = new ArrayList<>();
    for (Map.Entry<String, Path> q : queueDirs.entrySet()) {
      Plan plan = plan(q.getKey(), q.getValue());
      if (plan == null) {
        continue;
      }
      if (!dryRun) {
        apply(plan);
      }
      repaired.add(plan.report());
    }
    return new RepairReport(store, dryRun, repaired);
  }

  /** The cut {@code queue} needs, or null when its sealed segments are intact; changes nothing. */
  private Plan plan(String queue, Path qdir) throws IOException {
    TreeMap<Long, Path> files = new TreeMap<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(qdir)) {
      for (Path p : ds) {
        String name = p.getFileName().toString();
        if (SEGMENT.matcher(name).matches()) {
          files.put(Long.parseLong(name.substring(0, 20)), p);
        }
      }
    }
    // the segments opening would keep (see LogRecovery): not an empty newest one without its
    // snapshot (a torn roll), nor those wholly below the logical head (a torn truncation)
    TreeMap<Long, Path> logs = new TreeMap<>(files);
    while (logs.size() > 1) {
      Segment last = new Segment(logs.lastKey(), qdir, null);
      if (Files.size(last.logFile) == 0 && !Files.exists(last.checkpointFile)) {
        logs.pollLastEntry();
      } else {
        break;
      }
    }
    long logicalHead = LogHead.read(queue, qdir).orElse(0);
    while (logs.size() > 1 && logs.higherKey(logs.firstKey()) <= logicalHead) {
      logs.pollFirstEntry();
    }
    if (logs.size() < 2) {
      return null;
    }
    List<Long> bases = new ArrayList<>(logs.keySet());
    List<RecoveryReport.Damage> damage = new ArrayList<>();
    List<VerifiedSegments.Stamp> intact = new ArrayList<>();
    Segment damaged = null;
    LogRecovery.SealedScan cut = null;
    for (int i = 0; i + 1 < bases.size(); i++) {
      Segment s = new Segment(bases.get(i), qdir, null);
      long next = bases.get(i + 1);
      VerifiedSegments.Stamp stamp = VerifiedSegments.Stamp.of(s.baseOffset, s.logFile);
      LogRecovery.SealedScan scan = LogRecovery.scanSealed(queue, s, next, io, config);
      if (scan.problem() == null) {
        if (damaged == null) {
          intact.add(stamp);
        }
        continue;
      }
      damage.add(scan.damage(queue, s, next, logicalHead));
      if (damaged == null) {
        damaged = s;
        cut = scan;
      }
    }
    if (damaged == null) {
      return null;
    }
    try {
      LogRecovery.readCheckpointSnapshot(queue, damaged);
    } catch (StoreCorruptedException e) {
      throw new StoreCorruptedException(
          queue,
          e.file(),
          e.position(),
          "cannot repair queue '"
              + queue
              + "': after the cut "
              + damaged.logFile
              + " would be its newest segment, which needs its checkpoint snapshot ("
              + e.getMessage()
              + ")");
    }
    Segment newest = new Segment(bases.get(bases.size() - 1), qdir, null);
    long oldTail = LogRecovery.validEndOfNewest(queue, newest, io, config);
    long newTail = cut.validEnd();
    List<RepairReport.SegmentCut> cuts = new ArrayList<>();
    long size = Files.size(damaged.logFile);
    if (size > cut.position()) {
      cuts.add(
          new RepairReport.SegmentCut(
              damaged.logFile, cut.position(), size - cut.position(), false));
    }
    List<Segment> deleted = new ArrayList<>();
    for (Map.Entry<Long, Path> f : files.tailMap(damaged.baseOffset, false).entrySet()) {
      Segment s = new Segment(f.getKey(), qdir, null);
      deleted.add(s);
      cuts.add(new RepairReport.SegmentCut(s.logFile, 0, Files.size(s.logFile), true));
    }
    List<RepairReport.GroupClamp> clamps = new ArrayList<>();
    for (Map.Entry<Path, ConsumerGroupState> g : groups(queue, qdir).entrySet()) {
      RepairReport.GroupClamp c = clamp(g.getValue(), newTail);
      if (c != null) {
        clamps.add(c);
      }
    }
    long from = Math.max(newTail, logicalHead);
    RepairReport.QueueRepair report =
        new RepairReport.QueueRepair(
            queue, damage, newTail, from, Math.max(from, oldTail), cuts, clamps);
    return new Plan(report, qdir, damaged, cut.position(), deleted, logicalHead, intact);
  }

  /** Every group log of the queue with its state, read only (as a reader beside a writer would). */
  private static Map<Path, ConsumerGroupState> groups(String queue, Path qdir) throws IOException {
    Map<Path, ConsumerGroupState> out = new TreeMap<>();
    Path gdir = qdir.resolve(FileStorage.GROUPS);
    if (!Files.isDirectory(gdir)) {
      return out;
    }
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(gdir, "*" + GroupLog.SUFFIX)) {
      for (Path f : ds) {
        out.put(f, readGroup(queue, f));
      }
    }
    return out;
  }

  private static ConsumerGroupState readGroup(String queue, Path f) throws IOException {
    byte[] content = Files.readAllBytes(f);
    int version = GroupLog.checkHeader(queue, f, content);
    GroupLog.Replay r =
        GroupLog.replay(queue, content, GroupLog.HEADER, content.length, null, version);
    if (r.table() == null) {
      throw new StoreCorruptedException(
          queue,
          f.toString(),
          GroupLog.HEADER,
          "consumer-group log has no readable snapshot"
              + (r.problem() == null ? "" : ": " + r.problem()));
    }
    return r.table().snapshot();
  }

  /** How {@code g} must change so that nothing of it points at or past {@code tail}; or null. */
  private static RepairReport.GroupClamp clamp(ConsumerGroupState g, long tail) {
    List<Long> dropped = new ArrayList<>();
    for (PendingEntry e : g.pending()) {
      if (e.offset() >= tail) {
        dropped.add(e.offset());
      }
    }
    long cursor = Math.min(g.cursor(), tail);
    long committed = Math.min(g.committed(), tail);
    if (dropped.isEmpty() && cursor == g.cursor() && committed == g.committed()) {
      return null;
    }
    return new RepairReport.GroupClamp(
        g.id(), g.cursor(), cursor, g.committed(), committed, dropped);
  }

  /**
   * Cuts as planned, in an order that a crash cannot turn into a silent loss: the groups first (a
   * rerun finds them clamped already), then the later segments newest first (every prefix is a log
   * that opens), then the damaged segment's tail (were the process to stop before, the damaged
   * segment would be the newest, whose bad tail opening cuts in any case).
   */
  private void apply(Plan plan) throws IOException {
    RepairReport.QueueRepair r = plan.report();
    String queue = r.queue();
    for (Path f : groups(queue, plan.dir()).keySet()) {
      clampGroup(queue, f, r.newTail());
    }
    for (int i = plan.deleted().size() - 1; i >= 0; i--) {
      Segment s = plan.deleted().get(i);
      for (Path p : List.of(s.logFile, s.indexFile, s.timeIndexFile, s.checkpointFile)) {
        Files.deleteIfExists(p);
      }
      io.syncDirectory(plan.dir());
      LOG.warn("queue {}: repair deleted {} (after the damaged segment)", queue, s.logFile);
    }
    Segment d = plan.damaged();
    try (StoreIo.WritableFile w = io.openWritable(d.logFile, false)) {
      if (w.size() > plan.position()) {
        w.truncate(plan.position());
      }
      w.force();
    }
    Files.deleteIfExists(d.indexFile); // hints for the frames cut; rebuilt from the segment
    Files.deleteIfExists(d.timeIndexFile);
    io.syncDirectory(plan.dir());
    LOG.warn(
        "queue {}: repair cut {} at byte {}: offsets [{}, {}) ({} messages) are gone, the next"
            + " append gets offset {}",
        queue,
        d.logFile,
        plan.position(),
        r.fromOffset(),
        r.toOffset(),
        r.messages(),
        r.newTail());
    if (plan.logicalHead() > r.newTail()) {
      LogHead.write(io, plan.dir(), r.newTail());
    }
    VerifiedSegments.write(io, plan.dir(), plan.intact());
  }

  /** Clamps the group in {@code f} to {@code tail}, durably, if it points at or past it. */
  private void clampGroup(String queue, Path f, long tail) throws IOException {
    GroupLog g = GroupLog.open(queue, f, io, true, new RecoveryReport.Builder());
    try {
      ConsumerGroupState st = g.state();
      if (clamp(st, tail) == null) {
        return;
      }
      List<PendingEntry> kept = st.pending().stream().filter(e -> e.offset() < tail).toList();
      g.replace(
          new ConsumerGroupState(
              st.queue(),
              st.id(),
              st.pattern(),
              st.mode(),
              st.autoCommit(),
              Math.min(st.cursor(), tail),
              Math.min(st.committed(), tail),
              kept,
              st.consumers(),
              st.createdAt(),
              clock.instant()));
      LOG.warn(
          "queue {}: repair clamped consumer group {} to the new tail {}", queue, st.id(), tail);
    } finally {
      g.close();
    }
  }
}
