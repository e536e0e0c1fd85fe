package io.queuebridge.core.store.file;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Message;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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

/**
 * Reopening after an unclean stop: a store of ~1 GB against one of ~100 MB measured in the same run
 * (the reference). Both have 64 MiB segments and a 32 MiB newest segment that ends in a torn frame
 * (re-torn before every open), so recovery has the same work in both if, and only if, opening costs
 * O(newest segment) rather than O(store size).
 *
 * <p>{@code verify} is {@code verify.on.open}: {@code newest} reads the newest segment only; {@code
 * sealed-once} also the sealed segments not verified before — the trial's setup opens the store
 * once, so every measured open finds them stamped in {@code queue.verified} (the cost of the stamp
 * check); {@code all} reads every sealed segment at every open (the cost without the stamp, and of
 * the first open of an unstamped store).
 *
 * <p>Run: {@code mvn -B -ntp -Pbench -pl queue-core test-compile exec:exec
 * -Djmh.args="FileReopenBenchmark -f 1 -wi 3 -i 10"}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class FileReopenBenchmark {
  static final String Q = "bench";
  static final int MIB = 1 << 20;

  /** Full 64 MiB segments before the newest: 1 (~96 MiB store) or 15 (~992 MiB store). */
  @Param({"1", "15"})
  public int fullSegments;

  /** {@code verify.on.open}. */
  @Param({"newest", "sealed-once", "all"})
  public String verify;

  private Path dir;
  private FileStoreConfig config;
  private Path newest;
  private long newestSize;
  private FileStorage open;

  @Setup(Level.Trial)
  public void build() throws IOException {
    dir = BenchDirs.fresh("reopen-" + fullSegments);
    config =
        FileStoreConfig.defaults(dir).withVerifyOnOpen(FileStoreConfig.VerifyOnOpen.of(verify));
    byte[] value = new byte[64 * 1024];
    new Random(3).nextBytes(value);
    Message m = Message.builder().id("x").topic("t").value(value).build();
    try (FileStorage s = FileStorage.open(config, Clock.systemUTC(), StoreIo.DEFAULT)) {
      s.queues().createQueue(QueueConfig.durable(Q).build());
      long target = (long) fullSegments * 64 * MIB + 32L * MIB;
      long written = 0;
      List<Message> batch = List.of(m, m, m, m, m, m, m, m);
      while (written < target) {
        s.queues().appendBatch(Q, batch);
        written += 8L * (value.length + 60);
      }
    }
    try (Stream<Path> files = Files.list(dir.resolve("queues").resolve(Q))) {
      List<Path> logs = files.filter(p -> p.toString().endsWith(".log")).sorted().toList();
      if (logs.size() != fullSegments + 1) {
        throw new IllegalStateException("expected " + (fullSegments + 1) + " segments: " + logs);
      }
      newest = logs.get(logs.size() - 1);
    }
    newestSize = Files.size(newest);
    FileStorage.open(config, Clock.systemUTC(), StoreIo.DEFAULT).close(); // stamps (sealed-once)
  }

  @Setup(Level.Invocation)
  public void tear() throws IOException {
    // an unclean stop: the newest segment ends in half a frame
    Files.write(
        newest,
        new byte[] {0x51, 0x42, 0x4C, 0x47, 0, 0, 0, 0, 0, 0, 0x40, 0},
        StandardOpenOption.APPEND);
  }

  @Benchmark
  public long reopen() {
    open = FileStorage.open(config, Clock.systemUTC(), StoreIo.DEFAULT);
    if (open.recovery().logBytesCut() != 12) {
      throw new IllegalStateException("expected a 12-byte cut: " + open.recovery());
    }
    return open.queues().tail(Q);
  }

  @TearDown(Level.Invocation)
  public void close() throws IOException {
    open.close();
    if (Files.size(newest) != newestSize) {
      throw new IllegalStateException("newest segment changed size");
    }
  }

  @TearDown(Level.Trial)
  public void delete() throws IOException {
    BenchDirs.delete(dir);
  }
}
