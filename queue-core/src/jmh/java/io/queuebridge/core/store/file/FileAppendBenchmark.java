package io.queuebridge.core.store.file;

import io.queuebridge.core.Message;
import io.queuebridge.core.QueueConfig;
import io.queuebridge.core.store.DurableQueueStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
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
 * with 1 KiB messages. The raw references write the same number of bytes per operation as the store
 * writes (one encoded frame: {@value #VALUE} bytes of value plus framing).
 *
 * <ul>
 *   <li>{@code buffered} vs {@code rawWrite}: {@code append} (default settings: the background
 *       thread fsyncs every second) against a sequential {@code FileChannel.write}.
 *   <li>{@code durable1} vs {@code rawWriteFsync}: {@code appendAndSync} from one thread against
 *       {@code write} + {@code force(false)} (fdatasync) in a loop.
 *   <li>{@code durable1}, {@code durable8}, {@code durable64}: {@code appendAndSync} from 1, 8 and
 *       64 threads on one queue (group commit); JMH reports the total rate.
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
  static final int VALUE = 1024;
  static final String Q = "bench";

  static Message message() {
    byte[] value = new byte[VALUE];
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
    final Message message = message();

    @Setup(Level.Iteration)
    public void open() throws IOException {
      dir = BenchDirs.fresh("append");
      StoreIo io =
          fsyncExtraMicros == 0 ? StoreIo.DEFAULT : new SlowSyncIo(fsyncExtraMicros * 1000L);
      storage = FileStorage.open(FileStoreConfig.defaults(dir), Clock.systemUTC(), io);
      queues = storage.queues();
      queues.createQueue(QueueConfig.durable(Q).build());
    }

    @TearDown(Level.Iteration)
    public void close() throws IOException {
      storage.close();
      BenchDirs.delete(dir);
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
            java.util.concurrent.locks.LockSupport.parkNanos(left);
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
    public void open() throws IOException {
      Frames.Encoded e = Frames.encode(List.of(message()), Map.of());
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
  public long durable1(Store s) throws InterruptedException {
    return s.queues.appendAndSync(Q, s.message);
  }

  @Benchmark
  @Threads(8)
  public long durable8(Store s) throws InterruptedException {
    return s.queues.appendAndSync(Q, s.message);
  }

  @Benchmark
  @Threads(64)
  public long durable64(Store s) throws InterruptedException {
    return s.queues.appendAndSync(Q, s.message);
  }
}
