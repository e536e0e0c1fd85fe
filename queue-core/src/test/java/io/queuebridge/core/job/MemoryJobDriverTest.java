package io.queuebridge.core.job;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/** The rules of SEMANTICS B §5, one nested class per rule ({@code J-START} … {@code J-STOP}). */
class MemoryJobDriverTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final TestClock clock = new TestClock(Instant.parse("2024-01-01T00:00:00Z"));
  private final RecordingLogger logger = new RecordingLogger();
  private final MemoryJobDriver driver =
      MemoryJobDriver.builder().clock(clock).logger(logger).build();
  private final List<Thread> threads = new CopyOnWriteArrayList<>();

  @AfterEach
  void stopEverything() throws InterruptedException {
    driver.stop(Duration.ZERO);
    for (Thread t : threads) {
      t.interrupt();
      t.join(WAIT.toMillis());
    }
  }

  /** A consume call running on its own thread. */
  record Running(Thread thread, CompletableFuture<Throwable> outcome) {
    /** What consume ended with (it never returns normally). */
    Throwable end() throws Exception {
      return outcome.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }
  }

  private Running consume(MemoryJobDriver d, String queue, JobHandler handler) {
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

  private Running consume(String queue, JobHandler handler) {
    return consume(driver, queue, handler);
  }

  /** A handler that hands each delivery to the test and returns once the test releases it. */
  private static JobHandler holding(BlockingQueue<Delivery> out, Semaphore release) {
    return d -> {
      out.add(d);
      release.acquireUninterruptibly();
    };
  }

  private static Delivery take(BlockingQueue<Delivery> q) throws InterruptedException {
    Delivery d = q.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(d).as("a delivery within %s", WAIT).isNotNull();
    return d;
  }

  private static JobMessage job(String queue, String name) {
    return JobMessage.of(queue, name, name.getBytes(UTF_8));
  }

  private static String text(Delivery d) {
    return new String(d.message().payload(), UTF_8);
  }

  @Nested
  class JStart {
    @Test
    void startOnAnOpenDriverSucceedsAndChangesNothing() throws Exception {
      driver.start();
      driver.start();
      assertThat(driver.messagingSystem()).isEqualTo("memory");
      driver.dispatch(job("work", "a"));
      assertThat(driver.size("work")).isEqualTo(1);
    }

    @Test
    void startAfterStopThrowsDriverClosed() throws Exception {
      driver.stop(Duration.ZERO);
      assertThatThrownBy(driver::start)
          .isInstanceOf(DriverClosedException.class)
          .hasMessage("memory job driver is closed");
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
      assertThat(driver.size("")).isZero();
    }

    @Test
    void dispatchAfterStopThrowsDriverClosedAndEnqueuesNothing() throws Exception {
      driver.stop(Duration.ZERO);
      assertThatThrownBy(() -> driver.dispatch(job("work", "a")))
          .isInstanceOf(DriverClosedException.class);
      assertThat(driver.size("work")).isZero();
    }

    @Test
    void dispatchOnAnInterruptedThreadThrowsInterruptedEvenWhenClosed() throws Exception {
      driver.stop(Duration.ZERO);
      Thread.currentThread().interrupt();
      assertThatThrownBy(() -> driver.dispatch(job("work", "a")))
          .isInstanceOf(InterruptedException.class);
      assertThat(driver.size("work")).isZero();
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
      await().atMost(WAIT).until(() -> c.thread().getState() == Thread.State.WAITING);
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
      assertThat(driver.size("work")).isZero();
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
      assertThat(driver.size("work")).isEqualTo(1);

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
      assertThat(driver.size("work")).as("not requeued by the cancellation").isZero();
      release.release();
      assertThat(c.end()).isInstanceOf(InterruptedException.class);
      assertThat(sawCancel).isTrue();
      assertThat(driver.size("work")).isZero();
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
          .isInstanceOf(DeliverySettledException.class);
      assertThat(driver.size("work")).as("the failed job is dropped, b stays").isEqualTo(1);
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
      assertThat(driver.size("work")).as("the retry stands").isEqualTo(1);
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
      assertThat(driver.size("work")).isZero();
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
      assertThatThrownBy(take(seen)::acknowledge).isInstanceOf(DeliverySettledException.class);
      assertThat(driver.size("work")).isZero();
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
      assertThatThrownBy(d::acknowledge).isInstanceOf(DeliverySettledException.class);
      assertThatThrownBy(d::reject).isInstanceOf(DeliverySettledException.class);
      assertThatThrownBy(() -> d.fail(null)).isInstanceOf(DeliverySettledException.class);
      assertThatThrownBy(() -> d.retry(Duration.ZERO)).isInstanceOf(DeliverySettledException.class);
      assertThat(driver.size("work")).isZero();
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
                  } catch (DeliverySettledException e) {
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
    void retryWithZeroDelayUsesTheDriversRetryDelay() throws Exception {
      MemoryJobDriver delayed =
          MemoryJobDriver.builder().clock(clock).retryDelay(Duration.ofSeconds(30)).build();
      try {
        delayed.dispatch(job("work", "a"));
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        consume(
            delayed,
            "work",
            d -> {
              attempts.add(d.message().attempts());
              if (d.message().attempts() == 1) {
                d.retry(Duration.ZERO);
              } else {
                d.acknowledge();
              }
            });
        await().atMost(WAIT).until(() -> attempts.size() == 1 && delayed.size("work") == 1);
        clock.advance(Duration.ofSeconds(29));
        delayed.recheckDueRetries();
        assertThat(attempts).hasSize(1);
        clock.advance(Duration.ofSeconds(1));
        delayed.recheckDueRetries();
        await().atMost(WAIT).until(() -> attempts.size() == 2);
        assertThat(attempts).containsExactly(1, 2);
      } finally {
        delayed.stop(Duration.ZERO);
      }
    }

    @Test
    void retryWithNoEffectiveDelayRequeuesAtTheTailAndKeepsAttempts() throws Exception {
      Delivery a = hold("a");
      driver.dispatch(job("work", "b"));
      a.retry(Duration.ZERO); // retryDelay is zero: straight to the tail, behind b
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
    void rejectAndFailDropTheJob() throws Exception {
      Delivery a = hold("a");
      a.reject();
      release.release();
      Delivery b = hold("b");
      IllegalStateException why = new IllegalStateException("why");
      b.fail(why);
      release.release();
      assertThat(driver.size("work")).isZero();
      assertThat(logger.events).anyMatch(e -> e.error() == why);
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
    void dueRetriesPromoteByDueTimeThenInRetryCallOrder() throws Exception {
      Map<String, Duration> delays =
          Map.of(
              "a", Duration.ofSeconds(10), "b", Duration.ofSeconds(5), "c", Duration.ofSeconds(10));
      for (String name : List.of("a", "b", "c")) {
        driver.dispatch(job("work", name));
      }
      List<String> second = new CopyOnWriteArrayList<>();
      AtomicInteger retried = new AtomicInteger();
      consume(
          "work",
          d -> {
            if (d.message().attempts() == 1) {
              d.retry(delays.get(text(d)));
              retried.incrementAndGet();
            } else {
              second.add(text(d));
              d.acknowledge();
            }
          });
      await().atMost(WAIT).until(() -> retried.get() == 3);
      clock.advance(Duration.ofSeconds(10));
      driver.recheckDueRetries();
      await().atMost(WAIT).until(() -> second.size() == 3);
      assertThat(second).containsExactly("b", "a", "c");
    }

    @Test
    void promotionAppendsToTheTailAndHappensInConsumersOnly() throws Exception {
      driver.dispatch(job("work", "a"));
      Running first =
          consume(
              "work",
              d -> {
                d.retry(Duration.ofSeconds(5));
                Thread.currentThread().interrupt();
              });
      assertThat(first.end()).isInstanceOf(InterruptedException.class);
      clock.advance(Duration.ofSeconds(5));
      driver.recheckDueRetries(); // "a" is due, but no consumer runs: nothing promotes it yet
      driver.dispatch(job("work", "x"));
      assertThat(driver.size("work")).isEqualTo(2);

      List<String> order = new CopyOnWriteArrayList<>();
      consume(
          "work",
          d -> {
            order.add(text(d));
            d.acknowledge();
          });
      await().atMost(WAIT).until(() -> order.size() == 2);
      assertThat(order).containsExactly("x", "a");
    }

    @Test
    void aConsumerWaitingForADueTimeWakesWhenTheClockIsRechecked() throws Exception {
      driver.dispatch(job("work", "a"));
      List<Integer> attempts = new CopyOnWriteArrayList<>();
      consume(
          "work",
          d -> {
            attempts.add(d.message().attempts());
            if (d.message().attempts() == 1) {
              d.retry(Duration.ofHours(1));
            } else {
              d.acknowledge();
            }
          });
      await().atMost(WAIT).until(() -> attempts.size() == 1 && driver.size("work") == 1);
      clock.advance(Duration.ofHours(1));
      driver.recheckDueRetries();
      await().atMost(WAIT).until(() -> attempts.size() == 2);
      assertThat(driver.size("work")).isZero();
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
    void stopDiscardsQueuedAndDelayedJobs() throws Exception {
      driver.dispatch(job("work", "a"));
      Running c =
          consume(
              "work",
              d -> {
                d.retry(Duration.ofMinutes(1));
                Thread.currentThread().interrupt();
              });
      assertThat(c.end()).isInstanceOf(InterruptedException.class);
      driver.dispatch(job("work", "b"));
      driver.dispatch(job("other", "c"));
      assertThat(driver.size("work")).isEqualTo(2);
      driver.stop(Duration.ZERO);
      assertThat(driver.size("work")).isZero();
      assertThat(driver.size("other")).isZero();
    }

    @Test
    void stopWakesWaitingConsumersWhichEndWithDriverClosed() throws Exception {
      Running a = consume("work", d -> d.acknowledge());
      Running b = consume("other", d -> d.acknowledge());
      await()
          .atMost(WAIT)
          .until(
              () ->
                  a.thread().getState() == Thread.State.WAITING
                      && b.thread().getState() == Thread.State.WAITING);
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
      assertThatThrownBy(d::acknowledge).isInstanceOf(DeliverySettledException.class);
    }

    @Test
    void stopOnAnInterruptedThreadStillStopsTheDriver() throws Exception {
      driver.dispatch(job("work", "a"));
      Thread.currentThread().interrupt();
      assertThatThrownBy(() -> driver.stop(WAIT)).isInstanceOf(InterruptedException.class);
      assertThat(driver.size("work")).isZero();
      assertThatThrownBy(driver::start).isInstanceOf(DriverClosedException.class);
    }
  }
}
