package io.queuebridge.core.store.file;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * Appends to the file store against raw {@link FileChannel} references measured in the same run,
 * with messages of 1 KiB and of 200 bytes ({@link Size}). The raw references write the same number
 * of bytes per operation as the store writes (one encoded frame: the value plus framing).
 *
 * <ul>
 *   <li>{@code buffered} vs {@code rawWrite}: {@code append} (default settings: the background
 *       thread fsyncs every second) against a sequential {@code FileChannel.write}.
 *   <li>{@code durable1} vs {@code rawWriteFsync}: {@code appendAndSync} from one thread against
 *       {@code write} + {@code force(false)} (fdatasync) in a loop.
 *   <li>{@code durable1}, {@code durable8}, {@code durable64}: {@code appendAndSync} from 1, 8 and
 *       64 threads on one queue (group commit); JMH reports the total rate, and the auxiliary
 *       counters {@code appends} and {@code fsyncs} ({@link Fsyncs}) give the appends per fsync.
 *   <li>{@code rawGroupCommit1}, {@code rawGroupCommit64}: the machine's ceiling for group commit
 *       ({@link RawGroupCommit}): callers hand the same frame to one raw writer thread that writes
 *       and fdatasyncs each batch, with no store logic; {@code rawGroupCommit64 / rawWriteFsync} is
 *       the best 64-thread ratio a store could reach on the machine.
 * </ul>
 *
 * Files live in {@link BenchDirs} (a real disk), are recreated every iteration and deleted after.
 * {@code -p fsyncExtraMicros=2000} runs the durable ones against a modelled slower device.
 *
 * <p>Run: {@code mvn -B -ntp -Pbench -pl queue-core test-compile exec:exec
 * -Djmh.args="FileAppendBenchmark -f 1 -wi 3 -i 5 -w 2s -r 2s"}
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class FileAppendBenchmark {
  static final String Q = "bench";

  /** The value size of every message (and so of every raw frame) of a run. */
  @State(Scope.Benchmark)
  public static class Size {
    @Param({"1024", "200"})
    public int valueBytes;
  }

  static Message message(Size size) {
    byte[] value = new byte[size.valueBytes];
    new Random(1).nextBytes(value);
    return Message.builder().id("id").topic("bench/t").value(value).build();
  }

  /** One store shared by every thread of a benchmark. */
  @State(Scope.Benchmark)
  public static class Store {
    /**
     * Extra latency added to every fsync of the store, in microseconds: 0 measures this machine's
     * device as it is; 2000 models a device whose fsync takes ~2 ms more (a consumer SSD or disk
     * without a volatile write cache), to show how group commit scales when fsync dominates.
     */
    @Param({"0"})
    public int fsyncExtraMicros;

    Path dir;
    FileStorage storage;
    DurableQueueStore queues;
    Message message;
    long syncsAtStart;
    final AtomicBoolean syncsClaimed = new AtomicBoolean();

    @Setup(Level.Iteration)
    public void open(Size size) throws IOException {
      message = message(size);
      dir = BenchDirs.fresh("append");
      StoreIo io =
          fsyncExtraMicros == 0 ? StoreIo.DEFAULT : new SlowSyncIo(fsyncExtraMicros * 1000L);
      storage = FileStorage.open(FileStoreConfig.defaults(dir), Clock.systemUTC(), io);
      queues = storage.queues();
      queues.createQueue(QueueConfig.durable(Q).build());
      syncsAtStart = storage.syncCount();
      syncsClaimed.set(false);
    }

    @TearDown(Level.Iteration)
    public void close() throws IOException {
      storage.close();
      BenchDirs.delete(dir);
    }
  }

  /**
   * Auxiliary counters: {@code fsyncs}, the store's fsyncs (group-commit barriers), and {@code
   * appends}, the appends made, both over the whole iteration (JMH's warm-up and warm-down phases
   * of an iteration included, so the two cover the same window) and reported as rates: {@code
   * appends ÷ fsyncs} is the average number of appends one fsync covered. One thread per iteration
   * reports the store's fsync count; the others report zero (JMH sums them).
   */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.EVENTS)
  public static class Fsyncs {
    public long fsyncs;
    public long appends;

    @Setup(Level.Iteration)
    public void reset() {
      fsyncs = 0;
      appends = 0;
    }

    @TearDown(Level.Iteration)
    public void count(Store s) {
      if (s.syncsClaimed.compareAndSet(false, true)) {
        fsyncs = s.storage.syncCount() - s.syncsAtStart;
      }
    }
  }

  /** The real I/O with a fixed delay before every file fsync. */
  static final class SlowSyncIo implements StoreIo {
    private final long delayNanos;

    SlowSyncIo(long delayNanos) {
      this.delayNanos = delayNanos;
    }

    @Override
    public WritableFile openWritable(Path file, boolean createNew) throws IOException {
      WritableFile w = StoreIo.DEFAULT.openWritable(file, createNew);
      return new WritableFile() {
        @Override
        public void write(byte[] src, int off, int len, long position) throws IOException {
          w.write(src, off, len, position);
        }

        @Override
        public void force() throws IOException {
          // parkNanos may return early (a leftover unpark permit): wait out the full delay
          long end = System.nanoTime() + delayNanos;
          for (long left = delayNanos; left > 0; left = end - System.nanoTime()) {
            LockSupport.parkNanos(left);
          }
          w.force();
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
      return StoreIo.DEFAULT.openReadable(file);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
      StoreIo.DEFAULT.syncDirectory(dir);
    }
  }

  /** A raw file per thread, written with the bytes of one encoded frame per operation. */
  @State(Scope.Thread)
  public static class Raw {
    Path dir;
    FileChannel channel;
    ByteBuffer frame;

    @Setup(Level.Iteration)
    public void open(Size size) throws IOException {
      Frames.Encoded e = Frames.encode(List.of(message(size)), Map.of());
      Frames.seal(e, 0, 0);
      frame = ByteBuffer.wrap(e.sink.toByteArray());
      dir = BenchDirs.fresh("raw");
      java.nio.file.Files.createDirectories(dir);
      channel =
          FileChannel.open(
              dir.resolve("raw.log"), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    }

    @TearDown(Level.Iteration)
    public void close() throws IOException {
      channel.close();
      BenchDirs.delete(dir);
    }
  }

  /**
   * A minimal raw group commit, the machine's ceiling for {@code durable64}: callers queue a frame
   * and park; one writer thread writes every queued frame with one {@code write}, runs one {@code
   * force(false)} (fdatasync) and unparks each caller. No store logic at all (no encoding, offsets,
   * indexes, CRC, checkpoints or failure handling): per append only the queueing, one park and one
   * unpark, and a share of the write and the fsync.
   */
  @State(Scope.Benchmark)
  public static class RawGroupCommit {
    private static final class Waiter {
      final Thread thread = Thread.currentThread();
      volatile boolean done;
    }

    Path dir;
    FileChannel channel;
    byte[] frame;
    final ConcurrentLinkedQueue<Waiter> queue = new ConcurrentLinkedQueue<>();
    volatile boolean idle;
    volatile boolean stop;
    Thread writer;

    @Setup(Level.Iteration)
    public void open(Size size) throws IOException {
      Frames.Encoded e = Frames.encode(List.of(message(size)), Map.of());
      Frames.seal(e, 0, 0);
      frame = e.sink.toByteArray();
      dir = BenchDirs.fresh("rawgroup");
      java.nio.file.Files.createDirectories(dir);
      channel =
          FileChannel.open(
              dir.resolve("raw.log"), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      stop = false;
      writer = new Thread(this::run, "raw-group-commit");
      writer.start();
    }

    void append() {
      Waiter w = new Waiter();
      queue.add(w);
      if (idle) {
        LockSupport.unpark(writer);
      }
      while (!w.done) {
        LockSupport.park(this);
      }
    }

    private void run() {
      ByteBuffer buf = ByteBuffer.allocateDirect(4 << 20);
      List<Waiter> batch = new ArrayList<>();
      try {
        while (!stop) {
          buf.clear();
          batch.clear();
          Waiter w;
          while (buf.remaining() >= frame.length && (w = queue.poll()) != null) {
            buf.put(frame);
            batch.add(w);
          }
          if (batch.isEmpty()) {
            idle = true;
            if (queue.isEmpty() && !stop) {
              LockSupport.parkNanos(this, 1_000_000);
            }
            idle = false;
            continue;
          }
          buf.flip();
          while (buf.hasRemaining()) {
            channel.write(buf);
          }
          channel.force(false);
          for (Waiter b : batch) {
            b.done = true;
            LockSupport.unpark(b.thread);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @TearDown(Level.Iteration)
    public void close() throws IOException, InterruptedException {
      stop = true;
      LockSupport.unpark(writer);
      writer.join();
      for (Waiter w; (w = queue.poll()) != null; ) { // JMH stopped the callers already
        w.done = true;
        LockSupport.unpark(w.thread);
      }
      channel.close();
      BenchDirs.delete(dir);
    }
  }

  @Benchmark
  @Threads(1)
  public void rawGroupCommit1(RawGroupCommit g) {
    g.append();
  }

  @Benchmark
  @Threads(64)
  public void rawGroupCommit64(RawGroupCommit g) {
    g.append();
  }

  @Benchmark
  public long buffered(Store s) {
    return s.queues.append(Q, s.message);
  }

  @Benchmark
  public int rawWrite(Raw r) throws IOException {
    r.frame.clear();
    return r.channel.write(r.frame);
  }

  @Benchmark
  public int rawWriteFsync(Raw r) throws IOException {
    r.frame.clear();
    int n = r.channel.write(r.frame);
    r.channel.force(false);
    return n;
  }

  @Benchmark
  @Threads(1)
  public long durable1(Store s, Fsyncs f) throws InterruptedException {
    f.appends++;
    return s.queues.appendAndSync(Q, s.message);
  }

  @Benchmark
  @Threads(8)
  public long durable8(Store s, Fsyncs f) throws InterruptedException {
    f.appends++;
    return s.queues.appendAndSync(Q, s.message);
  }

  @Benchmark
  @Threads(64)
  public long durable64(Store s, Fsyncs f) throws InterruptedException {
    f.appends++;
    return s.queues.appendAndSync(Q, s.message);
  }
}
