package io.queuebridge.core.internal.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.MutableClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The capture dispatcher (BEHAVIOUR Q-CAPD, F-CAPTURE). */
class CaptureDispatcherTest {
  private static final Duration DRAIN = Duration.ofSeconds(5);
  private final MutableClock clock = MutableClock.at("2026-01-01T00:00:00Z");
  private final List<CaptureDispatcher> dispatchers = new ArrayList<>();
  private final List<CountDownLatch> gates = new ArrayList<>();
  private final ExecutorService executor = Executors.newCachedThreadPool();

  @AfterEach
  void tearDown() throws InterruptedException {
    gates.forEach(CountDownLatch::countDown);
    dispatchers.forEach(CaptureDispatcher::stop);
    executor.shutdownNow();
    assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  private CaptureDispatcher dispatcher(int workers, int depth, Duration drain) {
    CaptureDispatcher d = new CaptureDispatcher("test", workers, depth, drain, clock);
    dispatchers.add(d);
    return d;
  }

  private CountDownLatch gate() {
    CountDownLatch g = new CountDownLatch(1);
    gates.add(g);
    return g;
  }

  /** A job that signals it started, then waits for the gate (an append stuck in the store). */
  private static CaptureDispatcher.Job stuck(CountDownLatch started, CountDownLatch gate) {
    return () -> {
      started.countDown();
      gate.await();
    };
  }

  // --- lane assignment ----------------------------------------------------------------------

  @Test
  void laneIsFnv1a32OfTheUtf8BytesModuloWorkersUnsigned() {
    // Published FNV-1a 32-bit test vectors.
    assertThat(CaptureDispatcher.fnv1a32("")).isEqualTo(0x811c9dc5);
    assertThat(CaptureDispatcher.fnv1a32("a")).isEqualTo(0xe40c292c);
    assertThat(CaptureDispatcher.fnv1a32("foobar")).isEqualTo(0xbf9cf968);
    // "a" hashes to a negative int: the modulo must be unsigned.
    assertThat(CaptureDispatcher.lane("a", 3)).isEqualTo((int) (0xe40c292cL % 3));
    assertThat(CaptureDispatcher.lane("a", 3)).isBetween(0, 2);
    for (String s :
        List.of(
            "orders",
            "$dlq/orders",
            "ünïcödé/κλειδί",
            "emoji-\uD83D\uDE00",
            "lone-\uD83D-surrogate",
            "tail-\uDE00",
            "中文队列")) {
      assertThat(CaptureDispatcher.fnv1a32(s))
          .as("hash of %s equals FNV-1a over String.getBytes(UTF_8)", s)
          .isEqualTo(CaptureDispatcher.fnv1a32Reference(s));
      int expected = Integer.remainderUnsigned(CaptureDispatcher.fnv1a32Reference(s), 4);
      assertThat(CaptureDispatcher.lane(s, 4)).isEqualTo(expected);
    }
    assertThat(new String("é".getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8))
        .isEqualTo("é");
  }

  @Test
  void jobsOfOneQueueRunInEnqueueOrder() {
    CaptureDispatcher d = dispatcher(4, 2000, DRAIN);
    d.start();
    List<Integer> ran = Collections.synchronizedList(new ArrayList<>());
    for (int i = 0; i < 1000; i++) {
      int n = i;
      assertThat(d.enqueue("orders", () -> ran.add(n))).isTrue();
    }
    assertThat(d.stop()).isTrue();
    assertThat(ran).hasSize(1000).isSorted();
    assertThat(d.dropped()).isZero();
  }

  // --- bounded lanes: drop newest -----------------------------------------------------------

  @Test
  void fullCaptureLaneDropsNewestAndCounts() throws Exception {
    CaptureDispatcher d = dispatcher(1, 4, DRAIN);
    d.start();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch gate = gate();
    List<Integer> ran = Collections.synchronizedList(new ArrayList<>());
    d.enqueue(
        "q",
        () -> {
          stuck(started, gate).run();
          ran.add(0);
        });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    List<Boolean> accepted = new ArrayList<>();
    for (int i = 1; i <= 9; i++) {
      int n = i;
      accepted.add(d.enqueue("q", () -> ran.add(n)));
    }
    // Lane depth 4: jobs 1..4 are kept, the newer 5..9 are dropped (never the older ones).
    assertThat(accepted).containsExactly(true, true, true, true, false, false, false, false, false);
    assertThat(d.dropped()).isEqualTo(5);
    gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> ran.size() == 5);
    assertThat(ran).containsExactly(0, 1, 2, 3, 4); // a gap-free prefix
    assertThat(d.stop()).isTrue();
    assertThat(d.dropped()).isEqualTo(5);
    assertThat(d.failures()).isZero();
  }

