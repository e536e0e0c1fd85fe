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

  @Param({"memory", "file"})
  public String store;

  @Param({"none", "unique", "retry"})
  public String ids;

  private Path dir;
  private Storage storage;
  private QueueManager manager;
  private long next;

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
  }

  @TearDown(Level.Iteration)
  public void tearDown() throws IOException {
    long stored = storage.queues().tail(QUEUE);
    if (ids.equals("retry") && stored != RETRIED_IDS) {
      throw new IllegalStateException("a retry stored a message: " + stored + " in the queue");
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
    String id =
        switch (ids) {
          case "none" -> null;
          case "unique" -> "id-" + next++;
          default -> "retried-" + (next++ % RETRIED_IDS);
        };
    return manager.publishTo(QUEUE, request(id));
  }
}
