package io.queuebridge.core.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.errors.JobHandlerException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link MemoryJobDriver}: the shared job-driver rules ({@link JobDriverBehaviourTest}) plus what
 * only the memory driver does — dropping failed, rejected and stopped jobs, a driver-wide retry
 * delay, due-time ordering of retries, promotion by consumers only (BEHAVIOUR J-SETTLE, J-DELAY,
 * J-STOP).
 */
class MemoryJobDriverTest extends JobDriverBehaviourTest<MemoryJobDriver> {

  @Override
  protected MemoryJobDriver newDriver() {
    return MemoryJobDriver.builder().clock(clock).logger(logger).build();
  }

  @Override
  protected String messagingSystem() {
    return "memory";
  }

  @Override
  protected int undelivered(String queue) {
    return driver.size(queue);
  }

  @Override
  protected void advance(Duration d) {
    clock.advance(d);
    driver.recheckDueRetries();
  }

  @Nested
  class MemoryOnly {
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
    void rejectAndFailDropTheJob() throws Exception {
      BlockingQueue<Delivery> held = new LinkedBlockingQueue<>();
      Semaphore release = new Semaphore(0);
      driver.dispatch(job("work", "a"));
      consume("work", holding(held, release));
      Delivery a = take(held);
      a.reject();
      release.release();
      driver.dispatch(job("work", "b"));
      Delivery b = take(held);
      IllegalStateException why = new IllegalStateException("why");
      b.fail(why);
      release.release();
      assertThat(driver.size("work")).isZero();
      assertThat(logger.events).anyMatch(e -> e.error() == why);
    }

    @Test
    void aFailedHandlersJobIsDropped() throws Exception {
      driver.dispatch(job("work", "a"));
      Running c =
          consume(
              "work",
              d -> {
                throw new IllegalStateException("boom");
              });
      assertThat(c.end()).isInstanceOf(JobHandlerException.class);
      assertThat(driver.size("work")).isZero();
    }

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
    void stopOnAnInterruptedThreadStillDiscardsTheJobs() throws Exception {
      driver.dispatch(job("work", "a"));
      Thread.currentThread().interrupt();
      try {
        driver.stop(WAIT);
      } catch (InterruptedException expected) {
        // the driver is stopped all the same
      }
      assertThat(driver.size("work")).isZero();
    }
  }
}
