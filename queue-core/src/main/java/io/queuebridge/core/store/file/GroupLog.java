package io.queuebridge.core.store.file;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.support.GroupTable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One consumer group's state, persisted as an operation log with snapshots.
 *
 * <p><b>File</b> {@code groups/<encoded group id>.grp} (big-endian):
 *
 * <pre>
 *   header  int magic 0x5142474C ("QBGL"), short version (1, 2 or 3), short 0, long 0 (16 bytes)
 *   record* int length (of type + payload), int CRC-32C (of type + payload), byte type, payload
 * </pre>
 *
 * The first record is always a SNAPSHOT (the full state); later records are single changes:
 *
 * <pre>
 *   1 SNAPSHOT        string id, string pattern, byte mode (0 queue, 1 stream), byte autoCommit,
 *                     long cursor, long committed, instant createdAt, instant updatedAt,
 *                     int n, n x entry, int m, m x (string key, consumer)
 *                     [, byte paused]                                 (version 3 only)
 *   2 PENDING_PUT     instant updatedAt, entry            (add, update, transfer)
 *   3 PENDING_REMOVE  instant updatedAt, long offset
 *   4 CURSOR          instant updatedAt, long cursor
 *   5 COMMITTED       instant updatedAt, long committed, long cursor
 *   6 CONSUMER_PUT    instant updatedAt, string key, consumer
 *   7 CONSUMER_REMOVE instant updatedAt, string key
 *   8 CLAIM           instant updatedAt, long cursor, int n, n x entry   (claimPending)
 *   9 ACK             instant updatedAt, long offset, long committed, long cursor
 *                                                    (acknowledgePending: removal + commit)
 *   entry    = long offset, string consumerId, instant claimedAt, int deliveryCount,
 *              instant firstClaimedAt, instant visibleAt
 *              [, string orderKey]                              (versions 2 and 3)
 *   consumer = string id, string clientId, instant registeredAt, instant lastHeartbeat
 *   instant  = long epochSecond, int nano
 * </pre>
 *
 * <p><b>Versions.</b> Version 2 adds the entry's ordering key (BEHAVIOUR Q-ORDER); the two are
 * otherwise the same. A log is written in version 1 as long as no entry of it carries a key, so a
 * store that orders nothing writes what earlier releases read. The first change that would write a
 * keyed entry into a version-1 log first rewrites the log as a version-2 snapshot (as compaction
 * does); an earlier release then refuses that log, naming its version. Version 3 adds the group's
 * paused flag at the end of a snapshot; pausing and resuming write a snapshot record, and the first
 * pause of a group rewrites its log as a version-3 snapshot in the same way. Every version is read.
 *
 * <p><b>Durability.</b> Every change is one {@code write} of one record before the call returns, so
 * it survives a process kill. With {@code group.sync=always} the record is also fsynced before the
 * call returns; with {@code interval} (default) the store's background thread fsyncs dirty group
 * logs every {@code sync.interval.ms}, so a machine crash may lose the last interval's changes.
 * Replay applies records in order and stops at the first torn or damaged one, so what survives is
 * always a <em>prefix</em> of the changes: the group looks as it did at some earlier moment, which
 * can cause redelivery (a pending entry or an older cursor comes back) but never a lost message,
 * provided the caller claims in the safe order (pending entry before cursor).
 *
 * <p><b>Compaction.</b> When the log exceeds both 1 MiB and four times its last snapshot, it is
 * replaced by a fresh snapshot: tmp file, fsync, rename, fsync directory.
 *
 * <p><b>Cost.</b> One small record write per change, O(log n) in-memory update; no
 * read-modify-write of the whole state, which is why every default method of the SPI is overridden
 * by the store.
 *
 * <p>Thread-safe: every method is synchronized on the group.
 */
final class GroupLog {
  private static final Logger LOG = LoggerFactory.getLogger(GroupLog.class);
  static final int MAGIC = 0x5142474C;

  /** The version of a log whose entries carry no ordering key (the only one before keys). */
  static final int VERSION = 1;

  /** The version of a log with ordering keys: each entry ends with its key. */
  static final int KEYED_VERSION = 2;

