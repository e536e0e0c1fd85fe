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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Queue-mode round trip on the memory store — append a batch, claim it, ack every message — against
 * the reference measured in the same run: handing the same messages through an {@link
 * ArrayBlockingQueue} (offer the batch, poll it). Both run on one thread; throughput is in messages
 * per second ({@code @OperationsPerInvocation(BATCH)}).
 *
 * <p>Batch settlement: {@code appendClaimAckAll} settles each claimed batch with one {@link
 * GroupCoordinator#ackAll} instead of one {@code ack()} per delivery; its fair reference, {@code
 * arrayBlockingQueueDrainTo}, takes each batch off the hand-off queue with one {@link
 * ArrayBlockingQueue#drainTo} instead of one {@code poll()} per message.
 *
 * <p>The log is truncated to the committed offset every 1024 invocations by the coordinator's
 * retention pass (the round trip includes the retention cost, and the heap stays bounded).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class GroupThroughputBenchmark {
  private static final String QUEUE = "bench";
  private static final String GROUP = "g";
  private static final String CONSUMER = "c1";
  private static final int BATCH = 10;

  @Param({"100"})
  public int payloadBytes;

  private Storage storage;
  private DurableQueueStore store;
  private GroupCoordinator groups;
  private Message message;
  private ArrayBlockingQueue<Message> handoff;
  private final List<Message> drained = new ArrayList<>(BATCH);
  private int invocations;

  @Setup(Level.Trial)
  public void setUp() {
    storage = QueueStores.memory();
    store = storage.queues();
    store.createQueue(QueueConfig.durable(QUEUE).messageTtl(Duration.ZERO).build());
    groups = GroupCoordinator.builder(storage).build();
    groups.join(QUEUE, "", GROUP, CONSUMER, CursorOption.resume(GroupMode.QUEUE));
    byte[] value = new byte[payloadBytes];
    java.util.Arrays.fill(value, (byte) 'x');
    message =
        Message.builder()
            .topic("$queue/" + QUEUE + "/orders")
            .key("key".getBytes(StandardCharsets.UTF_8))
            .value(value)
            .createdAt(Instant.now())
            .build();
    handoff = new ArrayBlockingQueue<>(BATCH);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    GroupMetrics m = groups.metrics();
    if (m.acks() != m.claimSuccesses() || m.pelSize() != 0) {
      throw new IllegalStateException("benchmark lost track of messages: " + m);
    }
    storage.close();
  }

  /** The engine: append BATCH messages, claim them in one batch, ack each. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void appendClaimAck(Blackhole bh) {
    for (int i = 0; i < BATCH; i++) {
      store.append(QUEUE, message);
    }
    List<GroupDelivery> claimed = groups.claimBatch(QUEUE, GROUP, CONSUMER, BATCH);
    if (claimed.size() != BATCH) {
      throw new IllegalStateException("claimed " + claimed.size() + " of " + BATCH);
    }
    for (GroupDelivery d : claimed) {
      d.ack();
      bh.consume(d.message());
    }
    if ((++invocations & 1023) == 0) {
      groups.retentionPass();
    }
  }

  /** The engine with batch settlement: append BATCH messages, claim them, ack them in one call. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void appendClaimAckAll(Blackhole bh) {
    for (int i = 0; i < BATCH; i++) {
      store.append(QUEUE, message);
    }
    List<GroupDelivery> claimed = groups.claimBatch(QUEUE, GROUP, CONSUMER, BATCH);
    if (claimed.size() != BATCH) {
      throw new IllegalStateException("claimed " + claimed.size() + " of " + BATCH);
    }
    List<GroupDelivery> notAcked = groups.ackAll(claimed);
    if (!notAcked.isEmpty()) {
      throw new IllegalStateException("not acked: " + notAcked);
    }
    for (GroupDelivery d : claimed) {
      bh.consume(d.message());
    }
    if ((++invocations & 1023) == 0) {
      groups.retentionPass();
    }
  }

  /** The reference for {@link #appendClaimAckAll}: offer the batch, take it with one drainTo. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void arrayBlockingQueueDrainTo(Blackhole bh) {
    for (int i = 0; i < BATCH; i++) {
      if (!handoff.offer(message)) {
        throw new IllegalStateException("hand-off queue full");
      }
    }
    drained.clear();
    if (handoff.drainTo(drained, BATCH) != BATCH) {
      throw new IllegalStateException("drained fewer than " + BATCH);
    }
    for (Message m : drained) {
      bh.consume(m);
    }
  }

  /** The reference: hand the same messages over through a bounded blocking queue. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void arrayBlockingQueueHandoff(Blackhole bh) {
    for (int i = 0; i < BATCH; i++) {
      if (!handoff.offer(message)) {
        throw new IllegalStateException("hand-off queue full");
      }
    }
    for (int i = 0; i < BATCH; i++) {
      bh.consume(handoff.poll());
    }
  }
}
