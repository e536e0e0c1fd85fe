package io.queuebridge.core.job;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.ManualScheduler;
import io.queuebridge.core.MutableClock;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.errors.JobHandlerException;
import io.queuebridge.core.errors.MessageNotPendingException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link QueueJobDriver}: the shared job-driver rules ({@link JobDriverBehaviourTest}) over a
 * manager on the memory store, plus what only the durable driver does — jobs outlive a manager,
 * retries follow the queue's retry policy, rejects and exhausted retries dead-letter, late
 * settlements are fenced.
 */
class QueueJobDriverTest extends JobDriverBehaviourTest<QueueJobDriver> {
  private static final Duration POLL = Duration.ofMillis(10);

  private final List<QueueManager> managers = new CopyOnWriteArrayList<>();
  private final List<Storage> stores = new CopyOnWriteArrayList<>();
  private Storage storage;
  private QueueManager manager;

  @Override
  protected QueueJobDriver newDriver() {
    storage = store(QueueStores.memory());
    manager = manager(storage);
    return driver(manager).build();
  }

  private Storage store(Storage s) {
    stores.add(s);
    return s;
  }

  private QueueManager manager(Storage s) {
    QueueManager m = new QueueManager(s, QueueManagerConfig.builder().clock(clock).build());
    managers.add(m);
    return m;
  }

  private QueueJobDriver.Builder driver(QueueManager m) {
    return QueueJobDriver.builder(m).logger(logger).pollInterval(POLL);
  }

  @Override
  protected void closeResources() {
    for (QueueManager m : managers) {
      m.stop();
    }
    for (Storage s : stores) {
      s.close();
    }
  }

  @Override
  protected String messagingSystem() {
    return "queuebridge";
  }

  @Override
  protected int undelivered(String queue) {
    if (queue.isEmpty()) {
      return 0;
    }
    try {
      long tail = storage.queues().tail(queue);
      java.util.Optional<ConsumerGroupState> g =
          manager.consumerGroups().group(queue, QueueJobDriver.DEFAULT_GROUP);
      long from = g.map(ConsumerGroupState::cursor).orElse(storage.queues().head(queue));
      // read but not due yet (BEHAVIOUR Q-DELAY): waiting too
      long scheduled =
          g.map(s -> s.pending().stream().filter(e -> e.isScheduled()).count()).orElse(0L);
      return (int) (tail - from + scheduled);
    } catch (QueueNotFoundException none) {
      return 0;
    }
  }

  @Override
  protected void advance(Duration d) {
    clock.advance(d); // consumers re-claim within a poll interval
  }

  private ConsumerGroupState jobsGroup(QueueManager m, String queue) {
    return m.consumerGroups().group(queue, QueueJobDriver.DEFAULT_GROUP).orElseThrow();
  }

  @Nested
  class Durable {
    @Test
    void dispatchStoresTheJobAsAMessageOfItsClassicQueue() throws Exception {
      String id =
          driver.dispatch(
              JobMessage.builder("work")
                  .name("resize")
                  .payload("img".getBytes(UTF_8))
                  .metadata("size", "large")
                  .build());
      QueueConfig q = manager.getQueue("work");
      assertThat(q.durable()).isTrue();
      assertThat(q.isStream()).isFalse();
      assertThat(q.topics()).containsExactly("$queue/work/#");
      Message m = storage.queues().read("work", 0);
      assertThat(m.value()).isEqualTo("img".getBytes(UTF_8));
      assertThat(m.topic()).isEqualTo("$queue/work");
      assertThat(m.properties())
          .containsEntry(QueueJobDriver.JOB_ID, id)
          .containsEntry(QueueJobDriver.JOB_NAME, "resize")
          .containsEntry(QueueJobDriver.METADATA_PREFIX + "size", "large");
    }

    @Test
    void anExistingQueueIsUsedAsItIs() throws Exception {
      manager.createQueue(QueueConfig.durable("work").topics("jobs/work").build());
      driver.dispatch(job("work", "a"));
      assertThat(manager.getQueue("work").topics()).containsExactly("jobs/work");
      assertThat(storage.queues().tail("work")).isEqualTo(1);
    }

    @Test
    void jobsOutliveTheManagerOnTheSameStore() throws Exception {
      driver.dispatch(JobMessage.builder("work").name("a").metadata("k", "v").build());
      driver.dispatch(job("work", "b"));
      assertThat(driver.stop(WAIT)).isTrue();
      manager.stop();

      QueueManager next = manager(storage);
      QueueJobDriver again = driver(next).build();
      BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
      consume(
          again,
          "work",
          d -> {
            got.add(d);
            d.acknowledge();
          });
      Delivery a = take(got);
      assertThat(a.message().name()).isEqualTo("a");
      assertThat(a.message().metadata()).containsExactly(Map.entry("k", "v"));
      assertThat(a.message().attempts()).isEqualTo(1);
      assertThat(take(got).message().name()).isEqualTo("b");
      again.stop(WAIT);
    }