  /** The version of a log that records whether the group is paused: each snapshot ends with it. */
  static final int PAUSED_VERSION = 3;

  static final int HEADER = 16;
  static final String SUFFIX = ".grp";
  private static final long COMPACT_MIN_BYTES = 1 << 20;

  private static final int SNAPSHOT = 1;
  private static final int PENDING_PUT = 2;
  private static final int PENDING_REMOVE = 3;
  private static final int CURSOR = 4;
  private static final int COMMITTED = 5;
  private static final int CONSUMER_PUT = 6;
  private static final int CONSUMER_REMOVE = 7;
  private static final int CLAIM = 8;
  private static final int ACK = 9;

  final String queue;
  final String id;
  final Path file;
  private final StoreIo io;
  private final boolean syncAlways;

  private StoreIo.WritableFile out;
  private int version;
  private long size;
  private long snapshotBytes;
  private boolean dirty;
  private boolean closed;
  private QueueStoreException broken;
  private final ByteSink sink = new ByteSink(256);

  /** The state and the rules of every change (shared with the memory store); null until loaded. */
  private GroupTable table;

  private GroupLog(String queue, String id, Path file, StoreIo io, boolean syncAlways) {
    this.queue = queue;
    this.id = id;
    this.file = file;
    this.io = io;
    this.syncAlways = syncAlways;
  }

  /** Creates the group's file (tmp, fsync, rename, fsync directory). */
  static GroupLog create(ConsumerGroupState g, Path file, StoreIo io, boolean syncAlways)
      throws IOException {
    GroupLog log = new GroupLog(g.queue(), g.id(), file, io, syncAlways);
    log.load(g);
    log.rewrite(versionFor(g, VERSION));
    return log;
  }

  /**
   * Replays a group's file; cuts a torn or damaged tail (reported).
   *
   * @throws StoreCorruptedException if not even the header and first snapshot are readable
   */
  static GroupLog open(
      String queue, Path file, StoreIo io, boolean syncAlways, RecoveryReport.Builder report)
      throws IOException {
    byte[] content = Files.readAllBytes(file);
    int version = checkHeader(queue, file, content);
    Replay r = replay(queue, content, HEADER, content.length, null, version);
    if (r.table() == null) {
      throw new StoreCorruptedException(
          queue,
          file.toString(),
          HEADER,
          "consumer-group log has no readable snapshot"
              + (r.problem() == null ? "" : ": " + r.problem()));
    }
    GroupLog log = new GroupLog(queue, r.table().id(), file, io, syncAlways);
    log.table = r.table();
    log.version = version;
    int pos = r.end();
    log.snapshotBytes = pos;
    if (r.problem() != null) {
      long cut = content.length - pos;
      LOG.warn(
          "queue {}: cut {} bytes from consumer-group log {} at byte {}: {}",
          queue,
          cut,
          file,
          pos,
          r.problem());
      try (StoreIo.WritableFile w = io.openWritable(file, false)) {
        w.truncate(pos);
        w.force();
      }
      report.groupLogCut(new RecoveryReport.Cut(queue, file, pos, cut, r.problem()));
    }
    log.out = io.openWritable(file, false);
    log.size = pos;
    return log;
  }

  /**
   * Checks the 16-byte header at the start of {@code content}, a group log's bytes.
   *
   * @return the log's version, {@link #VERSION}, {@link #KEYED_VERSION} or {@link #PAUSED_VERSION}
   * @throws StoreCorruptedException if it is not a group log's header or has another version
   */
  static int checkHeader(String queue, Path file, byte[] content) {
    if (content.length < HEADER || ByteSource.getIntAt(content, 0) != MAGIC) {
      throw new StoreCorruptedException(
          queue, file.toString(), 0, "not a consumer-group log (bad header)");
    }
    int version = (content[4] & 0xFF) << 8 | (content[5] & 0xFF);
    if (version < VERSION || version > PAUSED_VERSION) {
      throw new StoreCorruptedException(
          queue,
          file.toString(),
          4,
          "consumer-group log format version "
              + version
              + " (this build reads versions "
              + VERSION
              + " to "
              + PAUSED_VERSION
              + (version > PAUSED_VERSION
                  ? "; written by a newer version, upgrade to open it)"
                  : ")"));
    }
    return version;
  }