  @Test
  void stalledLaneNeverBlocksEnqueueNorOtherLanes() throws Exception {
    CaptureDispatcher d = dispatcher(2, 8, DRAIN);
    d.start();
    String stalled = "stalled";
    String other = otherLaneThan(stalled, 2);
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch gate = gate();
    d.enqueue(stalled, stuck(started, gate));
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

    // The publisher's enqueues all return although the lane's worker is stuck: overflow drops.
    CompletableFuture<Void> publisher =
        CompletableFuture.runAsync(
            () -> {
              for (int i = 0; i < 10_000; i++) {
                d.enqueue(stalled, () -> {});
              }
            },
            executor);
    publisher.get(10, TimeUnit.SECONDS);
    assertThat(d.dropped()).isEqualTo(10_000 - 8);

    // The other lane keeps working meanwhile.
    AtomicLong otherRan = new AtomicLong();
    for (int round = 1; round <= 3; round++) {
      for (int i = 0; i < 8; i++) { // at most the lane depth per round: nothing is dropped
        assertThat(d.enqueue(other, otherRan::incrementAndGet)).isTrue();
      }
      long expected = 8L * round;
      await().atMost(Duration.ofSeconds(10)).until(() -> otherRan.get() == expected);
    }
    assertThat(d.dropped()).isEqualTo(10_000 - 8);
    gate.countDown();
    assertThat(d.stop()).isTrue();
  }

  // --- stop ---------------------------------------------------------------------------------

  @Test
  void stopDrainsAcceptedJobsAndRefusesLaterOnesAsDropped() {
    CaptureDispatcher d = dispatcher(2, 100, DRAIN);
    d.start();
    AtomicLong ran = new AtomicLong();
    for (int i = 0; i < 50; i++) {
      d.enqueue("q" + i, ran::incrementAndGet);
    }
    assertThat(d.stop()).isTrue();
    assertThat(ran.get()).isEqualTo(50);
    assertThat(d.enqueue("q1", ran::incrementAndGet)).isFalse();
    assertThat(d.dropped()).isEqualTo(1);
    assertThat(ran.get()).isEqualTo(50);
    assertThat(d.liveWorkers()).isZero();
  }

  @Test
  void stopBeforeStartCountsWaitingJobsAsDropped() {
    CaptureDispatcher d = dispatcher(2, 100, DRAIN);
    AtomicLong ran = new AtomicLong();
    for (int i = 0; i < 7; i++) {
      assertThat(d.enqueue("q" + i, ran::incrementAndGet)).isTrue();
    }
    assertThat(d.stop()).isTrue();
    assertThat(ran.get()).isZero();
    assertThat(d.dropped()).isEqualTo(7);
  }

