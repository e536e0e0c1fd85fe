package io.queuebridge.core.group;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.ClaimsSwitch;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * Per-key order (BEHAVIOUR Q-ORDER) against the same queue unordered, on the memory store: {@value
 * #MESSAGES} messages with random keys out of {@code keys} are drained by {@code consumers}
 * competing members of one queue-mode group, each looping {@code claimBatch(batch)} + {@code
 * ackAll} until everything is acknowledged. {@code ordering = key} orders the queue by the message
 * key, and the drain checks that every key's messages are acknowledged in publish order; {@code
 * ordering = none} is the reference, the same drain of the same messages without order. Each
 * invocation is one whole drain, timed once ({@code SingleShotTime}); the store is built and filled
 * in a per-invocation setup, which JMH does not time. {@code workNanos} gives the members work of
 * their own per message before each ack, as consumers that process what they claim have: a fixed
 * amount of CPU work ({@link Blackhole#consumeCPU}), calibrated once per trial to take {@code
 * workNanos} on a free core, so a member that is descheduled still has all of it to do. At 0, the
 * default, the drain measures the queue alone, the hardest case for the order.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
// One drain is short (tens of milliseconds) and JIT-compiles slowly: drains keep getting faster
// for some 20 invocations, so 30 warm-up drains come before the 15 measured ones.
@Warmup(iterations = 30)
@Measurement(iterations = 15)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch"})
public class OrderedClaimBenchmark {
  private static final String QUEUE = "bench";
  private static final String GROUP = "g";
  static final int MESSAGES = 100_000;

  @Param({"none", "key"})
  public String ordering;

  @Param({"1000", "100000"})
  public int keys;

  @Param({"10"})
  public int batch;

  /**
   * The members' own work per message, as nanoseconds of CPU on a free core ({@link #tokensPerNano}
   * calibrates it); 0, the default, measures the queue alone.
   */
  @Param({"0"})
  public int workNanos;

  /** Competing members, each on its own thread. */
  @Param({"8", "1"})
  public int consumers;

  /**
   * {@code store}: the memory store as it is. {@code section} and {@code concurrent}: its group
   * half behind a reflective proxy that answers {@code concurrentClaims()} false or true (the
   * engine's sectioned or concurrent path); both pay the proxy's cost, so compare them with each
   * other.
   */
  @Param({"store"})
  public String claims;

  private Storage storage;
  private GroupCoordinator groups;
  private ExecutorService pool;
  private int[] keyOf; // by offset: the message's key number
  private int[] seqOf; // by offset: its place among its key's messages
  private AtomicLongArray acked; // by key: how many of its messages were acknowledged

  // Blackhole.consumeCPU tokens per nanosecond on this machine, measured by calibrate()
  private double tokensPerNano;

  @Setup(Level.Trial)
  public void startPool() {
    pool = Executors.newFixedThreadPool(consumers);
    if (workNanos > 0) {
      tokensPerNano = calibrate();
    }
  }

  /**
   * Tokens of {@link Blackhole#consumeCPU} per nanosecond: the best of a few timed runs of 10
   * million tokens on the calling thread, before any member starts.
   */
  private static double calibrate() {
    long tokens = 10_000_000;
    long best = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      long start = System.nanoTime();
      Blackhole.consumeCPU(tokens);
      best = Math.min(best, System.nanoTime() - start);
    }
    return (double) tokens / best;
  }

  @TearDown(Level.Trial)
  public void stopPool() {
    pool.shutdownNow();
  }

  @Setup(Level.Invocation)
  public void fill() {
    storage = QueueStores.memory();
    OrderingKey order = OrderingKey.parse("ordering", ordering);
    storage
        .queues()
        .createQueue(
            QueueConfig.durable(QUEUE)
                .messageTtl(Duration.ZERO)
                .maxDepth(MESSAGES)
                .deliveryTimeout(Duration.ofDays(1))
                .ordering(order)
                .build());
    groups =
        claims.equals("store")
            ? GroupCoordinator.builder(storage).build()
            : GroupCoordinator.builder(
                    storage.queues(),
                    ClaimsSwitch.answering(storage.groups(), claims.equals("concurrent")))
                .build();
    for (int c = 0; c < consumers; c++) {
      groups.join(QUEUE, "", GROUP, "c" + c, CursorOption.resume(GroupMode.QUEUE));
    }
    keyOf = new int[MESSAGES];
    seqOf = new int[MESSAGES];
    int[] count = new int[keys];
    SplittableRandom random = new SplittableRandom(42);
    for (int i = 0; i < MESSAGES; i++) {
      int k = random.nextInt(keys);
      Message m =
          Message.builder()
              .topic("$queue/" + QUEUE)
              .key(("key-" + k).getBytes(StandardCharsets.UTF_8))
              .value(new byte[100])
              .build();
      int offset = (int) storage.queues().append(QUEUE, m);
      keyOf[offset] = k;
      seqOf[offset] = count[k]++;
    }
    acked = new AtomicLongArray(keys);
    System.gc(); // the garbage of the set-up is not the drain's to collect
  }

  @TearDown(Level.Invocation)
  public void close() {
    storage.close();
  }

  /** All the members drain the queue; returns the messages acknowledged. */
  @Benchmark
  public long drain() throws Exception {
    boolean checkOrder = ordering.equals("key");
    AtomicLong done = new AtomicLong();
    List<Future<?>> members = new ArrayList<>();
    for (int c = 0; c < consumers; c++) {
      String me = "c" + c;
      members.add(
          pool.submit(
              () -> {
                while (done.get() < MESSAGES) {
                  List<GroupDelivery> claimed = groups.claimBatch(QUEUE, GROUP, me, batch);
                  if (claimed.isEmpty()) {
                    Thread.onSpinWait();
                    continue;
                  }
                  // the same bookkeeping in both cases; only the ordered queue must keep order
                  for (GroupDelivery d : claimed) {
                    int offset = (int) d.offset();
                    long before = acked.getAndIncrement(keyOf[offset]);
                    if (checkOrder && before != seqOf[offset]) {
                      throw new IllegalStateException(
                          "offset "
                              + offset
                              + " of key "
                              + keyOf[offset]
                              + " is message "
                              + seqOf[offset]
                              + " of its key, acknowledged after "
                              + before);
                    }
                  }
                  if (workNanos > 0) {
                    Blackhole.consumeCPU(Math.round(tokensPerNano * workNanos * claimed.size()));
                  }
                  if (!groups.ackAll(claimed).isEmpty()) {
                    throw new IllegalStateException("not acked");
                  }
                  done.addAndGet(claimed.size());
                }
                return null;
              }));
    }
    for (Future<?> f : members) {
      f.get();
    }
    if (done.get() != MESSAGES) {
      throw new IllegalStateException("drained " + done.get() + " of " + MESSAGES);
    }
    return done.get();
  }
}
