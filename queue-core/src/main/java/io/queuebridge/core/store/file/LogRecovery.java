package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.StoreCorruptedException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens one queue's log from its directory (recovery on open, BEHAVIOUR F-RECOVER): in O(newest
 * segment) plus one read of each sealed segment not verified before ({@code verify.on.open}).
 *
 * <ol>
 *   <li>Leftovers of interrupted writes are removed: {@code *.tmp} files, a checkpoint snapshot
 *       without its segment (a crash between the two), and an empty newest segment without its
 *       snapshot (a roll that crashed before its directory sync; nothing was ever appended to it).
 *   <li>Older (sealed) segments are verified frame by frame as {@code verify.on.open} asks: by
 *       default each one once in its present size and modification time ({@link VerifiedSegments}),
 *       {@code all} at every open, {@code newest} never (then only when read, {@link LogReader}).
 *       Damage there — a bad frame, or frames that do not hold exactly the offsets up to the next
 *       segment's base — is not cut (it may have been acknowledged): it is logged at WARN, reported
 *       ({@link RecoveryReport#damage}) and kept in the {@link SegmentSet}, which refuses to serve
 *       the range from the bad frame to the segment's end and refuses appends, until {@link
 *       FileStores#repair} cuts it.
 *   <li>Only the newest segment is scanned, verifying the framing, the offset continuity and the
 *       CRC of every frame; a torn or corrupt tail (a write that was never acknowledged) is cut,
 *       logged at WARN, reported in the {@link RecoveryReport}, and the cut is fsynced before
 *       appends resume. A frame of a newer format version is refused, not cut.
 *   <li>The head is the first segment's base, or the logical head ({@link LogHead}) when a
 *       truncation left one inside that segment; segments wholly below it (a truncation that
 *       stopped before deleting them) are deleted.
 *   <li>The checkpoint map is the newest segment's snapshot ({@code .cpt}, written when the segment
 *       was created) plus the checkpoints carried by its frames; its indexes are rebuilt in memory
 *       by the scan.
 * </ol>
 *
 * <p>Single-threaded: runs before the log is used.
 */
final class LogRecovery {
  private static final Logger LOG = LoggerFactory.getLogger(LogRecovery.class);
  private static final Pattern SEGMENT = Pattern.compile("\\d{20}\\.log");

  private final String queue;
  private final Path dir;
  private final LogEnv env;
  private final FileStoreConfig config;
  private final SegmentSet segments;
  private final RecoveryReport.Builder report;

  private LogRecovery(SegmentSet segments, LogEnv env, RecoveryReport.Builder report) {
    this.queue = segments.queue;
    this.dir = segments.dir;
    this.env = env;
    this.config = env.config();
    this.segments = segments;
    this.report = report;
  }

  /**
   * Recovers the log of {@code queue} in {@code dir} (see the class comment), recording what it
   * repaired in {@code report}.
   *
   * @param observer receives the barriers of every segment of the log
   * @return the log's segments, the newest one active
   * @throws StoreCorruptedException if the directory holds no segment, the newest segment's
   *     checkpoint snapshot is missing or damaged, or a frame has a newer format version
   * @throws IOException if a file cannot be read, cut or removed
   */
  static SegmentSet recover(
      String queue,
      Path dir,
      LogEnv env,
      Segment.SyncObserver observer,
      RecoveryReport.Builder report)
      throws IOException {
    SegmentSet segments = new SegmentSet(queue, dir, env, observer);
    new LogRecovery(segments, env, report).recover();
    return segments;
  }

  private void recover() throws IOException {
    TreeMap<Long, Path> logs = new TreeMap<>();
    List<Path> cpts = new ArrayList<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        String name = p.getFileName().toString();
        if (name.endsWith(".tmp")) {
          Files.deleteIfExists(p);
          report.removed(p);
        } else if (SEGMENT.matcher(name).matches()) {
          logs.put(Long.parseLong(name.substring(0, 20)), p);
        } else if (name.endsWith(".cpt")) {
          cpts.add(p);
        }
      }
    }
    for (Path cpt : cpts) { // a crash between snapshot and segment creation leaves a lone .cpt
      String name = cpt.getFileName().toString();
      String base = name.substring(0, name.length() - 4);
      if (!Files.exists(cpt.resolveSibling(base + ".log"))) {
        Files.deleteIfExists(cpt);
        report.removed(cpt);
      }
    }
    if (logs.isEmpty()) {
      throw new StoreCorruptedException(
          queue, dir.toString(), -1, "the queue's directory holds no segment file (*.log)");
    }
    // A roll that crashed before its directory sync can leave an empty newest segment without its
    // checkpoint snapshot: nothing was ever appended to it, so the previous segment is the newest.
    while (logs.size() > 1) {
      Map.Entry<Long, Path> last = logs.lastEntry();
      Segment probe = segments.segment(last.getKey());
      if (Files.size(last.getValue()) == 0 && !Files.exists(probe.checkpointFile)) {
        Files.deleteIfExists(probe.logFile);
        Files.deleteIfExists(probe.indexFile);
        Files.deleteIfExists(probe.timeIndexFile);
        env.io().syncDirectory(dir);
        report.removed(probe.logFile);
        logs.pollLastEntry();
      } else {
        break;
      }
    }
    long logicalHead = LogHead.read(queue, dir).orElse(0);
    // A truncation interrupted between writing the head file and deleting the segments below it
    // leaves segments that hold nothing readable: finish its work.
    while (logs.size() > 1 && logs.higherKey(logs.firstKey()) <= logicalHead) {
      Segment below = segments.segment(logs.firstKey());
      for (Path p :
          List.of(below.logFile, below.indexFile, below.timeIndexFile, below.checkpointFile)) {
        Files.deleteIfExists(p);
      }
      env.io().syncDirectory(dir);
      report.removed(below.logFile);
      logs.pollFirstEntry();
    }
    Segment newest = null;
    for (Map.Entry<Long, Path> e : logs.entrySet()) {
      Segment s = segments.segment(e.getKey());
      if (newest != null) {
        newest.endOffset = s.baseOffset;
      }
      s.sealed = true;
      s.size = Files.size(e.getValue());
      segments.add(s);
      newest = s;
    }
    Map<String, String> cp = readCheckpointSnapshot(queue, newest);
    List<RecoveryReport.Damage> damage = verifySealed(logicalHead);
    scanNewest(newest, cp, logicalHead);
    segments.setDamage(damage);
  }

  /**
   * Verifies the sealed segments as {@code verify.on.open} asks (see {@link VerifiedSegments}),
   * oldest first, and records the segments found intact in the queue's verified-segments file.
   * Damage is reported and logged, never cut: those offsets may have been acknowledged.
   *
   * @return the damage found, oldest first
   */
  private List<RecoveryReport.Damage> verifySealed(long logicalHead) throws IOException {
    FileStoreConfig.VerifyOnOpen mode = config.verifyOnOpen();
    List<Segment> all = new ArrayList<>(segments.oldestFirst());
    if (mode == FileStoreConfig.VerifyOnOpen.NEWEST) {
      return List.of();
    }
    Map<Long, VerifiedSegments.Stamp> known = VerifiedSegments.read(queue, dir);
    Map<Long, VerifiedSegments.Stamp> intact = new HashMap<>();
    List<RecoveryReport.Damage> found = new ArrayList<>();
    boolean changed = false;
    for (int i = 0; i + 1 < all.size(); i++) {
      Segment s = all.get(i);
      VerifiedSegments.Stamp now = VerifiedSegments.Stamp.of(s.baseOffset, s.logFile);
      VerifiedSegments.Stamp before = known.get(s.baseOffset);
      if (mode == FileStoreConfig.VerifyOnOpen.SEALED_ONCE && now.equals(before)) {
        intact.put(s.baseOffset, now);
        continue;
      }
      long next = all.get(i + 1).baseOffset;
      RecoveryReport.Damage d =
          scanSealed(queue, s, next, env.io(), config).damage(queue, s, next, logicalHead);
      report.verified(now.size());
      if (d == null) {
        intact.put(s.baseOffset, now);
        changed |= !now.equals(before);
      } else {
        LOG.warn(
            "{}; reads of that range fail and appends to queue {} are refused until the store is"
                + " repaired ({})",
            d.describe(),
            queue,
            SegmentSet.REPAIR_HINT);
        report.damage(d);
        found.add(d);
        changed |= before != null;
      }
    }
    for (Long base : known.keySet()) {
      changed |= !intact.containsKey(base); // a segment deleted or damaged since
    }
    if (changed) {
      List<VerifiedSegments.Stamp> stamps = List.copyOf(intact.values());
      report.afterOpen(
          () -> {
            try {
              VerifiedSegments.write(env.io(), dir, stamps);
            } catch (IOException e) {
              LOG.warn(
                  "queue {}: could not write {} (its segments are verified again at the next"
                      + " open): {}",
                  queue,
                  VerifiedSegments.file(dir),
                  e.toString());
            }
          });
    }
    return found;
  }

  /**
   * What reading a sealed segment frame by frame found.
   *
   * @param position bytes of whole, valid frames from the start of the file
   * @param validEnd the offset after the last valid frame
   * @param problem why the segment is not intact; null when it is
   */
  record SealedScan(long position, long validEnd, String problem) {

    /**
     * The damage this scan of {@code s} found, as a report names it: from the first bad frame (or
     * the queue's head, {@code logicalHead}, if that is higher) to {@code next}, the next segment's
     * base; null when the segment is intact.
     */
    RecoveryReport.Damage damage(String queue, Segment s, long next, long logicalHead) {
      if (problem == null) {
        return null;
      }
      return new RecoveryReport.Damage(
          queue, s.logFile, position, Math.max(validEnd, logicalHead), next, problem);
    }
  }

  /**
   * Reads the sealed segment {@code s}, whose successor starts at {@code next}, frame by frame
   * ({@link FrameScan}: framing, offset continuity, CRC-32C, format version), and checks that its
   * frames hold exactly the offsets {@code [s.base, next)}. Reads the file only; changes nothing.
   *
   * @throws StoreCorruptedException for a whole frame of a newer format version (refused, never
   *     reported as damage to be cut)
   * @throws IOException if the file cannot be read
   */
  static SealedScan scanSealed(
      String queue, Segment s, long next, StoreIo io, FileStoreConfig config) throws IOException {
    Segment scratch = new Segment(s.baseOffset, s.logFile.getParent(), null);
    scratch.activate(null, 0, s.baseOffset);
    FrameScan.Result r;
    try (FileChannel ch = io.openReadable(s.logFile)) {
      r =
          FrameScan.scan(
              queue, scratch, ch::read, 0, s.baseOffset, ch.size(), next, config, new HashMap<>());
    }
    String problem = r.problem();
    if (problem == null && r.endOffset() != next) {
      problem =
          "the file ends at offset "
              + r.endOffset()
              + ", but the next segment starts at offset "
              + next;
    }
    return new SealedScan(r.position(), r.endOffset(), problem);
  }

  /** Scans the newest segment {@code s} read-only: the offset after its last valid frame. */
  static long validEndOfNewest(String queue, Segment s, StoreIo io, FileStoreConfig config)
      throws IOException {
    Segment scratch = new Segment(s.baseOffset, s.logFile.getParent(), null);
    scratch.activate(null, 0, s.baseOffset);
    try (FileChannel ch = io.openReadable(s.logFile)) {
      return FrameScan.scan(
              queue,
              scratch,
              ch::read,
              0,
              s.baseOffset,
              ch.size(),
              Long.MAX_VALUE,
              config,
              new HashMap<>())
          .endOffset();
    }
  }

  /**
   * The checkpoint map as of {@code s}'s base, from its snapshot file ({@code .cpt}).
   *
   * @throws StoreCorruptedException if the snapshot is missing or damaged
   * @throws IOException if it cannot be read
   */
  static Map<String, String> readCheckpointSnapshot(String queue, Segment s) throws IOException {
    byte[] content;
    try {
      content = Files.readAllBytes(s.checkpointFile);
    } catch (NoSuchFileException e) {
      throw new StoreCorruptedException(
          queue,
          s.checkpointFile.toString(),
          -1,
          "the checkpoint snapshot of the newest segment is missing");
    }
    byte[] payload =
        Blobs.unwrap(
            Blobs.CHECKPOINT_MAGIC, "checkpoint snapshot", s.checkpointFile, content, queue);
    try {
      ByteSource src = new ByteSource(payload, 0, payload.length);
      long base = src.getLong();
      if (base != s.baseOffset) {
        throw new FormatException("snapshot is for base offset " + base, 0);
      }
      int n = src.getInt();
      Map<String, String> map = new HashMap<>();
      for (int i = 0; i < n; i++) {
        map.put(src.getString(), src.getString());
      }
      return map;
    } catch (FormatException e) {
      throw new StoreCorruptedException(
          queue,
          s.checkpointFile.toString(),
          Blobs.HEADER + e.position(),
          "bad checkpoint snapshot: " + e.getMessage());
    }
  }

  /**
   * Scans the newest segment ({@link FrameScan}): every frame's framing, CRC, version and offset
   * continuity; cuts the file at the first bad frame; rebuilds its indexes and the checkpoint map;
   * makes it active with the head at {@code logicalHead} or the first segment's base.
   */
  private void scanNewest(Segment s, Map<String, String> cp, long logicalHead) throws IOException {
    s.activate(null, 0, s.baseOffset);
    s.offsetIndex.clear();
    s.timeIndex.clear();
    long fileSize;
    FrameScan.Result scan;
    try (FileChannel ch = env.io().openReadable(s.logFile)) {
      fileSize = ch.size();
      scan =
          FrameScan.scan(queue, s, ch::read, 0, s.baseOffset, fileSize, Long.MAX_VALUE, config, cp);
    }
    long pos = scan.position();
    long expected = scan.endOffset();
    String problem = scan.problem();
    StoreIo.WritableFile w = env.io().openWritable(s.logFile, false);
    try {
      if (problem != null) {
        long cut = fileSize - pos;
        LOG.warn(
            "queue {}: cut {} bytes from the tail of {} at byte {}: {} (never acknowledged)",
            queue,
            cut,
            s.logFile,
            pos,
            problem);
        w.truncate(pos);
        w.force();
        env.io().syncDirectory(dir);
        report.logCut(new RecoveryReport.Cut(queue, s.logFile, pos, cut, problem));
      }
    } catch (IOException e) {
      w.close();
      throw e;
    }
    if (logicalHead > expected) {
      LOG.warn(
          "queue {}: head file {} says {}, beyond the recovered tail {} (appends lost in a crash);"
              + " the head is the tail",
          queue,
          LogHead.file(dir),
          logicalHead,
          expected);
      // the file says so too: else the offsets appended from here on up to the old head would be
      // hidden below it at the next open
      LogHead.write(env.io(), dir, expected);
    }
    s.activate(w, pos, expected);
    if (problem != null) {
      s.markSynced(expected);
    }
    segments.start(s, expected, Collections.unmodifiableMap(new LinkedHashMap<>(cp)), logicalHead);
  }
}
