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
    Map<String, String> cp = readCheckpointSnapshot(newest);
    scanNewest(newest, cp);
  }

  private Map<String, String> readCheckpointSnapshot(Segment s) throws IOException {
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
   * Scans the newest segment: every frame's framing, CRC, version and offset continuity; cuts the
   * file at the first bad frame; rebuilds its indexes and the checkpoint map; makes it active.
   */
  private void scanNewest(Segment s, Map<String, String> cp) throws IOException {
    s.activate(null, 0, s.baseOffset);
    s.offsetIndex.clear();
    s.timeIndex.clear();
    long fileSize;
    long pos = 0;
    long expected = s.baseOffset;
    String problem = null;
    try (FileChannel ch = env.io().openReadable(s.logFile)) {
      fileSize = ch.size();
      ChunkReader r = new ChunkReader(ch::read, fileSize, 1 << 20);
      while (pos < fileSize) {
        int at = r.fill(pos, Frames.HEADER);
        if (at < 0) {
          problem = "torn frame header (" + (fileSize - pos) + " bytes at the end)";
          break;
        }
        byte[] b = r.buffer();
        if (Frames.magic(b, at) != Frames.MAGIC) {
          problem = String.format("bad frame magic 0x%08X", Frames.magic(b, at));
          break;
        }
        Frames.FrameHeader h = Frames.header(b, at);
        if (h.length() < Frames.HEADER) {
          problem = "bad frame length " + h.length();
          break;
        }
        if (h.length() > fileSize - pos) {
          problem =
              "torn frame: declares "
                  + h.length()
                  + " bytes, "
                  + (fileSize - pos)
                  + " remain in the file";
          break;
        }
        at = r.fill(pos, h.length());
        b = r.buffer();
        if (at < 0) {
          problem = "short read of a " + h.length() + "-byte frame";
          break;
        }
        if (Frames.crc(b, at, h.length()) != h.crc()) {
          problem = "CRC-32C mismatch in the frame of offset " + h.baseOffset();
          break;
        }
        if (h.version() != Frames.VERSION) {
          throw s.corruption(
              queue,
              pos,
              "frame format version "
                  + h.version()
                  + " (this build reads version "
                  + Frames.VERSION
                  + "; the store was written by a newer version, upgrade to open it)");
        }
        if (h.baseOffset() != expected || h.count() < 1) {
          // magic and length passed above: this names the offsets
          problem = Frames.describeBadFrame(b, at, h, pos, fileSize, expected);
          break;
        }
        Map<String, String> delta;
        try {
          delta = Frames.checkpoints(b, at, h);
        } catch (FormatException e) {
          problem = "undecodable checkpoint section: " + e.getMessage();
          break;
        }
        cp.putAll(delta);
        s.recordFrame(h, config);
        expected = h.endOffset();
        pos += h.length();
      }
    }
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
    s.activate(w, pos, expected);
    if (problem != null) {
      s.markSynced(expected);
    }
    segments.start(s, expected, Collections.unmodifiableMap(new LinkedHashMap<>(cp)));
  }
}
