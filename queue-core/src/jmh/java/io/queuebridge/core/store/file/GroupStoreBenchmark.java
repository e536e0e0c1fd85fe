package io.queuebridge.core.store.file;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.contract.PrimitivesOnlyGroupStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
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

/**
 * The cost of one claim + ack ({@code claimPending} of one entry + {@code acknowledgePending}, the
 * calls the consumer engine makes) on the file store's consumer-group log, with a group already
 * holding {@code pel} pending entries, against references measured in the same run:
 *
 * <ul>
 *   <li>{@code logInterval}: the store's op log, {@code group.sync=interval} (the default; written
 *       per change, fsynced by the background thread);
 *   <li>{@code logAlways}: the op log with {@code group.sync=always} (fsync per change);
 *   <li>{@code readModifyWrite}: what the SPI's default methods would cost on the same store, each
 *       change reading the whole group and writing it back ({@code getGroup} + {@code updateGroup},
 *       the store's full-snapshot record);
 *   <li>{@code rawWrite2} / {@code rawWriteFsync2}: two raw 64-byte {@code FileChannel} writes
 *       (without / with an fsync after each), the floor for two changes.
 * </ul>
 *
 * <p>Run: {@code mvn -B -ntp -Pbench -pl queue-core test-compile exec:exec
 * -Djmh.args="GroupStoreBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s"}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class GroupStoreBenchmark {
  static final String Q = "bench";
  static final String G = "g";
  static final Instant T0 = Instant.parse("2024-05-01T12:00:00Z");

  @Param({"1000"})
  public int pel;

  private Path dir;
  private FileStorage interval;
  private FileStorage always;
  private ConsumerGroupStore defaults;
  private FileChannel raw;
  private final ByteBuffer record = ByteBuffer.allocate(64);
  private long offset;

  @Setup(Level.Iteration)
  public void open() throws IOException {
    dir = BenchDirs.fresh("groups");
    interval = store(dir.resolve("interval"), FileStoreConfig.GroupSync.INTERVAL);
    always = store(dir.resolve("always"), FileStoreConfig.GroupSync.ALWAYS);
    ConsumerGroupStore real = interval.groups();
    defaults = new PrimitivesOnlyGroupStore(real);
    Files.createDirectories(dir.resolve("raw"));
    raw =
        FileChannel.open(
            dir.resolve("raw").resolve("raw.log"),
            StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE);
  }

  private FileStorage store(Path path, FileStoreConfig.GroupSync sync) {
    FileStorage s =
        FileStorage.open(
            FileStoreConfig.defaults(path).withGroupSync(sync), Clock.systemUTC(), StoreIo.DEFAULT);
    s.queues().createQueue(QueueConfig.durable(Q).build());
    s.groups().createGroup(ConsumerGroupState.create(Q, G, "", GroupMode.QUEUE, true, T0));
    for (int i = 0; i < pel; i++) {
      s.groups().addPending(Q, G, entry(i)); // older entries, still pending, hold back commits
    }
    offset = pel;
    return s;
  }

  private static PendingEntry entry(long offset) {
    return new PendingEntry(offset, "consumer-1", T0, 1, T0, T0.plusSeconds(30));
  }

  @TearDown(Level.Iteration)
  public void close() throws IOException {
    interval.close();
    always.close();
    raw.close();
    BenchDirs.delete(dir);
  }

  @Benchmark
  public void logInterval() {
    long o = offset++;
    interval.groups().claimPending(Q, G, List.of(entry(o)), o + 1, T0);
    interval.groups().acknowledgePending(Q, G, "consumer-1", o, 1, T0);
  }

  @Benchmark
  public void logAlways() {
    long o = offset++;
    always.groups().claimPending(Q, G, List.of(entry(o)), o + 1, T0);
    always.groups().acknowledgePending(Q, G, "consumer-1", o, 1, T0);
  }

  @Benchmark
  public void readModifyWrite() {
    long o = offset++;
    defaults.claimPending(Q, G, List.of(entry(o)), o + 1, T0);
    defaults.acknowledgePending(Q, G, "consumer-1", o, 1, T0);
  }

  @Benchmark
  public void rawWrite2() throws IOException {
    record.clear();
    raw.write(record);
    record.clear();
    raw.write(record);
  }

  @Benchmark
  public void rawWriteFsync2() throws IOException {
    record.clear();
    raw.write(record);
    raw.force(false);
    record.clear();
    raw.write(record);
    raw.force(false);
  }
}
