package io.queuebridge.core.group;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Producer → consumer hand-off across two threads. {@code engine}: a producer appends to a memory
 * store queue while a consumer of a queue-mode group claims batches of 10 and acks every message.
 * {@code reference}: the same messages handed from a producer to a consumer through an {@link
 * ArrayBlockingQueue}. Both bound the backlog to {@value #BACKLOG} messages. The figure to compare
 * is the {@code consumed} counter: messages settled (engine) or taken (reference) per second.
 *
 * <p>Diagnostic variant {@code engineCountedBacklog}: the same engine hand-off, but the producer
 * bounds the backlog by two counters the threads publish (messages appended, messages settled)
 * instead of reading the group's committed offset through {@link GroupCoordinator#group} on every
 * invocation. It isolates the cost of that read — the group store's monitor, which the consumer's
 * claims and acks take too, and a snapshot rebuilt after every ack — from the engine's own cost.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class GroupHandoffBenchmark {
  static final int BACKLOG = 1024;
  private static final int BATCH = 10;
  private static final String QUEUE = "bench";
  private static final String GROUP = "g";
  private static final String CONSUMER = "c1";

  static Message message() {
    byte[] value = new byte[100];
    Arrays.fill(value, (byte) 'x');
    return Message.builder()
        .topic("$queue/" + QUEUE + "/orders")
        .key("key".getBytes(StandardCharsets.UTF_8))
        .value(value)
        .createdAt(Instant.now())
        .build();
  }

  /** Messages moved per second by each side of a group. */
  @State(Scope.Thread)
  @AuxCounters(AuxCounters.Type.OPERATIONS)
  public static class Counters {
    public long produced;
    public long consumed;

    @Setup(Level.Iteration)
    public void reset() {
      produced = 0;
      consumed = 0;
    }
  }

  /** The engine's shared state: one memory store, one queue, one group with one member. */
  @State(Scope.Group)
  public static class Engine {
    Storage storage;
    DurableQueueStore store;
    GroupCoordinator groups;
    Message message;
    int invocations;
    volatile long appended;
    volatile long settled;

    @Setup(Level.Trial)
    public void setUp() {
      storage = QueueStores.memory();
      store = storage.queues();
      store.createQueue(QueueConfig.durable(QUEUE).messageTtl(Duration.ZERO).build());
      groups = GroupCoordinator.builder(storage).build();
      groups.join(QUEUE, "", GROUP, CONSUMER, CursorOption.resume(GroupMode.QUEUE));
      message = message();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      GroupMetrics m = groups.metrics();
      if (m.acks() != m.claimSuccesses()) {
        throw new IllegalStateException("benchmark lost track of messages: " + m);
      }
      storage.close();
    }
  }

  /** The reference's shared state. */
  @State(Scope.Group)
  public static class Reference {
    ArrayBlockingQueue<Message> queue;
    Message message;

    @Setup(Level.Trial)
    public void setUp() {
      queue = new ArrayBlockingQueue<>(BACKLOG);
      message = message();
    }
  }

  @Benchmark
  @Group("engine")
  @GroupThreads(1)
  public void engineProducer(Engine e, Counters c) {
    long committed = e.groups.group(QUEUE, GROUP).orElseThrow().committed();
    if (e.store.tail(QUEUE) - committed >= BACKLOG) {
      Thread.yield(); // backlog full: let the consumer run
      return;
    }
    for (int i = 0; i < BATCH; i++) {
      e.store.append(QUEUE, e.message);
    }
    c.produced += BATCH;
  }

  @Benchmark
  @Group("engine")
  @GroupThreads(1)
  public void engineConsumer(Engine e, Counters c, Blackhole bh) {
    List<GroupDelivery> claimed = e.groups.claimBatch(QUEUE, GROUP, CONSUMER, BATCH);
    if (claimed.isEmpty()) {
      Thread.yield(); // nothing yet: let the producer run
      return;
    }
    for (GroupDelivery d : claimed) {
      d.ack();
      bh.consume(d.message());
    }
    c.consumed += claimed.size();
    if ((++e.invocations & 1023) == 0) {
      e.groups.retentionPass();
    }
  }

  @Benchmark
  @Group("engineCountedBacklog")
  @GroupThreads(1)
  public void countedProducer(Engine e, Counters c) {
    if (e.appended - e.settled >= BACKLOG) {
      Thread.yield(); // backlog full: let the consumer run
      return;
    }
    for (int i = 0; i < BATCH; i++) {
      e.store.append(QUEUE, e.message);
    }
    e.appended += BATCH; // single writer
    c.produced += BATCH;
  }

  @Benchmark
  @Group("engineCountedBacklog")
  @GroupThreads(1)
  public void countedConsumer(Engine e, Counters c, Blackhole bh) {
    long before = c.consumed;
    engineConsumer(e, c, bh);
    e.settled += c.consumed - before; // single writer
  }

  @Benchmark
  @Group("reference")
  @GroupThreads(1)
  public void referenceProducer(Reference r, Counters c) throws InterruptedException {
    for (int i = 0; i < BATCH; i++) {
      if (r.queue.offer(r.message, 10, TimeUnit.MILLISECONDS)) {
        c.produced++;
      }
    }
  }

  @Benchmark
  @Group("reference")
  @GroupThreads(1)
  public void referenceConsumer(Reference r, Counters c, Blackhole bh) throws InterruptedException {
    for (int i = 0; i < BATCH; i++) {
      Message m = r.queue.poll(10, TimeUnit.MILLISECONDS);
      if (m != null) {
        c.consumed++;
        bh.consume(m);
      }
    }
  }
}
