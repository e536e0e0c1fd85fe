package io.queuebridge.core.job;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.errors.DeliveryAlreadySettledException;
import io.queuebridge.core.errors.DeliveryUnsettledException;
import io.queuebridge.core.errors.DriverClosedException;
import io.queuebridge.core.errors.InvalidHandlerException;
import io.queuebridge.core.errors.InvalidQueueException;
import io.queuebridge.core.errors.JobHandlerException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/**
 * The rules of BEHAVIOUR J-DRIVER that every {@link JobDriver} keeps, one nested class per rule
 * (J-START … J-STOP), run against each driver by a subclass ({@link MemoryJobDriverTest}, {@link
 * QueueJobDriverTest}); driver-specific rules (what happens to a failed, rejected or stopped job,
 * retry ordering, delay defaults) are pinned in the subclasses.
 */
abstract class JobDriverBehaviourTest<D extends JobDriver> {
  protected static final Duration WAIT = Duration.ofSeconds(10);

  protected final MutableClock clock = new MutableClock(Instant.parse("2024-01-01T00:00:00Z"));
  protected final RecordingLogger logger = new RecordingLogger();
  protected final List<Thread> threads = new CopyOnWriteArrayList<>();
  protected D driver;

  /** A new, open driver on {@link #clock} logging to {@link #logger}. */
  protected abstract D newDriver();

  /** What {@link JobDriver#messagingSystem()} answers. */
  protected abstract String messagingSystem();

  /**
   * Jobs dispatched to {@code queue} and not yet handed to any handler (plus, for the memory
   * driver, delayed retries). Used only where both drivers agree.
   */
  protected abstract int undelivered(String queue);

  /** Lets {@code d} pass for delayed retries and makes waiting consumers notice. */
  protected abstract void advance(Duration d);

  /** Releases what the driver runs on, after the driver stopped and consumers ended. */
  protected void closeResources() {}

  @BeforeEach
  void openDriver() {
    driver = newDriver();
  }

  @AfterEach
  void stopEverything() throws InterruptedException {
    driver.stop(Duration.ZERO);
    for (Thread t : threads) {
      t.interrupt();
      t.join(WAIT.toMillis());
    }
    closeResources();
  }

  /** Whether {@code t} is parked waiting for work (with or without a timeout). */
  protected static boolean isWaiting(Thread t) {
    Thread.State s = t.getState();
    return s == Thread.State.WAITING || s == Thread.State.TIMED_WAITING;
  }

  /** A consume call running on its own thread. */
  record Running(Thread thread, CompletableFuture<Throwable> outcome) {
    /** What consume ended with (it never returns normally). */
    Throwable end() throws Exception {
      return outcome.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }
  }

