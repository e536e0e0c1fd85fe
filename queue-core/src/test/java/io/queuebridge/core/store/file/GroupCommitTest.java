package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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
 * Group commit (BEHAVIOUR Q-GC, F-BARRIER). Faults and pauses are injected at the I/O seam ({@link
 * FaultyIo}); real files, real fsyncs.
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
   * The property behind BEHAVIOUR F-BARRIER (a roll between write and sync, no borrowed barrier):
   * whatever rolls happen meanwhile, an acknowledged durable append was covered by an fsync of the
   * very segment file it was written to, and that fsync started after the write completed.
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
    // barrier 1 (covering only A's write) stays in flight until released; barrier 2 fails
    holdThenFail(first, release);
    CompletableFuture<Long> a = CompletableFuture.supplyAsync(() -> append(q, "a"), pool);
    await().atMost(Duration.ofSeconds(10)).until(() -> io.segmentForces.get() >= first);
    Set<Thread> callers = ConcurrentHashMap.newKeySet();
    CompletableFuture<Long> b = CompletableFuture.supplyAsync(() -> append(q, "b", callers), pool);
    // B is blocked in its append while barrier 1 is in flight: its write comes after barrier 1
    // began (the store writes it at once, or queues it for the write after barrier 1 ends)
    awaitParked(callers, 1);
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
    // barrier 1 (leader L) stays in flight until released; barrier 2, covering A and B, fails
    holdThenFail(first, release);
    CompletableFuture<Long> l = CompletableFuture.supplyAsync(() -> append(q, "l"), pool);
    await().atMost(Duration.ofSeconds(10)).until(() -> io.segmentForces.get() >= first);
    Set<Thread> callers = ConcurrentHashMap.newKeySet();
    CompletableFuture<Long> a = CompletableFuture.supplyAsync(() -> append(q, "a", callers), pool);
    CompletableFuture<Long> b = CompletableFuture.supplyAsync(() -> append(q, "b", callers), pool);
    awaitParked(callers, 2); // both blocked while barrier 1 is in flight
    release.countDown();
    assertThat(l.get(10, TimeUnit.SECONDS)).isZero();
    // barrier 2 covers A and B (written together, or one leading it and the other waiting on it)
    // and fails: both must fail, although any fsync after the failure (barrier 3) would succeed.
    // Separate barrier callers: see segmentWaiterOnAFailedBarrierFailsEvenIfALaterFsyncWorks.
    assertThat(catchCause(a)).isInstanceOf(QueueStoreException.class);
    assertThat(catchCause(b)).isInstanceOf(QueueStoreException.class);
    assertThat(io.segmentForces.get()).as("nobody retried a poisoned barrier").isEqualTo(first + 1);
  }

  @Test
  void aPlainAppendNeverWaitsForAnFsyncWhileDurableAppendsWaitForTheirBarrier() throws Exception {
    DurableQueueStore q = open(config());
    CountDownLatch release = new CountDownLatch(1);
    int first = io.segmentForces.get() + 1;
    io.beforeForce =
        (f, n) -> {
          if (n == first) {
            awaitQuietly(release); // barrier 1 (A's) stays in flight until released
          }
        };
    CompletableFuture<Long> a = CompletableFuture.supplyAsync(() -> append(q, "a"), pool);
    await().atMost(Duration.ofSeconds(10)).until(() -> io.segmentForces.get() >= first);
    Set<Thread> callers = ConcurrentHashMap.newKeySet();
    CompletableFuture<Long> b = CompletableFuture.supplyAsync(() -> append(q, "b", callers), pool);
    awaitParked(callers, 1); // B waits for barrier 1 to end (before or after its write)
    CompletableFuture<Long> c = CompletableFuture.supplyAsync(() -> q.append(Q, msg("c")), pool);
    assertThat(c.get(10, TimeUnit.SECONDS)).as("written while barrier 1 is in flight").isEqualTo(2);
    assertThat(a).isNotDone();
    assertThat(b).isNotDone();
    release.countDown();
    assertThat(a.get(10, TimeUnit.SECONDS)).isZero();
    assertThat(b.get(10, TimeUnit.SECONDS)).isEqualTo(1);
  }

  // The same rules at the barrier itself (Segment#syncThrough), with writes recorded between
  // barriers by the test: the store's append path decides when frames are written, these pin
  // what any interleaving of writes and barriers must give.

  private Segment segmentWithFrames(int frames) throws IOException {
    Files.createDirectories(tmp);
    Segment seg =
        new Segment(
            0,
            tmp,
            new Segment.SyncObserver() {
              @Override
              public void synced() {}

              @Override
              public void syncFailed(IOException e) {}
            });
    seg.activate(io.openWritable(seg.logFile, true), 0, 0);
    for (int i = 0; i < frames; i++) {
      writeFrame(seg);
    }
    return seg;
  }

  /** Records a one-record frame written at the end of the segment. */
  private static void writeFrame(Segment seg) {
    seg.recordAppend(seg.endOffset, 1, 100, 0, 0, 4096, 1000);
  }

  private Future<Void> syncThrough(Segment seg, long target, Set<Thread> callers) {
    return pool.submit(
        () -> {
          callers.add(Thread.currentThread());
          seg.syncThrough(target);
          return null;
        });
  }

  @Test
  void segmentWaiterNeverInheritsSuccessFromABarrierThatBeganBeforeItsWrite() throws Exception {
    Segment seg = segmentWithFrames(1); // A's write: offset 0
    CountDownLatch release = new CountDownLatch(1);
    // barrier 1 (covering only A's write) stays in flight until released; barrier 2 fails
    holdThenFail(1, release);
    Future<Void> a = syncThrough(seg, 1, ConcurrentHashMap.newKeySet());
    await().atMost(Duration.ofSeconds(10)).until(() -> io.segmentForces.get() >= 1);
    writeFrame(seg); // B's write (offset 1) after barrier 1 began
    Set<Thread> waiters = ConcurrentHashMap.newKeySet();
    Future<Void> b = syncThrough(seg, 2, waiters);
    awaitParkedIn(waiters, 1, Segment.class); // B waits on barrier 1
    release.countDown();
    a.get(10, TimeUnit.SECONDS);
    assertThat(catchCause(b))
        .as("B may not return on barrier 1; barrier 2, its own, failed")
        .isInstanceOf(IOException.class);
    assertThat(io.segmentForces.get()).isEqualTo(2);
    seg.closeWriter();
  }

  @Test
  void segmentWaiterOnAFailedBarrierFailsEvenIfALaterFsyncWorks() throws Exception {
    Segment seg = segmentWithFrames(1); // L's write: offset 0
    CountDownLatch release = new CountDownLatch(1);
    // barrier 1 (leader L) stays in flight until released; barrier 2, covering A and B, fails
    holdThenFail(1, release);
    Future<Void> l = syncThrough(seg, 1, ConcurrentHashMap.newKeySet());
    await().atMost(Duration.ofSeconds(10)).until(() -> io.segmentForces.get() >= 1);
    writeFrame(seg); // A: offset 1
    writeFrame(seg); // B: offset 2
    Set<Thread> waiters = ConcurrentHashMap.newKeySet();
    Future<Void> a = syncThrough(seg, 2, waiters);
    Future<Void> b = syncThrough(seg, 3, waiters);
    awaitParkedIn(waiters, 2, Segment.class); // both wait on barrier 1
    release.countDown();
    l.get(10, TimeUnit.SECONDS);
    // one of A and B leads barrier 2 and fails; the other waits on it and must fail too
    assertThat(catchCause(a)).isInstanceOf(IOException.class);
    assertThat(catchCause(b)).isInstanceOf(IOException.class);
    assertThat(io.segmentForces.get()).as("nobody retried a poisoned barrier").isEqualTo(2);
    assertThatThrownBy(() -> seg.syncThrough(3))
        .as("still poisoned after the fact")
        .isInstanceOf(IOException.class);
    assertThat(io.segmentForces.get()).isEqualTo(2);
    seg.closeWriter();
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

  private static Throwable catchCause(Future<?> f) throws InterruptedException {
    try {
      f.get(10, TimeUnit.SECONDS);
      return null;
    } catch (java.util.concurrent.ExecutionException e) {
      return e.getCause();
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("timed out", e);
    }
  }

  /** Fsync number {@code first} waits for {@code release}; number {@code first + 1} fails. */
  private void holdThenFail(int first, CountDownLatch release) {
    io.beforeForce =
        (f, n) -> {
          if (n == first) {
            awaitQuietly(release);
          } else if (n == first + 1) {
            throw new IOException("injected fsync failure #" + n);
          }
        };
  }

  /** An append from a pool thread that records the thread, so a test can see it blocked. */
  private static long append(DurableQueueStore q, String text, Set<Thread> callers) {
    callers.add(Thread.currentThread());
    return append(q, text);
  }

  /** Waits until {@code n} recorded callers are parked (blocked inside their append). */
  private static void awaitParked(Set<Thread> callers, int n) {
    awaitParkedIn(callers, n, GroupCommitWriter.class);
  }

  /** Waits until {@code n} recorded callers are parked inside {@code where}. */
  private static void awaitParkedIn(Set<Thread> callers, int n, Class<?> where) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                callers.size() == n
                    && callers.stream()
                        .allMatch(
                            t ->
                                t.getState() == Thread.State.WAITING
                                    && isIn(t.getStackTrace(), where)));
  }

  private static boolean isIn(StackTraceElement[] stack, Class<?> where) {
    for (StackTraceElement e : stack) {
      if (e.getClassName().equals(where.getName())) {
        return true;
      }
    }
    return false;
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