  @Test
  void stopWithAWorkerStuckReportsNotQuiescedAndSweepsLeftoversAsDropped() throws Exception {
    CaptureDispatcher d = dispatcher(1, 10, Duration.ofMillis(200));
    d.start();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch gate = gate();
    AtomicBoolean stuckFinished = new AtomicBoolean();
    d.enqueue(
        "q",
        () -> {
          stuck(started, gate).run();
          stuckFinished.set(true);
        });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    AtomicLong ran = new AtomicLong();
    for (int i = 0; i < 5; i++) {
      d.enqueue("q", ran::incrementAndGet);
    }

    assertThat(d.stop()).isFalse();
    assertThat(d.liveWorkers()).isEqualTo(1);
    // The five waiting jobs are dropped; the one the worker is inside is not counted.
    assertThat(d.dropped()).isEqualTo(5);

    gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> d.liveWorkers() == 0);
    assertThat(stuckFinished).isTrue();
    assertThat(ran.get()).isZero();
    assertThat(d.stop()).isTrue(); // a second stop finds the worker gone
    assertThat(d.dropped()).isEqualTo(5);
  }

  @Test
  void workerDropsJobsTakenAfterTheDrainDeadline() throws Exception {
    AtomicLong nanos = new AtomicLong();
    CaptureDispatcher d =
        new CaptureDispatcher("test", 1, 10, Duration.ofSeconds(30), clock, nanos::get);
    dispatchers.add(d);
    d.start();
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch gate = gate();
    d.enqueue("q", stuck(started, gate));
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    AtomicLong ran = new AtomicLong();
    for (int i = 0; i < 3; i++) {
      d.enqueue("q", ran::incrementAndGet);
    }
    CompletableFuture<Boolean> stop = CompletableFuture.supplyAsync(d::stop, executor);
    await().atMost(Duration.ofSeconds(10)).until(d::isStopping);
    long droppedBefore = d.dropped();
    nanos.addAndGet(Duration.ofSeconds(31).toNanos()); // the drain deadline passes
    gate.countDown();
    assertThat(stop.get(10, TimeUnit.SECONDS)).isTrue();
    assertThat(ran.get()).isZero();
    assertThat(d.dropped() - droppedBefore).isEqualTo(3);
  }

  @Test
  void jobFailureIsCountedAndTheLaneGoesOn() {
    CaptureDispatcher d = dispatcher(1, 10, DRAIN);
    d.start();
    AtomicLong ran = new AtomicLong();
    d.enqueue(
        "q",
        () -> {
          throw new IllegalStateException("append failed");
        });
    d.enqueue("q", ran::incrementAndGet);
    assertThat(d.stop()).isTrue();
    assertThat(d.failures()).isEqualTo(1);
    assertThat(ran.get()).isEqualTo(1);
    d.recordFailure();
    assertThat(d.failures()).isEqualTo(2);
  }

  @Test
  void everyJobIsRunFailedOrDroppedWhenEnqueuesRaceStop() throws Exception {
    CaptureDispatcher d = dispatcher(4, 64, DRAIN);
    d.start();
    int publishers = 4;
    AtomicLong attempted = new AtomicLong();
    AtomicLong succeeded = new AtomicLong();
    AtomicBoolean stopped = new AtomicBoolean();
    AtomicLong acceptedAfterStop = new AtomicLong();
    CountDownLatch running = new CountDownLatch(publishers);
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (int p = 0; p < publishers; p++) {
      int id = p;
      futures.add(
          CompletableFuture.runAsync(
              () -> {
                running.countDown();
                for (long i = 0; ; i++) {
                  boolean wasStopped = stopped.get();
                  attempted.incrementAndGet();
                  long n = i;
                  boolean ok =
                      d.enqueue(
                          "q" + (id * 31 + n % 17),
                          () -> {
                            if (n % 7 == 0) {
                              throw new IllegalStateException("store failure " + n);
                            }
                            succeeded.incrementAndGet();
                          });
                  if (wasStopped) {
                    if (ok) {
                      acceptedAfterStop.incrementAndGet();
                    }
                    return;
                  }
                }
              },
              executor));
    }
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> attempted.get() > 20_000);
    assertThat(d.stop()).isTrue();
    stopped.set(true);
    CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

    assertThat(acceptedAfterStop.get()).as("jobs accepted after stop returned").isZero();
    assertThat(succeeded.get() + d.failures() + d.dropped())
        .as("run + failed + dropped == attempted")
        .isEqualTo(attempted.get());
    assertThat(d.failures()).isPositive();
  }

  @Test
  void dropLogIsRateLimitedToOneLinePerTenSeconds() {
    DropLogLimiter limiter = new DropLogLimiter(clock, 10_000);
    assertThat(limiter.tryAcquire()).isTrue();
    assertThat(limiter.tryAcquire()).isFalse();
    clock.advance(Duration.ofMillis(9_999));
    assertThat(limiter.tryAcquire()).isFalse();
    clock.advance(Duration.ofMillis(1));
    assertThat(limiter.tryAcquire()).isTrue();
    assertThat(limiter.tryAcquire()).isFalse();
  }

  @Test
  void workersAreNamedDaemonThreads() {
    CaptureDispatcher d = new CaptureDispatcher("named", 3, 4, DRAIN, clock);
    dispatchers.add(d);
    d.start();
    List<Thread> workers =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith("named-capture-"))
            .toList();
    assertThat(workers).hasSize(3).allMatch(Thread::isDaemon);
    assertThat(d.stop()).isTrue();
  }

  private static String otherLaneThan(String queue, int lanes) {
    int lane = CaptureDispatcher.lane(queue, lanes);
    for (int i = 0; ; i++) {
      String candidate = "other-" + i;
      if (CaptureDispatcher.lane(candidate, lanes) != lane) {
        return candidate;
      }
    }
  }
}
