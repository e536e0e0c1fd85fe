package io.queuebridge.core.store.file;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The real {@link StoreIo} wrapped for fault injection and observation: hooks run before every
 * write and sync and may throw or block; every write, sync and read-open is recorded with a global
 * sequence number. Thread-safe.
 */
final class FaultyIo implements StoreIo {
  /** Runs before an operation; throw to fail it. */
  interface Hook {
    void before(Path file, int n) throws IOException;
  }

  /**
   * A write or sync, with the global sequence numbers at its start and end; for a write of whole
   * frames to a segment, the offsets {@code [firstOffset, endOffset)} it carried (else -1).
   */
  record Event(
      String kind,
      Path file,
      long start,
      long end,
      long thread,
      long firstOffset,
      long endOffset) {}

  private final StoreIo delegate = StoreIo.DEFAULT;
  private final AtomicLong seq = new AtomicLong();
  final AtomicInteger writes = new AtomicInteger();
  final AtomicInteger segmentWrites = new AtomicInteger();
  final AtomicInteger forces = new AtomicInteger();
  final AtomicInteger segmentForces = new AtomicInteger();
  final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();
  final Map<Path, AtomicInteger> readOpens = new ConcurrentHashMap<>();

  /** Before every write: argument is the 1-based count of writes to segment (.log) files, or 0. */
  volatile Hook beforeWrite = (f, n) -> {};

  /** Before every fsync of a file: argument is the 1-based count of segment fsyncs, or 0. */
  volatile Hook beforeForce = (f, n) -> {};

  /** The 1-based segment write that writes only its first half and then fails (0 = none). */
  volatile int tornWriteAt;

  /** Before every directory sync. */
  volatile Hook beforeDirSync = (f, n) -> {};

  long now() {
    return seq.incrementAndGet();
  }

  /** The write to a segment file that carried {@code offset}. */
  Event writeOf(long offset) {
    return events.stream()
        .filter(
            e -> e.kind().equals("write") && e.firstOffset() <= offset && offset < e.endOffset())
        .findFirst()
        .orElseThrow(() -> new AssertionError("no write carried offset " + offset));
  }

  /** The offsets carried by whole frames in {@code b[off, off+len)}, or {-1, -1}. */
  private static long[] offsets(byte[] b, int off, int len) {
    long first = -1;
    long end = -1;
    int p = off;
    while (p + Frames.HEADER <= off + len && Frames.magic(b, p) == Frames.MAGIC) {
      Frames.FrameHeader h = Frames.header(b, p);
      if (first < 0) {
        first = h.baseOffset();
      }
      end = h.endOffset();
      p += h.length();
    }
    return new long[] {first, end};
  }

  List<Event> forcesOf(Path file) {
    return events.stream().filter(e -> e.kind().equals("force") && e.file().equals(file)).toList();
  }

  static boolean isSegment(Path p) {
    return p.getFileName().toString().endsWith(".log");
  }

  @Override
  public WritableFile openWritable(Path file, boolean createNew) throws IOException {
    WritableFile w = delegate.openWritable(file, createNew);
    return new WritableFile() {
      @Override
      public void write(byte[] src, int off, int len, long position) throws IOException {
        boolean seg = isSegment(file);
        int n = seg ? segmentWrites.incrementAndGet() : 0;
        writes.incrementAndGet();
        beforeWrite.before(file, n);
        if (seg && n == tornWriteAt) {
          w.write(src, off, len / 2, position);
          throw new IOException("injected torn write #" + n + " to " + file);
        }
        long start = now();
        w.write(src, off, len, position);
        long[] offsets = seg ? offsets(src, off, len) : new long[] {-1, -1};
        events.add(
            new Event(
                "write",
                file,
                start,
                now(),
                Thread.currentThread().getId(),
                offsets[0],
                offsets[1]));
      }

      @Override
      public void force() throws IOException {
        boolean seg = isSegment(file);
        int n = seg ? segmentForces.incrementAndGet() : 0;
        forces.incrementAndGet();
        long start = now();
        beforeForce.before(file, n);
        w.force();
        events.add(new Event("force", file, start, now(), Thread.currentThread().getId(), -1, -1));
      }

      @Override
      public void truncate(long size) throws IOException {
        w.truncate(size);
      }

      @Override
      public long size() throws IOException {
        return w.size();
      }

      @Override
      public void close() throws IOException {
        w.close();
      }
    };
  }

  @Override
  public FileChannel openReadable(Path file) throws IOException {
    readOpens.computeIfAbsent(file, f -> new AtomicInteger()).incrementAndGet();
    return delegate.openReadable(file);
  }

  @Override
  public void syncDirectory(Path dir) throws IOException {
    beforeDirSync.before(dir, 0);
    delegate.syncDirectory(dir);
  }
}