    @Test
    void jobsSurviveClosingAndReopeningAFileStore(@TempDir Path dir) throws Exception {
      Storage first = QueueStores.file(dir);
      QueueManager m1 = new QueueManager(first, QueueManagerConfig.builder().clock(clock).build());
      QueueJobDriver d1 = driver(m1).build();
      String id = d1.dispatch(job("work", "persisted"));
      d1.stop(WAIT);
      m1.stop();
      first.close();

      Storage reopened = store(QueueStores.file(dir));
      QueueJobDriver d2 = driver(manager(reopened)).build();
      BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
      consume(
          d2,
          "work",
          d -> {
            got.add(d);
            d.acknowledge();
          });
      Delivery d = take(got);
      assertThat(d.message().id()).isEqualTo(id);
      assertThat(text(d)).isEqualTo("persisted");
      d2.stop(WAIT);
    }

    @Test
    void aJobInFlightWhenItsProcessDiedIsRedeliveredAfterTheDeliveryTimeout() throws Exception {
      driver.dispatch(job("work", "a"));
      CountDownLatch inHandler = new CountDownLatch(1);
      CountDownLatch never = new CountDownLatch(1);
      consume(
          "work",
          d -> {
            inHandler.countDown();
            never.await(); // the "process" hangs with the job claimed, then is abandoned
          });
      assertThat(inHandler.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      manager.stop();

      QueueManager next = manager(storage);
      QueueJobDriver again = driver(next).build();
      BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
      consume(
          again,
          "work",
          d -> {
            got.add(d);
            d.acknowledge();
          });
      assertThat(got.poll(100, TimeUnit.MILLISECONDS)).as("still within its visibility").isNull();
      advance(QueueConfig.DEFAULT_DELIVERY_TIMEOUT);
      Delivery d = take(got);
      assertThat(text(d)).isEqualTo("a");
      assertThat(d.message().attempts()).isEqualTo(2);
      again.stop(WAIT);
    }

    @Test
    void retryWithZeroDelayUsesTheQueuesRetryBackoff() throws Exception {
      manager.createQueue(
          QueueConfig.durable("work")
              .retryPolicy(
                  new RetryPolicy(
                      5, Duration.ofSeconds(30), Duration.ofMinutes(1), 2.0, Duration.ZERO))
              .build());
      driver.dispatch(job("work", "a"));
      List<Integer> attempts = new CopyOnWriteArrayList<>();
      CountDownLatch retried = new CountDownLatch(1);
      consume(
          "work",
          d -> {
            attempts.add(d.message().attempts());
            if (d.message().attempts() == 1) {
              d.retry(Duration.ZERO);
              retried.countDown();
            } else {
              d.acknowledge();
            }
          });
      assertThat(retried.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      advance(Duration.ofSeconds(29));
      await().during(Duration.ofMillis(100)).atMost(WAIT).until(() -> attempts.size() == 1);
      advance(Duration.ofSeconds(1));
      await().atMost(WAIT).until(() -> attempts.size() == 2);
      assertThat(attempts).containsExactly(1, 2);
    }

    @Test
    void rejectMovesTheJobToTheDeadLetterQueue() throws Exception {
      String id = driver.dispatch(job("work", "poison"));
      Running c =
          consume(
              "work",
              d -> {
                d.reject();
                Thread.currentThread().interrupt();
              });
      assertThat(c.end()).isInstanceOf(InterruptedException.class);
      String dlq = manager.consumerGroups().deadLetterQueue(manager.getQueue("work"));
      Message dead = storage.queues().read(dlq, 0);
      assertThat(dead.properties())
          .containsEntry(QueueJobDriver.JOB_ID, id)
          .containsEntry(MessageProperties.DLQ_REASON, "rejected: rejected by the job handler");
      assertThat(jobsGroup(manager, "work").committed()).isEqualTo(1);
    }

    @Test
    void failRetriesWithTheRetryPolicyThenDeadLettersWhenItIsExhausted() throws Exception {
      manager.createQueue(
          QueueConfig.durable("work")
              .retryPolicy(
                  new RetryPolicy(
                      1, Duration.ofSeconds(5), Duration.ofSeconds(5), 1.0, Duration.ZERO))
              .build());
      driver.dispatch(job("work", "flaky"));
      List<Integer> attempts = new CopyOnWriteArrayList<>();
      IllegalStateException why = new IllegalStateException("why");
      consume(
          "work",
          d -> {
            attempts.add(d.message().attempts());
            d.fail(why);
          });
      await().atMost(WAIT).until(() -> attempts.size() == 1);
      advance(Duration.ofSeconds(5));
      await().atMost(WAIT).until(() -> attempts.size() == 2);
      String dlq = manager.consumerGroups().deadLetterQueue(manager.getQueue("work"));
      await().atMost(WAIT).until(() -> storage.queues().tail(dlq) == 1);
      assertThat(storage.queues().read(dlq, 0).properties().get(MessageProperties.DLQ_REASON))
          .contains("retries exhausted");
      assertThat(attempts).containsExactly(1, 2);
      assertThat(logger.events).anyMatch(e -> e.error() == why);
    }

    @Test
    void aThrowingHandlersJobComesBackAfterTheBackoff() throws Exception {
      driver.dispatch(job("work", "a"));
      Running c =
          consume(
              "work",
              d -> {
                throw new IllegalStateException("boom");
              });
      assertThat(c.end()).isInstanceOf(JobHandlerException.class);
      BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
      consume(
          "work",
          d -> {
            got.add(d);
            d.acknowledge();
          });
      advance(RetryPolicy.DEFAULT.initialBackoff());
      Delivery d = take(got);
      assertThat(text(d)).isEqualTo("a");
      assertThat(d.message().attempts()).isEqualTo(2);
    }

    @Test
    void dueRetriesArePickedUpEarliestDueFirstThenOldestOffsetFirst() throws Exception {
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
      advance(Duration.ofSeconds(10));
      await().atMost(WAIT).until(() -> second.size() == 3);
      assertThat(second).as("b was due at 5 s; a and c at 10 s").containsExactly("b", "a", "c");
    }

    @Test
    void stopKeepsQueuedJobsInTheStore() throws Exception {
      driver.dispatch(job("work", "a"));
      driver.dispatch(job("work", "b"));
      assertThat(driver.stop(WAIT)).isTrue();
      assertThat(storage.queues().tail("work")).isEqualTo(2);
      QueueJobDriver next = driver(manager).build();
      List<String> got = new CopyOnWriteArrayList<>();
      consume(
          next,
          "work",
          d -> {
            got.add(text(d));
            d.acknowledge();
          });
      await().atMost(WAIT).until(() -> got.size() == 2);
      assertThat(got).containsExactly("a", "b");
      next.stop(WAIT);
    }

    @Test
    void consumersOfTwoDriversOnOneStoreCompete() throws Exception {
      QueueJobDriver other = driver(manager).build();
      Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
      JobHandler handler =
          d -> {
            handled.computeIfAbsent(d.message().id(), k -> new AtomicInteger()).incrementAndGet();
            d.acknowledge();
          };
      consume("work", handler);
      consume(other, "work", handler);
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        ids.add((i % 2 == 0 ? driver : other).dispatch(job("work", "j" + i)));
      }
      await().atMost(WAIT).until(() -> handled.size() == 200);
      assertThat(handled.keySet()).containsExactlyInAnyOrderElementsOf(ids);
      assertThat(handled.values()).allMatch(n -> n.get() == 1);
      other.stop(WAIT);
    }

    @Test
    void aConsumerLeavesTheGroupWhenConsumeEnds() throws Exception {
      driver.dispatch(job("work", "a"));
      Running c =
          consume(
              "work",
              d -> {
                d.acknowledge();
                Thread.currentThread().interrupt();
              });
      assertThat(c.end()).isInstanceOf(InterruptedException.class);
      assertThat(jobsGroup(manager, "work").consumers()).isEmpty();
    }

    @Test
    void aConsumerRemovedAsStaleDuringALongJobRejoinsAndKeepsConsuming() throws Exception {
      driver.dispatch(job("work", "long"));
      BlockingQueue<Delivery> held = new LinkedBlockingQueue<>();
      Semaphore release = new Semaphore(0);
      Running c = consume("work", holding(held, release));
      Delivery first = take(held);
      List<?> removed =
          ((GroupCoordinator) manager.consumerGroups())
              .removeStaleConsumers(clock.instant().plus(Duration.ofMinutes(3)));
      assertThat(removed).hasSize(1);
      assertThat(jobsGroup(manager, "work").consumers()).isEmpty();
      first.acknowledge();
      release.release();

      driver.dispatch(job("work", "next"));
      Delivery next = take(held);
      assertThat(text(next)).isEqualTo("next");
      assertThat(c.outcome()).as("consume goes on").isNotDone();
      assertThat(jobsGroup(manager, "work").consumers()).hasSize(1);
      next.acknowledge();
      release.release();
    }

    @Test
    void aSettlementAfterTheDeliveryTimeoutIsFencedAndLeavesTheDeliveryUnsettled()
        throws Exception {
      driver.dispatch(job("work", "slow"));
      BlockingQueue<Delivery> held = new LinkedBlockingQueue<>();
      Semaphore release = new Semaphore(0);
      consume("work", holding(held, release));
      Delivery slow = take(held);
      advance(QueueConfig.DEFAULT_DELIVERY_TIMEOUT);
      QueueJobDriver other = driver(manager).build();
      BlockingQueue<Delivery> stolen = new LinkedBlockingQueue<>();
      consume(
          other,
          "work",
          d -> {
            stolen.add(d);
            d.acknowledge();
          });
      assertThat(take(stolen).message().attempts()).isEqualTo(2);

      assertThatThrownBy(slow::acknowledge).isInstanceOf(MessageNotPendingException.class);
      assertThatThrownBy(slow::reject)
          .as("still unsettled, so it may be settled again; and it is fenced again")
          .isInstanceOf(MessageNotPendingException.class);
      release.release(10);
      other.stop(WAIT);
    }
  }

