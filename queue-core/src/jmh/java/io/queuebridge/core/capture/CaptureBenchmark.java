package io.queuebridge.core.capture;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
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
 * {@link QueueManager#publishToMatchingQueues} (topic capture, BEHAVIOUR Q-CAP) on the publisher's
 * thread, against references measured in the same run.
 *
 * <ul>
 *   <li>{@code captureNoMatch}: a publish no queue captures. This runs on every ordinary publish,
 *       so it must not allocate (check {@code gc.alloc.rate.norm} with {@code -prof gc}).
 *   <li>{@code indexLookupNoMatch}: the reference for it, the store's {@code findMatchingQueues}
 *       alone (what capture cannot avoid doing).
 *   <li>{@code captureOneMatch}: a publish one queue captures: resolution, normalisation and the
 *       hand-over to a capture lane. The store behind it discards appends so the run does not fill
 *       the heap; lanes that fill up drop (counted, printed at tear-down).
 * </ul>
 *
 * <p>{@code queues} queues have the filters {@code sensors/dev<i>/#}; the no-match topic {@code
 * sensors/unknown/temp} shares their first level, so the index walks one level before giving up.
 * The store is the memory store with the allocation-free topic index.
 *
 * <p>Run: {@code mvn -B -ntp -Pbench -pl queue-core test-compile exec:exec
 * -Djmh.args="CaptureBenchmark -f 1 -wi 3 -i 5 -w 1s -r 1s -prof gc"}
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CaptureBenchmark {

  @Param({"32", "512"})
  public int queues;

  private Storage memory;
  private QueueManager noMatchManager;
  private Storage discarding;
  private QueueManager matchManager;
  private DurableQueueStore index;
  private PublishRequest noMatch;
  private PublishRequest oneMatch;

  @Setup(Level.Trial)
  public void setUp() {
    memory = QueueStores.memory();
    noMatchManager = manager(memory);
    discarding = new DiscardingAppends(QueueStores.memory());
    matchManager = manager(discarding);
    index = memory.queues();
    noMatch =
        PublishRequest.builder("sensors/unknown/temp")
            .value("21.5".getBytes(StandardCharsets.UTF_8))
            .property("unit", "C")
            .build();
    oneMatch =
        PublishRequest.builder("sensors/dev7/temp")
            .value("21.5".getBytes(StandardCharsets.UTF_8))
            .property("unit", "C")
            .build();
    if (!index.findMatchingQueues(noMatch.topic()).isEmpty()
        || discarding.queues().findMatchingQueues(oneMatch.topic()).size() != 1) {
      throw new IllegalStateException("fixture broken");
    }
  }

  private QueueManager manager(Storage storage) {
    QueueManager m = new QueueManager(storage, QueueManagerConfig.defaults());
    for (int i = 0; i < queues; i++) {
      m.createQueue(
          QueueConfig.durable("q" + i)
              .topics("sensors/dev" + i + "/#")
              .maxDepth(Long.MAX_VALUE)
              .build());
    }
    m.start();
    return m;
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    noMatchManager.stop();
    matchManager.stop();
    System.out.println(
        "\nqueues="
            + queues
            + " no-match metrics="
            + noMatchManager.metrics()
            + " one-match metrics="
            + matchManager.metrics()
            + " appends discarded="
            + ((DiscardingAppends) discarding).appends.get());
    memory.close();
    discarding.close();
  }

  @Benchmark
  public void captureNoMatch() {
    noMatchManager.publishToMatchingQueues(noMatch);
  }

  @Benchmark
  public List<String> indexLookupNoMatch() {
    return index.findMatchingQueues(noMatch.topic());
  }

  @Benchmark
  public void captureOneMatch() {
    matchManager.publishToMatchingQueues(oneMatch);
  }

  /** The memory store, except that appends are counted and thrown away. */
  static final class DiscardingAppends implements Storage, DurableQueueStore {
    final AtomicLong appends = new AtomicLong();
    private final Storage storage;
    private final DurableQueueStore d;

    DiscardingAppends(Storage storage) {
      this.storage = storage;
      this.d = storage.queues();
    }

    @Override
    public DurableQueueStore queues() {
      return this;
    }

    @Override
    public ConsumerGroupStore groups() {
      return storage.groups();
    }

    @Override
    public String description() {
      return "discarding:" + storage.description();
    }

    @Override
    public void close() {
      storage.close();
    }

    @Override
    public long append(String queue, Message message) {
      return appends.getAndIncrement();
    }

    @Override
    public long appendBatch(String queue, List<Message> messages) {
      return appends.getAndAdd(messages.size());
    }

    @Override
    public long appendAndSync(String queue, Message message) {
      return appends.getAndIncrement();
    }

    @Override
    public long appendBatchAndSync(
        String queue, List<Message> messages, Map<String, String> checkpoints) {
      return appends.getAndAdd(messages.size());
    }

    @Override
    public Map<String, String> checkpoints(String queue) {
      return d.checkpoints(queue);
    }

    @Override
    public boolean supportsDurableSync() {
      return false;
    }

    @Override
    public void createQueue(QueueConfig config) {
      d.createQueue(config);
    }

    @Override
    public QueueConfig getQueue(String name) {
      return d.getQueue(name);
    }

    @Override
    public void updateQueue(QueueConfig config) {
      d.updateQueue(config);
    }

    @Override
    public void deleteQueue(String name) {
      d.deleteQueue(name);
    }

    @Override
    public List<QueueConfig> listQueues() {
      return d.listQueues();
    }

    @Override
    public List<String> findMatchingQueues(String topic) {
      return d.findMatchingQueues(topic);
    }

    @Override
    public Message read(String queue, long offset) {
      return d.read(queue, offset);
    }

    @Override
    public List<Message> readBatch(String queue, long start, int limit) {
      return d.readBatch(queue, start, limit);
    }

    @Override
    public long head(String queue) {
      return d.head(queue);
    }

    @Override
    public long tail(String queue) {
      return d.tail(queue);
    }

    @Override
    public void truncate(String queue, long minOffset) {
      d.truncate(queue, minOffset);
    }

    @Override
    public OptionalLong timeOffset(String queue, Instant time) {
      return d.timeOffset(queue, time);
    }

    @Override
    public OptionalLong sizeOffset(String queue, long retentionBytes) {
      return d.sizeOffset(queue, retentionBytes);
    }

    @Override
    public boolean awaitAppend(String queue, long offset, Duration timeout)
        throws InterruptedException {
      return d.awaitAppend(queue, offset, timeout);
    }
  }
}
