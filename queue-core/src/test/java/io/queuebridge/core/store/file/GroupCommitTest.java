package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.Message;
import io.queuebridge.core.QueueConfig;
import io.queuebridge.core.QueueStoreException;
import io.queuebridge.core.store.DurableQueueStore;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Group commit (SEMANTICS §2.4.8 {@code Q-GC}, §7 items 15–18). Faults and pauses are injected at
 * the I/O seam ({@link FaultyIo}); real files, real fsyncs.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class GroupCommitTest {
  private static final String Q = "q";
  @TempDir Path tmp;
  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final FaultyIo io = new FaultyIo();
  private FileStorage storage;

  private DurableQueueStore open(FileStoreConfig config) {
    storage = FileStorage.open(config, Clock.systemUTC(), io);
    storage.queues().createQueue(QueueConfig.durable(Q).build());
    return storage.queues();
  }

  private FileStoreConfig config() {
    return FileStoreConfig.defaults(tmp.resolve("store")).withSyncIntervalMs(60_000);
  }

  @AfterEach
  void close() throws InterruptedException {
    pool.shutdownNow();
    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    if (storage != null) {
      storage.close();
    }
  }

  @Test
  void concurrentDurableAppendsShareFsyncsAndGetUniqueContiguousOffsets() throws Exception {
    DurableQueueStore q = open(config());
    int threads = 16;
    int each = 40;
    List<Future<List<Long>>> futures = new ArrayList<>();
    CountDownLatch start = new CountDownLatch(1);
    for (int t = 0; t < threads; t++) {
      int thread = t;
      futures.add(
          pool.submit(
              () -> {
                start.await();
                List<Long> mine = new ArrayList<>();
                for (int i = 0; i < each; i++) {
                  mine.add(q.appendAndSync(Q, TestMessages.text(thread + ":" + i)));
                }
                return mine;
              }));
    }
    long before = storage.syncCount();
    int writesBefore = io.segmentWrites.get();
    start.countDown();
    Set<Long> offsets = new TreeSet<>();
    for (int t = 0; t < threads; t++) {
      List<Long> mine = futures.get(t).get(60, TimeUnit.SECONDS);
      assertThat(mine).isSorted();
      for (int i = 0; i < each; i++) {
        assertThat(TestMessages.text(q.read(Q, mine.get(i)))).isEqualTo(t + ":" + i);
      }
      offsets.addAll(mine);
    }
    int total = threads * each;
    assertThat(offsets).hasSize(total).first().isEqualTo(0L);
    assertThat(offsets).last().isEqualTo(total - 1L);
    long fsyncs = storage.syncCount() - before;
    assertThat(fsyncs).as("fsyncs for %d durable appends", total).isPositive().isLessThan(total);
    assertThat(io.segmentWrites.get() - writesBefore)
        .as("writes for %d appends (queued frames are written together)", total)
        .isLessThan(total);
  }

  /**
   * The property behind §7.15 and §7.16: whatever rolls happen meanwhile, an acknowledged durable
   * append was covered by an fsync of the very segment file it was written to, and that fsync
   * started after the write completed.
   */
  @Test
  void everyAcknowledgedAppendIsCoveredByAnFsyncOfItsOwnSegmentStartedAfterItsWrite()
      throws Exception {
    DurableQueueStore q = open(config().withSegmentBytes(2048));
    record Acked(long offset, long returned) {}
    ConcurrentLinkedQueue<Acked> acks = new ConcurrentLinkedQueue<>();
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      int thread = t;
      futures.add(
          pool.submit(
              () -> {
                for (int i = 0; i < 60; i++) {
                  long off =
                      q.appendAndSync(
                          Q, TestMessages.text(thread + ":" + i + ":" + "x".repeat(100 + 7 * i)));
                  long returned = io.now();
                  acks.add(new Acked(off, returned));
                }
                return null;
              }));
    }
    for (Future<?> f : futures) {
      f.get(60, TimeUnit.SECONDS);
    }
    assertThat(storage.queues.get(Q).log.segmentCount())
        .as("segments rolled meanwhile")
        .isGreaterThan(10);
    for (Acked a : acks) {
      FaultyIo.Event write = io.writeOf(a.offset());
      assertThat(io.forcesOf(write.file()))
          .as("fsync of %s covering offset %d", write.file(), a.offset())
          .anySatisfy(
              f -> {
                assertThat(f.start()).isGreaterThan(write.end());
                assertThat(f.end()).isLessThan(a.returned());
              });
    }
  }

  @Test
  void aWaiterNeverInheritsSuccessFromABarrierThatBeganBeforeItsWrite() throws Exception {
    DurableQueueStore q = open(config());
    CountDownLatch release = new CountDownLatch(1);
    int first = io.segmentForces.get() + 1;
    io.beforeForce =
        (f, n) -> {
          if (n == first) {
            awaitQuietly(release); // barrier 1 in flight, covering only A's write
          } else if (n == first + 1) {
            throw new IOException("injected fsync failure #" + n);
          }
        };
    CompletableFuture<Long> a = CompletableFuture.supplyAsync(() -> append(q, "a"), pool);
    await().atMost(Duration.ofSeconds(10)).until(() -> io.segmentForces.get() >= first);
    CompletableFuture<Long> b = CompletableFuture.supplyAsync(() -> append(q, "b"), pool);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> q.tail(Q) == 2); // B wrote after barrier 1 began
    release.countDown();
    assertThat(a.get(10, TimeUnit.SECONDS)).isZero();
    assertThat(catchCause(b))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("durability barrier");
    // sticky: the next append retries the sync first; it works now, so the append goes through
    assertThat(q.appendAndSync(Q, TestMessages.text("c"))).isEqualTo(2);
  }

  @Test
  void aWriteCoveredByAFailedBarrierIsNeverAcknowledgedEvenIfALaterFsyncWorks() throws Exception {
    DurableQueueStore q = open(config());
    CountDownLatch release = new CountDownLatch(1);
    int first = io.segmentForces.get() + 1;
    io.beforeForce =
        (f, n) -> {
          if (n == first) {
            awaitQuietly(release); // barrier 1 (leader L) in flight while A and B write
          } else if (n == first + 1) {
            throw new IOException("injected fsync failure #" + n); // barrier 2 covers A and B
          }
        };
    CompletableFuture<Long> l = CompletableFuture.supplyAsync(() -> append(q, "l"), pool);
    await().atMost(Duration.ofSeconds(10)).until(() -> io.segmentForces.get() >= first);
    CompletableFuture<Long> a = CompletableFuture.supplyAsync(() -> append(q, "a"), pool);
    CompletableFuture<Long> b = CompletableFuture.supplyAsync(() -> append(q, "b"), pool);
    await().atMost(Duration.ofSeconds(10)).until(() -> q.tail(Q) == 3);
    release.countDown();
    assertThat(l.get(10, TimeUnit.SECONDS)).isZero();
    // one of A and B led barrier 2 and failed; the other waited on it: it must fail too, although
    // any fsync after the failure (barrier 3) would succeed
    assertThat(catchCause(a)).isInstanceOf(QueueStoreException.class);
    assertThat(catchCause(b)).isInstanceOf(QueueStoreException.class);
    assertThat(io.segmentForces.get()).as("nobody retried a poisoned barrier").isEqualTo(first + 1);
  }

  @Test
  void aFailedBarrierIsStickyAndAppendsAreRefusedWhileTheSyncKeepsFailing() throws Exception {
    DurableQueueStore q = open(config());
    q.appendAndSync(Q, TestMessages.text("ok"));
    io.beforeForce =
        (f, n) -> {
          throw new IOException("device gone");
        };
    assertThatThrownBy(() -> q.appendAndSync(Q, TestMessages.text("lost?")))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("durability barrier for offsets [1, 2)")
        .hasMessageContaining("must not be acknowledged");
    long tail = q.tail(Q);
    assertThatThrownBy(() -> q.append(Q, TestMessages.text("refused")))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("previous sync failure persists");
    assertThatThrownBy(() -> q.appendAndSync(Q, TestMessages.text("refused")))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("previous sync failure persists");
    assertThat(q.tail(Q)).as("refused appends write nothing").isEqualTo(tail);
    io.beforeForce = (f, n) -> {};
    assertThat(q.appendAndSync(Q, TestMessages.text("again"))).isEqualTo(tail);
    storage.close();
    storage = FileStorage.open(config(), Clock.systemUTC(), io);
    assertThat(storage.queues().tail(Q)).isEqualTo(tail + 1);
    assertThat(TestMessages.text(storage.queues().read(Q, tail))).isEqualTo("again");
  }

  @Test
  void backgroundSyncFailureIsStickyToo() {
    DurableQueueStore q = open(config());
    q.append(Q, TestMessages.text("buffered"));
    io.beforeForce =
        (f, n) -> {
          throw new IOException("device gone");
        };
    storage.queues.get(Q).log.syncActive(); // what the background thread runs every interval
    assertThatThrownBy(() -> q.append(Q, TestMessages.text("refused")))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("previous sync failure persists");
    io.beforeForce = (f, n) -> {};
    assertThat(q.append(Q, TestMessages.text("ok"))).isEqualTo(1);
  }

  @Test
  void syncIntervalZeroMakesEveryPlainAppendDurable() {
    DurableQueueStore q = open(config().withSyncIntervalMs(0));
    int before = io.segmentForces.get();
    q.append(Q, TestMessages.text("a"));
    q.appendBatch(Q, List.of(TestMessages.text("b"), TestMessages.text("c")));
    assertThat(io.segmentForces.get() - before).isEqualTo(2);
  }

  @Test
  void closeMakesBufferedAppendsDurable() {
    DurableQueueStore q = open(config());
    q.append(Q, TestMessages.text("a"));
    Path active = storage.queues.get(Q).log.activeForTest().logFile;
    int before = io.forcesOf(active).size();
    storage.close();
    assertThat(io.forcesOf(active)).hasSizeGreaterThan(before);
  }

  private static long append(DurableQueueStore q, String text) {
    try {
      return q.appendAndSync(Q, TestMessages.text(text));
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private static Throwable catchCause(CompletableFuture<?> f) throws InterruptedException {
    try {
      f.get(10, TimeUnit.SECONDS);
      return null;
    } catch (java.util.concurrent.ExecutionException e) {
      return e.getCause();
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("timed out", e);
    }
  }

  private static void awaitQuietly(CountDownLatch latch) throws IOException {
    try {
      if (!latch.await(30, TimeUnit.SECONDS)) {
        throw new IOException("test latch timed out");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  static Message msg(String s) {
    return TestMessages.text(s);
  }
}
