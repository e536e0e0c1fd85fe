package io.queuebridge.core.group;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.PrimitivesOnlyGroupStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * The delivery engine's question each time a redelivery timer fires — when does the next pending
 * entry of the queue become claimable ({@link ConsumerGroupStore#nextVisible}) — on the memory
 * store, with {@code pending} scheduled entries at random due times over a day in one queue-mode
 * group. {@code indexed} is the store's answer from its due index; {@code scan} is the interface's
 * default, which reads every group and looks at every entry (what the engine did before). The scan
 * reads the group's cached snapshot, so it does not even pay for copying the entries that a
 * changing group would make it pay.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class NextVisibleBenchmark {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  @Param({"1000", "100000"})
  public int pending;

  private Storage storage;
  private ConsumerGroupStore indexed;
  private ConsumerGroupStore scan;
  private Instant after;

  @Setup
  public void fill() {
    storage = QueueStores.memory();
    storage.queues().createQueue(QueueConfig.durable("q").build());
    indexed = storage.groups();
    indexed.createGroup(ConsumerGroupState.create("q", "g", "", GroupMode.QUEUE, true, T0));
    SplittableRandom random = new SplittableRandom(42);
    List<PendingEntry> entries = new ArrayList<>(pending);
    for (int i = 0; i < pending; i++) {
      entries.add(PendingEntry.scheduled(i, T0, T0.plusSeconds(random.nextInt(86_400))));
    }
    indexed.claimPending("q", "g", entries, pending, T0);
    after = T0.plusSeconds(43_200); // half of the entries are past it
    scan = new PrimitivesOnlyGroupStore(indexed);
  }

  @TearDown
  public void close() {
    storage.close();
  }

  @Benchmark
  public Optional<Instant> indexed() {
    return indexed.nextVisible("q", after);
  }

  @Benchmark
  public Optional<Instant> scan() {
    return scan.nextVisible("q", after);
  }
}