  /**
   * What a replay found.
   *
   * @param table the group's state after the records replayed; null if no snapshot was read yet
   * @param end the position after the last whole, valid record replayed
   * @param problem why the replay stopped before {@code to}; null when it got there
   */
  record Replay(GroupTable table, int end, String problem) {}

  /**
   * Applies the records in {@code content[from, to)} in order to {@code table} (null before the
   * first snapshot, which then must come first), stopping at the first torn or damaged one. The
   * writer's recovery cuts the file there; a reader beside the writer reads on from there later.
   * {@code version} is the log's, from its header.
   */
  static Replay replay(
      String queue, byte[] content, int from, int to, GroupTable table, int version) {
    int pos = from;
    String problem = null;
    while (pos < to) {
      if (to - pos < 9) {
        problem = "torn record header";
        break;
      }
      int len = ByteSource.getIntAt(content, pos);
      int crc = ByteSource.getIntAt(content, pos + 4);
      if (len < 1 || len > to - pos - 8) {
        problem = "torn or bad record length " + len;
        break;
      }
      CRC32C c = new CRC32C();
      c.update(content, pos + 8, len);
      if ((int) c.getValue() != crc) {
        problem = "CRC-32C mismatch";
        break;
      }
      ByteSource src = new ByteSource(content, pos + 8, pos + 8 + len);
      try {
        int type = src.getByte();
        if (table == null && type != SNAPSHOT) {
          throw new FormatException("first record is not a snapshot", pos);
        }
        table = apply(queue, table, type, src, version);
        if (src.remaining() != 0) {
          throw new FormatException("record has " + src.remaining() + " trailing bytes", pos);
        }
      } catch (FormatException e) {
        problem = "undecodable record: " + e.getMessage();
        break;
      }
      pos += 8 + len;
    }
    return new Replay(table, pos, problem);
  }

