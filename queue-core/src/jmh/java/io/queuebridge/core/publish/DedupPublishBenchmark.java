package io.queuebridge.core.publish;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.file.BenchDirs;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Deduplicated publish (BEHAVIOUR Q-DEDUP): one thread publishing 100-byte messages with {@link
 * QueueManager#publishTo} to a classic queue with a 5-minute deduplication window, on the memory
 * and the file store. {@code ids = none} publishes without an id: the reference, measured in the
 * same run. {@code unique} gives every publish a new id (each is stored and its id remembered);
 * {@code retry} publishes ids that were stored before the iteration (each is answered from the
 * window and stores nothing, as a publisher's retry after a timeout is). Each iteration starts from
 * a fresh store, so the queue and the remembered ids do not grow across iterations.
 *
 * <p>{@code queue = kept} leaves every message in the queue, so the memory store's live heap grows
 * through the iteration (and the collector copies it). {@code drained} truncates the queue to its
 * tail after every {@value #DRAIN_EVERY} publishes, as retention does behind a consumer that keeps
 * up: the messages go, the remembered ids stay for the window, so what an id costs is the index's
 * own work.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms4g", "-Xmx4g"})
public class DedupPublishBenchmark {
  private static final String QUEUE = "bench";
  private static final byte[] VALUE = new byte[100];
  private static final int RETRIED_IDS = 10_000;
  private static final int DRAIN_EVERY = 16_384;

  @Param({"memory", "file"})
  public String store;

  @Param({"none", "unique", "retry"})
  public String ids;

  @Param({"kept", "drained"})
  public String queue;

  private Path dir;
  private Storage storage;
  private QueueManager manager;
  private long next;
  private boolean drain;

  @Setup(Level.Iteration)
  public void setUp() throws Exception {
    if (store.equals("file")) {
      dir = BenchDirs.fresh("dedup");
      storage = QueueStores.file(dir);
    } else {
      storage = QueueStores.memory();
    }
    manager = new QueueManager(storage, QueueManagerConfig.builder().build());
    manager.createQueue(
        QueueConfig.durable(QUEUE)
            .maxDepth(1_000_000_000L)
            .dedupWindow(Duration.ofMinutes(5))
            .build());
    for (int i = 0; i < RETRIED_IDS; i++) {
      manager.publishTo(QUEUE, request("retried-" + i));
    }
    next = 0;
    drain = queue.equals("drained");
  }

  @TearDown(Level.Iteration)
  public void tearDown() throws IOException {
    long stored = storage.queues().tail(QUEUE);
    if (ids.equals("retry") && stored != RETRIED_IDS) {
      throw new IllegalStateException("a retry stored a message: " + stored + " in the queue");
    }
    long held = stored - storage.queues().head(QUEUE);
    if (drain && held >= DRAIN_EVERY) {
      throw new IllegalStateException("the drained queue holds " + held + " messages");
    }
    manager.stop();
    storage.close();
    if (dir != null) {
      BenchDirs.delete(dir);
      dir = null;
    }
  }

  private static PublishRequest request(String id) {
    PublishRequest.Builder b = PublishRequest.builder("t").value(VALUE);
    return id == null ? b.build() : b.deduplicationId(id).build();
  }

  @Benchmark
  public long publish() throws InterruptedException {
    long n = ++next;
    String id =
        switch (ids) {
          case "none" -> null;
          case "unique" -> "id-" + n;
          default -> "retried-" + (n % RETRIED_IDS);
        };
    long offset = manager.publishTo(QUEUE, request(id));
    if (drain && (n & (DRAIN_EVERY - 1)) == 0) {
      storage.queues().truncate(QUEUE, storage.queues().tail(QUEUE));
    }
    return offset;
  }
}
