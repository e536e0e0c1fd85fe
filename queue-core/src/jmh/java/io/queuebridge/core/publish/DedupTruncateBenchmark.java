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
 * A truncation of a deduplicating queue on the file store (BEHAVIOUR Q-DEDUP): the queue remembers
 * {@code remembered} ids of messages truncated before (all inside its 5-minute window), and each
 * timed operation is one {@code truncate} removing the {@value #REMOVED} messages with new ids that
 * an untimed set-up published just before, as a retention pass behind a consumer does. What is
 * measured is what the truncation saves of the ids before it removes their messages; with {@code
 * remembered = 0} there is nothing but the removed ones (the reference, same run).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms4g", "-Xmx4g"})
public class DedupTruncateBenchmark {
  private static final String QUEUE = "bench";
  private static final byte[] VALUE = new byte[100];
  private static final int REMOVED = 1024;

  @Param({"0", "100000", "1000000"})
  public int remembered;

  private Path dir;
  private Storage storage;
  private QueueManager manager;
  private long next;

  @Setup(Level.Trial)
  public void setUp() throws Exception {
    dir = BenchDirs.fresh("dedup-truncate");
    storage = QueueStores.file(dir);
    manager = new QueueManager(storage, QueueManagerConfig.builder().build());
    manager.createQueue(
        QueueConfig.durable(QUEUE)
            .maxDepth(1_000_000_000L)
            .dedupWindow(Duration.ofMinutes(5))
            .build());
    for (int i = 0; i < remembered; i++) {
      publish();
    }
    storage.queues().truncate(QUEUE, storage.queues().tail(QUEUE));
  }

  private void publish() throws InterruptedException {
    manager.publishTo(
        QUEUE, PublishRequest.builder("t").value(VALUE).deduplicationId("id-" + next++).build());
  }

  /** The messages the next truncation removes. */
  @Setup(Level.Invocation)
  public void publishTheNextBatch() throws InterruptedException {
    for (int i = 0; i < REMOVED; i++) {
      publish();
    }
  }

  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    long held = storage.queues().tail(QUEUE) - storage.queues().head(QUEUE);
    manager.stop();
    storage.close();
    BenchDirs.delete(dir);
    if (held != 0) {
      throw new IllegalStateException("the truncations left " + held + " messages");
    }
  }

  @Benchmark
  public long truncate() {
    storage.queues().truncate(QUEUE, storage.queues().tail(QUEUE));
    return storage.queues().head(QUEUE);
  }
}
