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
 * Opens one queue's log from its directory (recovery on open), in O(newest segment).
 *
 * <ol>
 *   <li>Leftovers of interrupted writes are removed: {@code *.tmp} files, a checkpoint snapshot
 *       without its segment (a crash between the two), and an empty newest segment without its
 *       snapshot (a roll that crashed before its directory sync; nothing was ever appended to it).
 *   <li>Older segments are trusted until read: their size is taken from the file and each is
 *       verified frame by frame when it is read ({@link LogReader}).
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
    scanNewest(newest, cp, logicalHead);
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
      scan = FrameScan.scan(queue, s, ch::read, 0, s.baseOffset, fileSize, config, cp);
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
    }
    s.activate(w, pos, expected);
    if (problem != null) {
      s.markSynced(expected);
    }
    segments.start(s, expected, Collections.unmodifiableMap(new LinkedHashMap<>(cp)), logicalHead);
  }
}
