package io.queuebridge.core.store.file;

import io.queuebridge.core.GroupMode;
import io.queuebridge.core.PendingEntryNotFoundException;
import io.queuebridge.core.QueueStoreException;
import io.queuebridge.core.StoreCorruptedException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.PendingEntry;
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
import java.util.TreeMap;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One consumer group's state, persisted as an operation log with snapshots (SEMANTICS §2.3,
 * §2.4.9).
 *
 * <p><b>File</b> {@code groups/<encoded group id>.grp} (big-endian):
 *
 * <pre>
 *   header  int magic 0x5142474C ("QBGL"), short version 1, short 0, long 0   (16 bytes)
 *   record* int length (of type + payload), int CRC-32C (of type + payload), byte type, payload
 * </pre>
 *
 * The first record is always a SNAPSHOT (the full state); later records are single changes:
 *
 * <pre>
 *   1 SNAPSHOT        string id, string pattern, byte mode (0 queue, 1 stream), byte autoCommit,
 *                     long cursor, long committed, instant createdAt, instant updatedAt,
 *                     int n, n x entry, int m, m x (string key, consumer)
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
 *   consumer = string id, string clientId, instant registeredAt, instant lastHeartbeat
 *   instant  = long epochSecond, int nano
 * </pre>
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
  static final int VERSION = 1;
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
  private long size;
  private long snapshotBytes;
  private boolean dirty;
  private boolean closed;
  private QueueStoreException broken;
  private final ByteSink sink = new ByteSink(256);

  // state
  private String pattern;
  private GroupMode mode;
  private boolean autoCommit;
  private long cursor;
  private long committed;
  private final TreeMap<Long, PendingEntry> pending = new TreeMap<>();
  private final Map<String, ConsumerInfo> consumers = new HashMap<>();
  private Instant createdAt;
  private Instant updatedAt;
  private ConsumerGroupState snapshot;

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
    log.rewrite();
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
    if (content.length < HEADER || ByteSource.getIntAt(content, 0) != MAGIC) {
      throw new StoreCorruptedException(
          queue, file.toString(), 0, "not a consumer-group log (bad header)");
    }
    int version = (content[4] & 0xFF) << 8 | (content[5] & 0xFF);
    if (version != VERSION) {
      throw new StoreCorruptedException(
          queue,
          file.toString(),
          4,
          "consumer-group log format version "
              + version
              + " (this build reads version "
              + VERSION
              + (version > VERSION ? "; written by a newer version, upgrade to open it)" : ")"));
    }
    GroupLog log = null;
    int pos = HEADER;
    String problem = null;
    while (pos < content.length) {
      if (content.length - pos < 9) {
        problem = "torn record header";
        break;
      }
      int len = ByteSource.getIntAt(content, pos);
      int crc = ByteSource.getIntAt(content, pos + 4);
      if (len < 1 || len > content.length - pos - 8) {
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
        if (log == null) {
          if (type != SNAPSHOT) {
            throw new FormatException("first record is not a snapshot", pos);
          }
          log = new GroupLog(queue, null, file, io, syncAlways);
        }
        log = log.apply(type, src);
        if (src.remaining() != 0) {
          throw new FormatException("record has " + src.remaining() + " trailing bytes", pos);
        }
      } catch (FormatException e) {
        problem = "undecodable record: " + e.getMessage();
        break;
      }
      pos += 8 + len;
    }
    if (log == null) {
      throw new StoreCorruptedException(
          queue,
          file.toString(),
          HEADER,
          "consumer-group log has no readable snapshot" + (problem == null ? "" : ": " + problem));
    }
    log.snapshotBytes = Math.min(pos, content.length);
    if (problem != null) {
      long cut = content.length - pos;
      LOG.warn(
          "queue {}: cut {} bytes from consumer-group log {} at byte {}: {}",
          queue,
          cut,
          file,
          pos,
          problem);
      try (StoreIo.WritableFile w = io.openWritable(file, false)) {
        w.truncate(pos);
        w.force();
      }
      report.groupLogCut(new RecoveryReport.Cut(queue, file, pos, cut, problem));
    }
    log.out = io.openWritable(file, false);
    log.size = pos;
    return log;
  }

  /** Applies one decoded record; returns the log (with the id set by the first snapshot). */
  private GroupLog apply(int type, ByteSource src) {
    switch (type) {
      case SNAPSHOT -> {
        String gid = src.getString();
        GroupLog target = this.id == null ? new GroupLog(queue, gid, file, io, syncAlways) : this;
        if (!gid.equals(target.id)) {
          throw new FormatException(
              "snapshot of group " + gid + " in the log of " + target.id, src.position());
        }
        target.pattern = src.getString();
        int m = src.getByte();
        if (m != 0 && m != 1) {
          throw new FormatException("unknown group mode " + m, src.position() - 1);
        }
        target.mode = m == 0 ? GroupMode.QUEUE : GroupMode.STREAM;
        target.autoCommit = src.getByte() != 0;
        target.cursor = src.getLong();
        target.committed = src.getLong();
        target.createdAt = instant(src);
        target.updatedAt = instant(src);
        target.pending.clear();
        int n = count(src);
        for (int i = 0; i < n; i++) {
          PendingEntry e = entry(src);
          target.pending.put(e.offset(), e);
        }
        target.consumers.clear();
        int k = count(src);
        for (int i = 0; i < k; i++) {
          String key = src.getString();
          target.consumers.put(key, consumer(src));
        }
        target.snapshot = null;
        return target;
      }
      case PENDING_PUT -> {
        updatedAt = instant(src);
        PendingEntry e = entry(src);
        pending.put(e.offset(), e);
      }
      case PENDING_REMOVE -> {
        updatedAt = instant(src);
        pending.remove(src.getLong());
      }
      case CURSOR -> {
        updatedAt = instant(src);
        cursor = src.getLong();
      }
      case COMMITTED -> {
        updatedAt = instant(src);
        committed = src.getLong();
        cursor = src.getLong();
      }
      case CONSUMER_PUT -> {
        updatedAt = instant(src);
        String key = src.getString();
        consumers.put(key, consumer(src));
      }
      case CONSUMER_REMOVE -> {
        updatedAt = instant(src);
        consumers.remove(src.getString());
      }
      case CLAIM -> {
        updatedAt = instant(src);
        cursor = src.getLong();
        int n = count(src);
        for (int i = 0; i < n; i++) {
          PendingEntry e = entry(src);
          pending.put(e.offset(), e);
        }
      }
      case ACK -> {
        updatedAt = instant(src);
        pending.remove(src.getLong());
        committed = src.getLong();
        cursor = src.getLong();
      }
      default -> throw new FormatException("unknown record type " + type, src.position() - 1);
    }
    snapshot = null;
    return this;
  }

  private void load(ConsumerGroupState g) {
    pattern = g.pattern();
    mode = g.mode();
    autoCommit = g.autoCommit();
    cursor = g.cursor();
    committed = g.committed();
    createdAt = g.createdAt();
    updatedAt = g.updatedAt();
    pending.clear();
    for (PendingEntry e : g.pending()) {
      pending.put(e.offset(), e);
    }
    consumers.clear();
    consumers.putAll(g.consumers());
    snapshot = g;
  }

  // ---------------------------------------------------------------- reads

  synchronized ConsumerGroupState state() {
    checkOpen();
    if (snapshot == null) {
      snapshot =
          new ConsumerGroupState(
              queue,
              id,
              pattern,
              mode,
              autoCommit,
              cursor,
              committed,
              new ArrayList<>(pending.values()),
              consumers,
              createdAt,
              updatedAt);
    }
    return snapshot;
  }

  synchronized List<PendingEntry> pendingOf(String consumerId) {
    checkOpen();
    List<PendingEntry> out = new ArrayList<>();
    for (PendingEntry e : pending.values()) {
      if (e.consumerId().equals(consumerId)) {
        out.add(e);
      }
    }
    return out;
  }

  synchronized List<PendingEntry> allPending() {
    checkOpen();
    return List.copyOf(pending.values());
  }

  synchronized java.util.Optional<PendingEntry> pendingAt(long offset) {
    checkOpen();
    return java.util.Optional.ofNullable(pending.get(offset));
  }

  synchronized List<ConsumerInfo> consumerList() {
    checkOpen();
    return List.copyOf(consumers.values());
  }

  // ---------------------------------------------------------------- changes

  synchronized void replace(ConsumerGroupState g) {
    checkWritable();
    begin(SNAPSHOT);
    writeSnapshotBody(sink, g.id(), g);
    commit();
    load(g);
    maybeCompact();
  }

  synchronized void addPending(PendingEntry e) {
    checkWritable();
    begin(PENDING_PUT);
    instant(sink, e.claimedAt());
    entry(sink, e);
    commit();
    pending.put(e.offset(), e);
    updatedAt = e.claimedAt();
    changed();
  }

  synchronized void removePending(String consumerId, long offset) {
    checkWritable();
    PendingEntry e = pending.get(offset);
    if (e == null || !e.consumerId().equals(consumerId)) {
      throw new PendingEntryNotFoundException(queue, id, consumerId, offset);
    }
    begin(PENDING_REMOVE);
    instant(sink, updatedAt);
    sink.putLong(offset);
    commit();
    pending.remove(offset);
    changed();
  }

  synchronized void updatePending(PendingEntry e) {
    checkWritable();
    if (!pending.containsKey(e.offset())) {
      throw new PendingEntryNotFoundException(queue, id, e.consumerId(), e.offset());
    }
    begin(PENDING_PUT);
    instant(sink, e.claimedAt());
    entry(sink, e);
    commit();
    pending.put(e.offset(), e);
    updatedAt = e.claimedAt();
    changed();
  }

  synchronized PendingEntry transferPending(
      long offset, String from, String to, Instant now, Duration visibility) {
    checkWritable();
    PendingEntry e = pending.get(offset);
    if (e == null || !e.consumerId().equals(from)) {
      throw new PendingEntryNotFoundException(queue, id, from, offset);
    }
    PendingEntry moved =
        new PendingEntry(
            offset, to, now, e.deliveryCount() + 1, e.firstClaimedAt(), now.plus(visibility));
    begin(PENDING_PUT);
    instant(sink, now);
    entry(sink, moved);
    commit();
    pending.put(offset, moved);
    updatedAt = now;
    changed();
    return moved;
  }

  /** {@code addPending} of each entry, then {@code updateCursor}, as one record. */
  synchronized void claim(List<PendingEntry> entries, long newCursor, Instant now) {
    checkWritable();
    begin(CLAIM);
    instant(sink, now);
    sink.putLong(newCursor).putInt(entries.size());
    for (PendingEntry e : entries) {
      entry(sink, e);
    }
    commit();
    for (PendingEntry e : entries) {
      pending.put(e.offset(), e);
    }
    cursor = newCursor;
    updatedAt = now;
    changed();
  }

  /**
   * Removes the entry {@code consumerId} holds at {@code offset} with {@code deliveryCount}, and
   * raises the committed offset to the lowest offset still pending (or the cursor), as one record.
   *
   * @return the committed offset afterwards
   */
  synchronized long acknowledge(String consumerId, long offset, int deliveryCount, Instant now) {
    checkWritable();
    PendingEntry e = pending.get(offset);
    if (e == null || !e.consumerId().equals(consumerId) || e.deliveryCount() != deliveryCount) {
      throw new PendingEntryNotFoundException(queue, id, consumerId, offset);
    }
    long target = cursor;
    for (Long o : pending.keySet()) {
      if (o != offset) {
        target = o; // the lowest other pending offset
        break;
      }
    }
    target = Math.max(target, committed);
    boolean moves = target > committed;
    Instant newUpdatedAt = moves ? now : updatedAt;
    long newCursor = moves ? Math.max(cursor, target) : cursor;
    begin(ACK);
    instant(sink, newUpdatedAt);
    sink.putLong(offset).putLong(target).putLong(newCursor);
    commit();
    pending.remove(offset);
    committed = target;
    cursor = newCursor;
    updatedAt = newUpdatedAt;
    changed();
    return target;
  }

  synchronized void updateCursor(long newCursor, Instant now) {
    checkWritable();
    begin(CURSOR);
    instant(sink, now);
    sink.putLong(newCursor);
    commit();
    cursor = newCursor;
    updatedAt = now;
    changed();
  }

  synchronized void updateCommitted(long newCommitted, Instant now) {
    checkWritable();
    long newCursor = Math.max(cursor, newCommitted);
    begin(COMMITTED);
    instant(sink, now);
    sink.putLong(newCommitted).putLong(newCursor);
    commit();
    committed = newCommitted;
    cursor = newCursor;
    updatedAt = now;
    changed();
  }

  synchronized void registerConsumer(ConsumerInfo c) {
    checkWritable();
    begin(CONSUMER_PUT);
    instant(sink, c.lastHeartbeat());
    sink.putString(c.id());
    consumer(sink, c);
    commit();
    consumers.put(c.id(), c);
    updatedAt = c.lastHeartbeat();
    changed();
  }

  synchronized void unregisterConsumer(String consumerId) {
    checkWritable();
    if (!consumers.containsKey(consumerId)) {
      return;
    }
    begin(CONSUMER_REMOVE);
    instant(sink, updatedAt);
    sink.putString(consumerId);
    commit();
    consumers.remove(consumerId);
    changed();
  }

  private void changed() {
    snapshot = null;
    maybeCompact();
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
          "persisting a change of consumer group " + id + " of queue " + queue + " failed: " + e,
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
            queue, "fsync of consumer group " + id + " of queue " + queue + " failed: " + e, e);
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
      rewrite();
    } catch (IOException e) {
      LOG.warn(
          "queue {}: compacting consumer-group log {} failed (kept as is): {}",
          queue,
          file,
          e.toString());
    }
  }

  /** Replaces the file by a header and one snapshot (tmp, fsync, rename, fsync directory). */
  private void rewrite() throws IOException {
    ByteSink s = new ByteSink(HEADER + 128 + pending.size() * 64);
    s.putInt(MAGIC).putShort(VERSION).putShort(0).putLong(0);
    int recordAt = s.position();
    s.skip(8).putByte(SNAPSHOT);
    writeSnapshotBody(s, id, state0());
    int len = s.position() - recordAt - 8;
    CRC32C c = new CRC32C();
    c.update(s.array(), recordAt + 8, len);
    s.putIntAt(recordAt, len);
    s.putIntAt(recordAt + 4, (int) c.getValue());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    try (StoreIo.WritableFile w = io.openWritable(tmp, true)) {
      w.write(s.array(), 0, s.position(), 0);
      w.force();
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    io.syncDirectory(file.getParent());
    StoreIo.WritableFile old = out;
    out = io.openWritable(file, false);
    size = s.position();
    snapshotBytes = size;
    dirty = false;
    if (old != null) {
      old.close();
    }
  }

  private ConsumerGroupState state0() {
    return new ConsumerGroupState(
        queue,
        id,
        pattern,
        mode,
        autoCommit,
        cursor,
        committed,
        new ArrayList<>(pending.values()),
        consumers,
        createdAt,
        updatedAt);
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
      throw new io.queuebridge.core.GroupNotFoundException(queue, id);
    }
  }

  private void checkWritable() {
    checkOpen();
    if (broken != null) {
      throw broken;
    }
  }

  // ---------------------------------------------------------------- codec

  private static void writeSnapshotBody(ByteSink s, String id, ConsumerGroupState g) {
    s.putString(id).putString(g.pattern());
    s.putByte(g.mode() == GroupMode.QUEUE ? 0 : 1).putByte(g.autoCommit() ? 1 : 0);
    s.putLong(g.cursor()).putLong(g.committed());
    instant(s, g.createdAt());
    instant(s, g.updatedAt());
    s.putInt(g.pending().size());
    for (PendingEntry e : g.pending()) {
      entry(s, e);
    }
    s.putInt(g.consumers().size());
    for (Map.Entry<String, ConsumerInfo> e : g.consumers().entrySet()) {
      s.putString(e.getKey());
      consumer(s, e.getValue());
    }
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

  private static void entry(ByteSink s, PendingEntry e) {
    s.putLong(e.offset()).putString(e.consumerId());
    instant(s, e.claimedAt());
    s.putInt(e.deliveryCount());
    instant(s, e.firstClaimedAt());
    instant(s, e.visibleAt());
  }

  private static PendingEntry entry(ByteSource src) {
    long offset = src.getLong();
    String consumer = src.getString();
    Instant claimed = instant(src);
    int count = src.getInt();
    Instant first = instant(src);
    Instant visible = instant(src);
    return new PendingEntry(offset, consumer, claimed, count, first, visible);
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