  /**
   * Applies one decoded record to {@code t} (a snapshot to null creates the table); returns the
   * table. A record must not be applied partly: every field is decoded before the table changes.
   */
  private static GroupTable apply(
      String queue, GroupTable t, int type, ByteSource src, int version) {
    if (type == SNAPSHOT) {
      String gid = src.getString();
      if (t != null && !gid.equals(t.id())) {
        throw new FormatException(
            "snapshot of group " + gid + " in the log of " + t.id(), src.position());
      }
      ConsumerGroupState g = readSnapshotBody(src, queue, gid, version);
      if (t == null) {
        return new GroupTable(g);
      }
      t.set(g);
      return t;
    }
    if (type < PENDING_PUT || type > ACK) {
      throw new FormatException("unknown record type " + type, src.position() - 1);
    }
    Instant at = instant(src);
    switch (type) {
      case PENDING_PUT -> t.putPending(entry(src, version), at);
      case PENDING_REMOVE -> t.removePending(src.getLong(), at);
      case CURSOR -> t.setCursor(src.getLong(), at);
      case COMMITTED -> t.setCommitted(src.getLong(), src.getLong(), at);
      case CONSUMER_PUT -> {
        src.getString(); // the key: the consumer's id
        t.putConsumer(consumer(src), at);
      }
      case CONSUMER_REMOVE -> t.removeConsumer(src.getString(), at);
      case CLAIM -> {
        long newCursor = src.getLong();
        int n = count(src);
        List<PendingEntry> entries = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          entries.add(entry(src, version));
        }
        t.claim(entries, newCursor, at);
      }
      case ACK -> t.apply(new GroupTable.Ack(src.getLong(), src.getLong(), src.getLong(), at));
      default -> throw new AssertionError("record type " + type);
    }
    return t;
  }

  private void load(ConsumerGroupState g) {
    if (table == null) {
      table = new GroupTable(g);
    } else {
      table.set(g);
    }
  }

  // ---------------------------------------------------------------- reads

  synchronized ConsumerGroupState state() {
    checkOpen();
    return table.snapshot();
  }

  synchronized List<PendingEntry> pendingOf(String consumerId) {
    checkOpen();
    return table.pendingOf(consumerId);
  }

  synchronized List<PendingEntry> allPending() {
    checkOpen();
    return table.allPending();
  }

  synchronized io.queuebridge.core.store.GroupOverview overview() {
    checkOpen();
    return table.overview();
  }

  /**
   * {@code null} when no entry of this group is visible after {@code after} (or not queue mode).
   */
  synchronized java.time.Instant nextVisible(java.time.Instant after) {
    checkOpen();
    return table.nextVisible(after);
  }

  synchronized List<PendingEntry> duePending(java.time.Instant now, PendingEntry after, int limit) {
    checkOpen();
    return table.duePending(now, after, limit);
  }

  synchronized Map<String, PendingEntry> firstPendingByKey(java.util.Collection<String> keys) {
    checkOpen();
    return table.firstPendingByKey(keys);
  }

  synchronized java.util.Optional<PendingEntry> pendingAt(long offset) {
    checkOpen();
    return table.pendingAt(offset);
  }

  synchronized List<ConsumerInfo> consumerList() {
    checkOpen();
    return table.consumerList();
  }

  // ---------------------------------------------------------------- changes
  // Each checks with the table (which throws the documented error), writes one record, then applies
  // the change to the table: a refused or failed call changes nothing.

  synchronized void replace(ConsumerGroupState g) {
    checkWritable();
    int needed = versionFor(g, version);
    if (needed > version) {
      upgrade(needed);
    }
    begin(SNAPSHOT);
    writeSnapshotBody(sink, g.id(), g, version);
    commit();
    load(g);
    maybeCompact();
  }

  synchronized void addPending(PendingEntry e) {
    checkWritable();
    putPending(e, e.claimedAt());
  }

  synchronized void removePending(String consumerId, long offset) {
    checkWritable();
    table.held(consumerId, offset);
    Instant at = table.updatedAt();
    begin(PENDING_REMOVE);
    instant(sink, at);
    sink.putLong(offset);
    commit();
    table.removePending(offset, at);
    changed();
  }

  synchronized void updatePending(PendingEntry e) {
    checkWritable();
    table.checkPending(e);
    putPending(e, e.claimedAt());
  }

  /** {@code updatePending} of each entry {@link GroupTable#releasable} names, one record each. */
  synchronized List<PendingEntry> releaseBlocked(java.util.Collection<String> keys, Instant at) {
    checkWritable();
    List<PendingEntry> released = table.releasable(keys, at);
    for (PendingEntry e : released) {
      putPending(e, e.claimedAt());
    }
    return released;
  }

  synchronized PendingEntry transferPending(
      long offset, String from, String to, Instant now, Duration visibility) {
    checkWritable();
    PendingEntry moved = table.transfer(offset, from, to, now, visibility);
    putPending(moved, now);
    return moved;
  }

  private void putPending(PendingEntry e, Instant at) {
    if (version == VERSION && e.hasOrderKey()) {
      upgrade(KEYED_VERSION);
    }
    begin(PENDING_PUT);
    instant(sink, at);
    entry(sink, e, version);
    commit();
    table.putPending(e, at);
    changed();
  }

  /** {@code addPending} of each entry, then {@code updateCursor}, as one record. */
  synchronized void claim(List<PendingEntry> entries, long newCursor, Instant now) {
    checkWritable();
    if (version == VERSION && anyKeyed(entries)) {
      upgrade(KEYED_VERSION);
    }
    begin(CLAIM);
    instant(sink, now);
    sink.putLong(newCursor).putInt(entries.size());
    for (PendingEntry e : entries) {
      entry(sink, e, version);
    }
    commit();
    table.claim(entries, newCursor, now);
    changed();
  }

  /**
   * Removes the entry {@code consumerId} holds at {@code offset} with {@code deliveryCount}, and
   * raises the committed offset ({@link GroupTable#acknowledgement}), as one record.
   *
   * @return the committed offset afterwards
   */
  synchronized long acknowledge(String consumerId, long offset, int deliveryCount, Instant now) {
    checkWritable();
    GroupTable.Ack ack = table.acknowledgement(consumerId, offset, deliveryCount, now);
    begin(ACK);
    instant(sink, ack.updatedAt());
    sink.putLong(offset).putLong(ack.committed()).putLong(ack.cursor());
    commit();
    table.apply(ack);
    changed();
    return ack.committed();
  }

  /** Pauses or resumes the group: one snapshot record of the changed state ({@link #replace}). */
  synchronized void setPaused(boolean paused, Instant now) {
    checkWritable();
    replace(table.snapshot().withPaused(paused, now));
  }

  synchronized void updateCursor(long newCursor, Instant now) {
    checkWritable();
    begin(CURSOR);
    instant(sink, now);
    sink.putLong(newCursor);
    commit();
    table.setCursor(newCursor, now);
    changed();
  }

  synchronized void updateCommitted(long newCommitted, Instant now) {
    checkWritable();
    long newCursor = Math.max(table.cursor(), newCommitted);
    begin(COMMITTED);
    instant(sink, now);
    sink.putLong(newCommitted).putLong(newCursor);
    commit();
    table.setCommitted(newCommitted, newCursor, now);
    changed();
  }

  synchronized void registerConsumer(ConsumerInfo c) {
    checkWritable();
    begin(CONSUMER_PUT);
    instant(sink, c.lastHeartbeat());
    sink.putString(c.id());
    consumer(sink, c);
    commit();
    table.putConsumer(c, c.lastHeartbeat());
    changed();
  }

  synchronized void unregisterConsumer(String consumerId) {
    checkWritable();
    if (!table.hasConsumer(consumerId)) {
      return;
    }
    Instant at = table.updatedAt();
    begin(CONSUMER_REMOVE);
    instant(sink, at);
    sink.putString(consumerId);
    commit();
    table.removeConsumer(consumerId, at);
    changed();
  }

  private void changed() {
    maybeCompact();
  }

  private static boolean anyKeyed(List<PendingEntry> entries) {
    for (PendingEntry e : entries) {
      if (e.hasOrderKey()) {
        return true;
      }
    }
    return false;
  }

  /**
   * The lowest version, not below {@code at least}, that can hold {@code g}: {@link
   * #PAUSED_VERSION} for a paused group, {@link #KEYED_VERSION} for one with a keyed entry.
   */
  private static int versionFor(ConsumerGroupState g, int atLeast) {
    int needed = g.paused() ? PAUSED_VERSION : anyKeyed(g.pending()) ? KEYED_VERSION : VERSION;
    return Math.max(needed, atLeast);
  }

  /**
   * Rewrites the log as a snapshot in {@code newVersion} before the first change that needs it is
   * written (a keyed entry into a version-1 log, a pause); the group's state does not change.
   *
   * @throws QueueStoreException if the rewrite fails (the file stays as it was)
   */
  private void upgrade(int newVersion) {
    try {
      rewrite(newVersion);
    } catch (IOException e) {
      throw new QueueStoreException(
          queue,
          "rewriting consumer-group log "
              + file
              + " of group "
              + id
              + " in format version "
              + newVersion
              + (newVersion == PAUSED_VERSION
                  ? " (for its first pause)"
                  : " (for its first ordering key)")
              + " failed (the group is unchanged): "
              + StoreIo.reason(e),
          e);
    }
  }

  // ---------------------------------------------------------------- I/O

  private void begin(int type) {
    sink.reset();
    sink.skip(8);
    sink.putByte(type);
  }

  /** Frames the record in {@code sink} and writes it; the in-memory state changes after this. */
  private void commit() {
    int len = sink.position() - 8;
    CRC32C c = new CRC32C();
    c.update(sink.array(), 8, len);
    sink.putIntAt(0, len);
    sink.putIntAt(4, (int) c.getValue());
    try {
      out.write(sink.array(), 0, sink.position(), size);
    } catch (IOException e) {
      try {
        out.truncate(size);
      } catch (IOException e2) {
        e2.addSuppressed(e);
        broken =
            new QueueStoreException(
                queue,
                "consumer group "
                    + id
                    + " of queue "
                    + queue
                    + " refuses changes: a failed write to "
                    + file
                    + " could not be undone; reopen the store",
                e2);
      }
      throw new QueueStoreException(
          queue,
          "persisting a change of consumer group "
              + id
              + " of queue "
              + queue
              + " in "
              + file
              + " failed (the group is unchanged): "
              + StoreIo.reason(e),
          e);
    }
    size += sink.position();
    if (syncAlways) {
      try {
        out.force();
      } catch (IOException e) {
        // the record is written but not known durable: refuse the change, keep the file as is
        // (replay would apply it; that is a state the caller may see as not having happened,
        // which at worst redelivers)
        throw new QueueStoreException(
            queue,
            "fsync of consumer group "
                + id
                + " of queue "
                + queue
                + " in "
                + file
                + " failed: "
                + StoreIo.reason(e),
            e);
      }
    } else {
      dirty = true;
    }
  }

  private void maybeCompact() {
    if (size < COMPACT_MIN_BYTES || size < 4 * snapshotBytes) {
      return;
    }
    try {
      rewrite(version);
    } catch (IOException e) {
      LOG.warn(
          "queue {}: compacting consumer-group log {} failed (kept as is): {}",
          queue,
          file,
          e.toString());
    }
  }

  /**
   * Replaces the file by a header of {@code newVersion} and one snapshot (tmp, fsync, rename, fsync
   * directory).
   */
  private void rewrite(int newVersion) throws IOException {
    ByteSink s = new ByteSink(HEADER + 128 + table.pendingCount() * 64);
    s.putInt(MAGIC).putShort(newVersion).putShort(0).putLong(0);
    int recordAt = s.position();
    s.skip(8).putByte(SNAPSHOT);
    writeSnapshotBody(s, id, table.snapshot(), newVersion);
    int len = s.position() - recordAt - 8;
    CRC32C c = new CRC32C();
    c.update(s.array(), recordAt + 8, len);
    s.putIntAt(recordAt, len);
    s.putIntAt(recordAt + 4, (int) c.getValue());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    try {
      try (StoreIo.WritableFile w = io.openWritable(tmp, true)) {
        w.write(s.array(), 0, s.position(), 0);
        w.force();
      }
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      Blobs.deleteQuietly(tmp, e); // the file stays as it was
      throw e;
    }
    io.syncDirectory(file.getParent());
    StoreIo.WritableFile old = out;
    out = io.openWritable(file, false);
    size = s.position();
    snapshotBytes = size;
    version = newVersion;
    dirty = false;
    if (old != null) {
      old.close();
    }
  }

  /** Background fsync of a dirty log. */
  synchronized void syncIfDirty() {
    if (!dirty || closed) {
      return;
    }
    try {
      out.force();
      dirty = false;
    } catch (IOException e) {
      LOG.warn("queue {}: fsync of consumer-group log {} failed: {}", queue, file, e.toString());
    }
  }

  synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (dirty) {
        out.force();
      }
    } catch (IOException e) {
      LOG.warn(
          "queue {}: final fsync of consumer-group log {} failed: {}", queue, file, e.toString());
    }
    try {
      out.close();
    } catch (IOException e) {
      LOG.warn("queue {}: closing {} failed: {}", queue, file, e.toString());
    }
  }

  /** Closes and deletes the file. */
  synchronized void delete() throws IOException {
    if (!closed) {
      closed = true;
      out.close();
    }
    Files.deleteIfExists(file);
    io.syncDirectory(file.getParent());
  }

  synchronized boolean isClosed() {
    return closed;
  }

  private void checkOpen() {
    if (closed) {
      throw new io.queuebridge.core.errors.GroupNotFoundException(queue, id);
    }
  }

  private void checkWritable() {
    checkOpen();
    if (broken != null) {
      throw broken;
    }
  }

  // ---------------------------------------------------------------- codec

  private static void writeSnapshotBody(ByteSink s, String id, ConsumerGroupState g, int version) {
    s.putString(id).putString(g.pattern());
    s.putByte(g.mode() == GroupMode.QUEUE ? 0 : 1).putByte(g.autoCommit() ? 1 : 0);
    s.putLong(g.cursor()).putLong(g.committed());
    instant(s, g.createdAt());
    instant(s, g.updatedAt());
    s.putInt(g.pending().size());
    for (PendingEntry e : g.pending()) {
      entry(s, e, version);
    }
    s.putInt(g.consumers().size());
    for (Map.Entry<String, ConsumerInfo> e : g.consumers().entrySet()) {
      s.putString(e.getKey());
      consumer(s, e.getValue());
    }
    if (version >= PAUSED_VERSION) {
      s.putByte(g.paused() ? 1 : 0);
    }
  }

  private static ConsumerGroupState readSnapshotBody(
      ByteSource src, String queue, String id, int version) {
    String pattern = src.getString();
    int m = src.getByte();
    if (m != 0 && m != 1) {
      throw new FormatException("unknown group mode " + m, src.position() - 1);
    }
    boolean autoCommit = src.getByte() != 0;
    long cursor = src.getLong();
    long committed = src.getLong();
    Instant createdAt = instant(src);
    Instant updatedAt = instant(src);
    int n = count(src);
    List<PendingEntry> pending = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      pending.add(entry(src, version));
    }
    int k = count(src);
    Map<String, ConsumerInfo> consumers = new HashMap<>();
    for (int i = 0; i < k; i++) {
      String key = src.getString();
      consumers.put(key, consumer(src));
    }
    boolean paused = version >= PAUSED_VERSION && src.getByte() != 0;
    return new ConsumerGroupState(
        queue,
        id,
        pattern,
        m == 0 ? GroupMode.QUEUE : GroupMode.STREAM,
        autoCommit,
        cursor,
        committed,
        pending,
        consumers,
        createdAt,
        updatedAt,
        paused);
  }

  private static void instant(ByteSink s, Instant t) {
    s.putLong(t.getEpochSecond()).putInt(t.getNano());
  }

  private static Instant instant(ByteSource src) {
    long sec = src.getLong();
    int nano = src.getInt();
    if (nano < 0 || nano > 999_999_999) {
      throw new FormatException("bad nanos " + nano, src.position() - 4);
    }
    try {
      return Instant.ofEpochSecond(sec, nano);
    } catch (java.time.DateTimeException e) {
      throw new FormatException("bad instant", src.position() - 12);
    }
  }

  private static void entry(ByteSink s, PendingEntry e, int version) {
    s.putLong(e.offset()).putString(e.consumerId());
    instant(s, e.claimedAt());
    s.putInt(e.deliveryCount());
    instant(s, e.firstClaimedAt());
    instant(s, e.visibleAt());
    if (version >= KEYED_VERSION) {
      s.putString(e.orderKey());
    } else {
      assert !e.hasOrderKey() : "a keyed entry in a version-1 log";
    }
  }

  private static PendingEntry entry(ByteSource src, int version) {
    long offset = src.getLong();
    String consumer = src.getString();
    Instant claimed = instant(src);
    int count = src.getInt();
    Instant first = instant(src);
    Instant visible = instant(src);
    String key = version >= KEYED_VERSION ? src.getString() : "";
    return new PendingEntry(offset, consumer, claimed, count, first, visible, key);
  }

  private static void consumer(ByteSink s, ConsumerInfo c) {
    s.putString(c.id()).putString(c.clientId());
    instant(s, c.registeredAt());
    instant(s, c.lastHeartbeat());
  }

  private static ConsumerInfo consumer(ByteSource src) {
    String cid = src.getString();
    String client = src.getString();
    Instant reg = instant(src);
    Instant hb = instant(src);
    return new ConsumerInfo(cid, client, reg, hb);
  }

  private static int count(ByteSource src) {
    int n = src.getInt();
    if (n < 0 || n > src.remaining()) {
      throw new FormatException("bad count " + n, src.position() - 4);
    }
    return n;
  }
}