  protected Running consume(JobDriver d, String queue, JobHandler handler) {
    CompletableFuture<Throwable> outcome = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                d.consume(queue, handler);
                outcome.complete(new AssertionError("consume returned normally"));
              } catch (Throwable e) {
                outcome.complete(e);
              }
            },
            "consumer-" + queue);
    threads.add(t);
    t.start();
    return new Running(t, outcome);
  }

  protected Running consume(String queue, JobHandler handler) {
    return consume(driver, queue, handler);
  }

  /** A handler that hands each delivery to the test and returns once the test releases it. */
  protected static JobHandler holding(BlockingQueue<Delivery> out, Semaphore release) {
    return d -> {
      out.add(d);
      release.acquireUninterruptibly();
    };
  }

  protected static Delivery take(BlockingQueue<Delivery> q) throws InterruptedException {
    Delivery d = q.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(d).as("a delivery within %s", WAIT).isNotNull();
    return d;
  }

  protected static JobMessage job(String queue, String name) {
    return JobMessage.of(queue, name, name.getBytes(UTF_8));
  }

  protected static String text(Delivery d) {
    return new String(d.message().payload(), UTF_8);
  }

  @Nested
  class JStart {
    @Test
    void startOnAnOpenDriverSucceedsAndChangesNothing() throws Exception {
      driver.start();
      driver.start();
      assertThat(driver.messagingSystem()).isEqualTo(messagingSystem());
      driver.dispatch(job("work", "a"));
      assertThat(undelivered("work")).isEqualTo(1);
    }

    @Test
    void startAfterStopThrowsDriverClosed() throws Exception {
      driver.stop(Duration.ZERO);
      assertThatThrownBy(driver::start)
          .isInstanceOf(DriverClosedException.class)
          .hasMessage(messagingSystem() + " job driver is closed");
    }

    @Test
    void startOnAnInterruptedThreadThrowsInterruptedBeforeCheckingClosure() throws Exception {
      driver.stop(Duration.ZERO);
      Thread.currentThread().interrupt();
      assertThatThrownBy(driver::start).isInstanceOf(InterruptedException.class);
      assertThat(Thread.currentThread().isInterrupted()).isFalse();
    }
  }

  @Nested
  class JDisp {
    @Test
    void dispatchCopiesPayloadAndMetadataSoLaterCallerChangesAreInvisible() throws Exception {
      byte[] payload = "hello".getBytes(UTF_8);
      Map<String, String> metadata = new HashMap<>(Map.of("k", "v"));
      JobMessage.Builder builder = JobMessage.builder("work").payload(payload).metadata(metadata);
      JobMessage message = builder.build();
      driver.dispatch(message);
      payload[0] = 'J';
      metadata.put("k", "changed");
      builder.metadata("k", "changed-too").payload(new byte[] {1});

      BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
      consume(
          "work",
          d -> {
            got.add(d);
            d.acknowledge();
          });
      Delivery d = take(got);
      assertThat(text(d)).isEqualTo("hello");
      assertThat(d.message().metadata()).containsExactly(Map.entry("k", "v"));
    }

    @Test
    void dispatchGeneratesAUniqueIdWhenEmptyAndKeepsAGivenOne() throws Exception {
      String a = driver.dispatch(job("work", "a"));
      String b = driver.dispatch(job("work", "b"));
      String c = driver.dispatch(job("work", "c").toBuilder().id("mine").build());
      assertThat(a).isNotEmpty().isNotEqualTo(b);
      assertThat(c).isEqualTo("mine");

      BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
      consume(
          "work",
          d -> {
            got.add(d);
            d.acknowledge();
          });
      assertThat(List.of(take(got), take(got), take(got)))
          .extracting(d -> d.message().id())
          .containsExactly(a, b, "mine");
    }

    @Test
    void dispatchIgnoresTheInputAttemptsCount() throws Exception {
      driver.dispatch(job("work", "a").toBuilder().attempts(7).build());
      BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
      consume(
          "work",
          d -> {
            got.add(d);
            d.acknowledge();
          });
      assertThat(take(got).message().attempts()).isEqualTo(1);
    }

    @Test
    void dispatchRefusesAnEmptyQueueAndEnqueuesNothing() {
      assertThatThrownBy(() -> driver.dispatch(job("", "a")))
          .isInstanceOf(InvalidQueueException.class)
          .hasMessageContaining("''");
      assertThat(undelivered("")).isZero();
    }

    @Test
    void dispatchAfterStopThrowsDriverClosedAndEnqueuesNothing() throws Exception {
      driver.stop(Duration.ZERO);
      assertThatThrownBy(() -> driver.dispatch(job("work", "a")))
          .isInstanceOf(DriverClosedException.class);
      assertThat(undelivered("work")).isZero();
    }

    @Test
    void dispatchOnAnInterruptedThreadThrowsInterruptedEvenWhenClosed() throws Exception {
      driver.stop(Duration.ZERO);
      Thread.currentThread().interrupt();
      assertThatThrownBy(() -> driver.dispatch(job("work", "a")))
          .isInstanceOf(InterruptedException.class);
      assertThat(undelivered("work")).isZero();
    }

    @Test
    void dispatchWakesAWaitingConsumer() throws Exception {
      BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
      Running c =
          consume(
              "work",
              d -> {
                got.add(d);
                d.acknowledge();
              });
      await().atMost(WAIT).until(() -> isWaiting(c.thread()));
      driver.dispatch(job("work", "late"));
      assertThat(text(take(got))).isEqualTo("late");
    }
  }

  @Nested
  class JCons {
    @Test
    void consumeChecksInterruptionThenQueueThenHandlerThenClosure() throws Exception {
      driver.stop(Duration.ZERO);
      Thread.currentThread().interrupt();
      assertThatThrownBy(() -> driver.consume("", null)).isInstanceOf(InterruptedException.class);
      assertThatThrownBy(() -> driver.consume("", null)).isInstanceOf(InvalidQueueException.class);
      assertThatThrownBy(() -> driver.consume(null, d -> {}))
          .isInstanceOf(InvalidQueueException.class);
      assertThatThrownBy(() -> driver.consume("work", null))
          .isInstanceOf(InvalidHandlerException.class)
          .hasMessageContaining("'work'");
      assertThatThrownBy(() -> driver.consume("work", d -> {}))
          .isInstanceOf(DriverClosedException.class);
    }

    @Test
    void competingConsumersHandEachJobToExactlyOneHandler() throws Exception {
      int jobs = 500;
      Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
      JobHandler handler =
          d -> {
            handled.computeIfAbsent(d.message().id(), k -> new AtomicInteger()).incrementAndGet();
            d.acknowledge();
          };
      for (int i = 0; i < 4; i++) {
        consume("work", handler);
      }
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < jobs; i++) {
        ids.add(driver.dispatch(job("work", "j" + i)));
      }
      await().atMost(WAIT).until(() -> handled.size() == jobs);
      assertThat(handled.keySet()).containsExactlyInAnyOrderElementsOf(ids);
      assertThat(handled.values()).allMatch(n -> n.get() == 1);
      assertThat(undelivered("work")).isZero();
    }

    @Test
    void eachReservationIncrementsAttempts() throws Exception {
      driver.dispatch(job("work", "a"));
      List<Integer> attempts = new CopyOnWriteArrayList<>();
      consume(
          "work",
          d -> {
            attempts.add(d.message().attempts());
            if (d.message().attempts() < 3) {
              d.retry(Duration.ofMillis(-1));
            } else {
              d.acknowledge();
            }
          });
      await().atMost(WAIT).until(() -> attempts.size() == 3);
      assertThat(attempts).containsExactly(1, 2, 3);
    }

    @Test
    void interruptionEndsConsumeAndLeavesUnadmittedJobsForOthers() throws Exception {
      driver.dispatch(job("work", "a"));
      driver.dispatch(job("work", "b"));
      List<String> first = new CopyOnWriteArrayList<>();
      Running c =
          consume(
              "work",
              d -> {
                d.acknowledge();
                first.add(text(d));
                Thread.currentThread().interrupt(); // cancel after settling, like "defer cancel()"
              });
      assertThat(c.end()).isInstanceOf(InterruptedException.class);
      assertThat(first).containsExactly("a");
      assertThat(undelivered("work")).isEqualTo(1);

      BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
      consume(
          "work",
          d -> {
            got.add(d);
            d.acknowledge();
          });
      assertThat(text(take(got))).isEqualTo("b");
    }

    @Test
    void interruptionDoesNotRevokeAnAdmittedDelivery() throws Exception {
      driver.dispatch(job("work", "a"));
      Semaphore release = new Semaphore(0);
      CountDownLatch inHandler = new CountDownLatch(1);
      AtomicBoolean sawCancel = new AtomicBoolean();
      Running c =
          consume(
              "work",
              d -> {
                inHandler.countDown();
                release.acquireUninterruptibly();
                sawCancel.set(Thread.interrupted());
                d.acknowledge(); // still the handler's to settle
                Thread.currentThread().interrupt();
              });
      assertThat(inHandler.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      c.thread().interrupt();
      assertThat(undelivered("work")).as("not requeued by the cancellation").isZero();
      release.release();
      assertThat(c.end()).isInstanceOf(InterruptedException.class);
      assertThat(sawCancel).isTrue();
      assertThat(undelivered("work")).isZero();
    }

    @Test
    void shutdownIsCheckedBeforeEachReservation() throws Exception {
      driver.dispatch(job("work", "a"));
      driver.dispatch(job("work", "b"));
      List<String> handled = new CopyOnWriteArrayList<>();
      Running c =
          consume(
              "work",
              d -> {
                handled.add(text(d));
                assertThat(driver.stop(Duration.ZERO)).isFalse(); // this consumer is still active
                d.acknowledge();
              });
      assertThat(c.end()).isInstanceOf(DriverClosedException.class);
      assertThat(handled).containsExactly("a");
    }
  }

  @Nested
  class JHand {
    @Test
    void aThrowingHandlerIsLoggedItsDeliveryFailedAndConsumeEndsWithTheError() throws Exception {
      driver.dispatch(job("work", "a"));
      driver.dispatch(job("work", "b"));
      IllegalStateException boom = new IllegalStateException("boom");
      BlockingQueue<Delivery> seen = new LinkedBlockingQueue<>();
      Running c =
          consume(
              "work",
              d -> {
                seen.add(d);
                throw boom;
              });
      Throwable end = c.end();
      assertThat(end).isInstanceOf(JobHandlerException.class).hasCause(boom);
      Delivery d = take(seen);
      assertThatThrownBy(d::acknowledge)
          .as("the driver failed it")
          .isInstanceOf(DeliveryAlreadySettledException.class);
      assertThat(undelivered("work")).as("b is still there for others").isEqualTo(1);
      assertThat(logger.events)
          .anyMatch(e -> e.level() == Level.WARN && e.error() == boom)
          .anyMatch(e -> e.message().contains("handler failed"));
    }

    @Test
    void aHandlerThatSettledBeforeThrowingKeepsItsSettlement() throws Exception {
      driver.dispatch(job("work", "a"));
      Running c =
          consume(
              "work",
              d -> {
                d.retry(Duration.ofMillis(-1));
                throw new IllegalStateException("after retry");
              });
      assertThat(c.end()).isInstanceOf(JobHandlerException.class);
      BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
      consume(
          "work",
          d -> {
            got.add(d);
            d.acknowledge();
          });
      assertThat(take(got).message().attempts()).as("the retry stands").isEqualTo(2);
    }

    @Test
    void aHandlerThrowingInterruptedEndsConsumeWithInterruption() throws Exception {
      driver.dispatch(job("work", "a"));
      Running c =
          consume(
              "work",
              d -> {
                throw new InterruptedException("handler cancelled");
              });
      assertThat(c.end()).isInstanceOf(InterruptedException.class).hasMessage("handler cancelled");
      assertThat(undelivered("work")).isZero();
    }

    @Test
    void aHandlerReturningUnsettledFailsTheDeliveryAndEndsWithDeliveryUnsettled() throws Exception {
      String id = driver.dispatch(job("work", "a"));
      BlockingQueue<Delivery> seen = new LinkedBlockingQueue<>();
      Running c = consume("work", seen::add);
      assertThat(c.end())
          .isInstanceOf(DeliveryUnsettledException.class)
          .hasMessageContaining(id)
          .hasMessageContaining("'work'");
      assertThatThrownBy(take(seen)::acknowledge)
          .isInstanceOf(DeliveryAlreadySettledException.class);
      assertThat(undelivered("work")).isZero();
      assertThat(logger.events)
          .anyMatch(e -> e.error() instanceof DeliveryUnsettledException)
          .anyMatch(e -> e.message().contains("not settled"));
    }
  }

  @Nested
  class JSettle {
    private final BlockingQueue<Delivery> held = new LinkedBlockingQueue<>();
    private final Semaphore release = new Semaphore(0);

    @AfterEach
    void releaseHeldHandlers() {
      release.release(1_000); // held handlers wait uninterruptibly: let them return
    }

    private Delivery hold(String name) throws Exception {
      driver.dispatch(job("work", name));
      if (threads.isEmpty()) {
        consume("work", holding(held, release));
      }
      return take(held);
    }

    @Test
    void aSecondSettlementOfAnyKindThrowsDeliverySettled() throws Exception {
      Delivery d = hold("a");
      d.acknowledge();
      assertThatThrownBy(d::acknowledge).isInstanceOf(DeliveryAlreadySettledException.class);
      assertThatThrownBy(d::reject).isInstanceOf(DeliveryAlreadySettledException.class);
      assertThatThrownBy(() -> d.fail(null)).isInstanceOf(DeliveryAlreadySettledException.class);
      assertThatThrownBy(() -> d.retry(Duration.ZERO))
          .isInstanceOf(DeliveryAlreadySettledException.class);
      assertThat(undelivered("work")).isZero();
      release.release();
    }

    @Test
    void racingSettlementsLetExactlyOneWin() throws Exception {
      Delivery d = hold("a");
      int racers = 8;
      CyclicBarrier start = new CyclicBarrier(racers);
      AtomicInteger won = new AtomicInteger();
      AtomicInteger refused = new AtomicInteger();
      List<Thread> ts = new ArrayList<>();
      for (int i = 0; i < racers; i++) {
        int n = i;
        Thread t =
            new Thread(
                () -> {
                  try {
                    start.await();
                    if (n % 2 == 0) {
                      d.acknowledge();
                    } else {
                      d.reject();
                    }
                    won.incrementAndGet();
                  } catch (DeliveryAlreadySettledException e) {
                    refused.incrementAndGet();
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                });
        ts.add(t);
        t.start();
      }
      for (Thread t : ts) {
        t.join(WAIT.toMillis());
      }
      assertThat(won).hasValue(1);
      assertThat(refused).hasValue(racers - 1);
      release.release();
    }

    @Test
    void anInterruptedSettlementLeavesTheDeliveryUnsettled() throws Exception {
      Delivery d = hold("a");
      Thread.currentThread().interrupt();
      assertThatThrownBy(d::acknowledge).isInstanceOf(InterruptedException.class);
      d.acknowledge();
      release.release();
    }

    @Test
    void aFailingSettlementActionReturnsTheDeliveryToUnsettled() throws Exception {
      Delivery d = hold("a");
      driver.stop(Duration.ZERO);
      assertThatThrownBy(() -> d.retry(Duration.ofSeconds(1)))
          .isInstanceOf(DriverClosedException.class);
      d.acknowledge();
      release.release();
    }

    @Test
    void retryWithNoEffectiveDelayRequeuesAtTheTailAndKeepsAttempts() throws Exception {
      Delivery a = hold("a");
      driver.dispatch(job("work", "b"));
      a.retry(Duration.ofMillis(-1)); // no effective delay: behind b, which was waiting first
      release.release();
      Delivery b = take(held);
      assertThat(text(b)).isEqualTo("b");
      b.acknowledge();
      release.release();
      Delivery again = take(held);
      assertThat(text(again)).isEqualTo("a");
      assertThat(again.message().attempts()).isEqualTo(2);
      again.acknowledge();
      release.release();
    }

    @Test
    void messageIsACopy() throws Exception {
      Delivery d = hold("a");
      d.message().payload()[0] = 'X';
      assertThat(text(d)).isEqualTo("a");
      assertThatThrownBy(() -> d.message().metadata().put("k", "v"))
          .isInstanceOf(UnsupportedOperationException.class);
      d.acknowledge();
      release.release();
    }
  }

  @Nested
  class JDelay {
    @Test
    void aDelayedDispatchReachesNoConsumerBeforeItsDelayAndComesOutEarliestFirst()
        throws Exception {
      driver.dispatch(job("work", "in-2h"), Duration.ofHours(2));
      driver.dispatch(job("work", "in-1h"), Duration.ofHours(1));
      driver.dispatch(job("work", "now"));
      List<String> handled = new CopyOnWriteArrayList<>();
      Running c =
          consume(
              "work",
              d -> {
                handled.add(text(d));
                d.acknowledge();
              });
      await().atMost(WAIT).until(() -> handled.size() == 1 && isWaiting(c.thread()));
      assertThat(handled).containsExactly("now");
      advance(Duration.ofMinutes(59));
      assertThat(undelivered("work")).isEqualTo(2);
      assertThat(handled).as("nothing is due yet").containsExactly("now");
      advance(Duration.ofHours(2));
      await().atMost(WAIT).until(() -> handled.size() == 3);
      assertThat(handled).containsExactly("now", "in-1h", "in-2h");
      assertThatThrownBy(() -> driver.dispatch(job("work", "x"), Duration.ofSeconds(-1)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("PT-1S");
    }

    @Test
    void aConsumerWaitingForADueRetryPicksItUpOnceItFallsDue() throws Exception {
      driver.dispatch(job("work", "a"));
      List<Integer> attempts = new CopyOnWriteArrayList<>();
      CountDownLatch retried = new CountDownLatch(1);
      Running c =
          consume(
              "work",
              d -> {
                attempts.add(d.message().attempts());
                if (d.message().attempts() == 1) {
                  d.retry(Duration.ofHours(1));
                  retried.countDown();
                } else {
                  d.acknowledge();
                }
              });
      assertThat(retried.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      await().atMost(WAIT).until(() -> isWaiting(c.thread()));
      assertThat(attempts).containsExactly(1);
      advance(Duration.ofHours(1));
      await().atMost(WAIT).until(() -> attempts.size() == 2);
      assertThat(attempts).containsExactly(1, 2);
    }
  }

  @Nested
  class JStop {
    @Test
    void stopIsIdempotentAndClosesEvenWithAnExpiredDeadline() throws Exception {
      assertThat(driver.stop(Duration.ofSeconds(-1))).isTrue();
      assertThat(driver.stop(Duration.ZERO)).isTrue();
      assertThatThrownBy(driver::start).isInstanceOf(DriverClosedException.class);
      assertThatThrownBy(() -> driver.dispatch(job("work", "a")))
          .isInstanceOf(DriverClosedException.class);
      assertThatThrownBy(() -> driver.consume("work", d -> {}))
          .isInstanceOf(DriverClosedException.class);
    }

    @Test
    void stopWakesWaitingConsumersWhichEndWithDriverClosed() throws Exception {
      Running a = consume("work", d -> d.acknowledge());
      Running b = consume("other", d -> d.acknowledge());
      await().atMost(WAIT).until(() -> isWaiting(a.thread()) && isWaiting(b.thread()));
      assertThat(driver.stop(WAIT)).isTrue();
      assertThat(a.end()).isInstanceOf(DriverClosedException.class);
      assertThat(b.end()).isInstanceOf(DriverClosedException.class);
    }

    @Test
    void stopWaitsForRunningHandlersUntilTheDeadlineAndNeverInterruptsThem() throws Exception {
      driver.dispatch(job("work", "a"));
      BlockingQueue<Delivery> held = new LinkedBlockingQueue<>();
      Semaphore release = new Semaphore(0);
      AtomicBoolean interrupted = new AtomicBoolean();
      Running c =
          consume(
              "work",
              d -> {
                held.add(d);
                release.acquireUninterruptibly();
                interrupted.set(Thread.currentThread().isInterrupted());
                d.acknowledge();
              });
      Delivery d = take(held);
      assertThat(driver.stop(Duration.ZERO)).as("handler still running").isFalse();
      assertThatThrownBy(() -> driver.dispatch(job("work", "b")))
          .as("released although the deadline had passed")
          .isInstanceOf(DriverClosedException.class);

      CompletableFuture<Boolean> secondStop = new CompletableFuture<>();
      Thread stopper =
          new Thread(
              () -> {
                try {
                  secondStop.complete(driver.stop(WAIT));
                } catch (Throwable e) {
                  secondStop.completeExceptionally(e);
                }
              });
      threads.add(stopper);
      stopper.start();
      await().atMost(WAIT).until(() -> stopper.getState() == Thread.State.TIMED_WAITING);
      assertThat(secondStop).isNotDone();
      release.release();
      assertThat(secondStop.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      assertThat(c.end()).isInstanceOf(DriverClosedException.class);
      assertThat(interrupted).isFalse();
      assertThatThrownBy(d::acknowledge).isInstanceOf(DeliveryAlreadySettledException.class);
    }

    @Test
    void stopOnAnInterruptedThreadStillStopsTheDriver() throws Exception {
      driver.dispatch(job("work", "a"));
      Thread.currentThread().interrupt();
      assertThatThrownBy(() -> driver.stop(WAIT)).isInstanceOf(InterruptedException.class);
      assertThatThrownBy(driver::start).isInstanceOf(DriverClosedException.class);
    }
  }
}