  /** Claim renewal while a handler runs, on a manual clock and scheduler. */
  @Nested
  class LongJobs {
    private final MutableClock time = MutableClock.at("2024-01-01T00:00:00Z");
    private final ManualScheduler timers = new ManualScheduler(time);
    private final QueueManager m =
        registered(new QueueManager(store(QueueStores.memory()), config()));
    private final QueueJobDriver longJobs = driver(m).scheduler(timers).build();

    private QueueManagerConfig config() {
      return QueueManagerConfig.builder().clock(time).build();
    }

    private QueueManager registered(QueueManager qm) {
      managers.add(qm);
      return qm;
    }

    private PendingEntry pending() {
      List<PendingEntry> p = jobsGroup(m, "work").pending();
      assertThat(p).hasSize(1);
      return p.get(0);
    }

    @Test
    void aJobRunningLongerThanTheDeliveryTimeoutKeepsItsClaim() throws Exception {
      longJobs.dispatch(job("work", "long"));
      BlockingQueue<Delivery> held = new LinkedBlockingQueue<>();
      Semaphore release = new Semaphore(0);
      consume(longJobs, "work", holding(held, release));
      Delivery running = take(held);
      QueueJobDriver other = driver(m).scheduler(timers).build();
      BlockingQueue<Delivery> stolen = new LinkedBlockingQueue<>();
      consume(other, "work", holding(stolen, release));

      timers.advance(QueueConfig.DEFAULT_DELIVERY_TIMEOUT.multipliedBy(3)); // 90 s, 9 renewals
      assertThat(pending().visibleAt())
          .as("renewed every 10 s: visible again only 30 s after the last renewal")
          .isEqualTo(time.instant().plus(QueueConfig.DEFAULT_DELIVERY_TIMEOUT));
      assertThat(stolen.poll(200, TimeUnit.MILLISECONDS)).as("nobody else got it").isNull();
      running.acknowledge(); // not fenced: the claim is still this delivery's
      assertThat(jobsGroup(m, "work").pending()).isEmpty();
      release.release(10);
      await()
          .atMost(WAIT)
          .alias("renewals end with the handler")
          .until(() -> !timers.scheduled().contains("job-renewal-work"));
      other.stop(WAIT);
      longJobs.stop(WAIT);
    }

    @Test
    void renewalsStopAtTheSettlementSoARetryDelayIsKept() throws Exception {
      longJobs.dispatch(job("work", "retried"));
      CountDownLatch retried = new CountDownLatch(1);
      Semaphore release = new Semaphore(0);
      consume(
          longJobs,
          "work",
          d -> {
            if (d.message().attempts() == 1) {
              d.retry(Duration.ofSeconds(25));
              retried.countDown();
              release.acquire(); // the handler goes on after settling
            } else {
              d.acknowledge();
            }
          });
      assertThat(retried.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      Instant due = time.instant().plusSeconds(25);
      assertThat(pending().visibleAt()).isEqualTo(due);
      timers.advance(Duration.ofSeconds(21)); // two renewal ticks while the handler still runs
      assertThat(pending().visibleAt()).as("the retry delay stands").isEqualTo(due);
      release.release();
      longJobs.stop(WAIT);
    }
  }
}
