package io.queuebridge.examples.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.DlqConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.examples.worker.WorkQueueWorker.Outcome;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The worker on a real file store, driven step by step on a clock the test moves. */
class WorkQueueWorkerTest {
  private static final String QUEUE = "jobs";
  private static final String DLQ = "$dlq/" + QUEUE;

  @TempDir Path dir;
  private final MutableClock clock = MutableClock.at("2026-01-01T00:00:00Z");
  private Storage storage;
  private QueueManager manager;

  @BeforeEach
  void open() throws InterruptedException {
    storage = QueueStores.file(dir);
    manager = new QueueManager(storage, QueueManagerConfig.builder().clock(clock).build());
    manager.start();
    manager.createQueue(
        QueueConfig.durable(QUEUE)
            .topics("jobs/#")
            .retryPolicy(
                new RetryPolicy(
                    2, Duration.ofSeconds(5), Duration.ofMinutes(1), 2.0, Duration.ZERO))
            .dlq(DlqConfig.DEFAULT)
            .deliveryTimeout(Duration.ofSeconds(30))
            .build());
  }

  @AfterEach
  void close() {
    manager.stop();
    storage.close();
  }

  private void publish(String... jobs) throws InterruptedException {
    for (String job : jobs) {
      manager.publish(
          PublishRequest.builder("jobs/x").value(job.getBytes(StandardCharsets.UTF_8)).build());
    }
  }

  /** Records (job, attempt) and answers from a script keyed by job text. */
  private static final class Scripted implements WorkQueueWorker.Handler {
    final List<String> calls = new ArrayList<>();
    final Map<String, Outcome> outcomes = new ConcurrentHashMap<>();

    @Override
    public Outcome handle(Message job, int attempt) {
      String text = new String(job.value(), StandardCharsets.UTF_8);
      calls.add(text + "#" + attempt);
      if (text.startsWith("throw")) {
        throw new IllegalStateException("boom");
      }
      return outcomes.getOrDefault(text, Outcome.done());
    }
  }

  private WorkQueueWorker worker(String id, WorkQueueWorker.Handler handler) {
    return new WorkQueueWorker(manager, QUEUE, "workers", id, 10, handler);
  }

  private List<Message> deadLetters() {
    return manager.listQueues().stream().anyMatch(q -> q.name().equals(DLQ))
        ? storage.queues().readBatch(DLQ, 0, 100)
        : List.of();
  }

  @Test
  void doneJobsAreAcknowledgedOnceAndNeverRedelivered() throws InterruptedException {
    publish("a", "b");
    Scripted handler = new Scripted();
    WorkQueueWorker worker = worker("w1", handler);

    assertThat(worker.pollOnce()).isEqualTo(2);
    clock.advance(Duration.ofMinutes(5)); // far past the delivery timeout
    assertThat(worker.pollOnce()).isZero();

    assertThat(handler.calls).containsExactly("a#1", "b#1");
    assertThat(worker.stats()).isEqualTo(new WorkQueueWorker.Stats(2, 0, 0, 0));
    assertThat(manager.consumerGroups().lag(QUEUE, "workers")).isZero();
    assertThat(deadLetters()).isEmpty();
  }

  @Test
  void retryAfterRedeliversOnlyOnceTheDelayHasPassed() throws InterruptedException {
    publish("flaky");
    Scripted handler = new Scripted();
    handler.outcomes.put("flaky", Outcome.retryAfter(Duration.ofSeconds(10)));
    WorkQueueWorker worker = worker("w1", handler);

    assertThat(worker.pollOnce()).isEqualTo(1);
    clock.advance(Duration.ofSeconds(9));
    assertThat(worker.pollOnce()).as("still waiting").isZero();

    handler.outcomes.put("flaky", Outcome.done());
    clock.advance(Duration.ofSeconds(1));
    assertThat(worker.pollOnce()).isEqualTo(1);

    assertThat(handler.calls).containsExactly("flaky#1", "flaky#2");
    assertThat(worker.stats()).isEqualTo(new WorkQueueWorker.Stats(1, 1, 0, 0));
    assertThat(manager.consumerGroups().lag(QUEUE, "workers")).isZero();
  }

  @Test
  void aRetriedJobGoesToAnyMemberOfTheGroup() throws InterruptedException {
    publish("flaky");
    Scripted first = new Scripted();
    first.outcomes.put("flaky", Outcome.retryAfter(Duration.ZERO));
    Scripted second = new Scripted();

    assertThat(worker("w1", first).pollOnce()).isEqualTo(1);
    assertThat(worker("w2", second).pollOnce()).isEqualTo(1);

    assertThat(first.calls).containsExactly("flaky#1");
    assertThat(second.calls).containsExactly("flaky#2");
  }

  @Test
  void rejectedJobsLandInTheDeadLetterQueueWithTheirReason() throws InterruptedException {
    publish("bad", "good");
    Scripted handler = new Scripted();
    handler.outcomes.put("bad", Outcome.reject("unparseable"));
    WorkQueueWorker worker = worker("w1", handler);

    assertThat(worker.pollOnce()).isEqualTo(2);

    assertThat(worker.stats()).isEqualTo(new WorkQueueWorker.Stats(1, 0, 1, 0));
    assertThat(deadLetters())
        .singleElement()
        .satisfies(
            m -> {
              assertThat(new String(m.value(), StandardCharsets.UTF_8)).isEqualTo("bad");
              assertThat(m.properties().get(MessageProperties.DLQ_REASON)).contains("unparseable");
              assertThat(m.properties()).containsEntry(MessageProperties.DLQ_ORIGINAL_QUEUE, QUEUE);
            });
  }

  @Test
  void aThrowingHandlerIsRetriedWithTheQueueBackoffUntilItsRetriesRunOut()
      throws InterruptedException {
    publish("throw");
    Scripted handler = new Scripted();
    WorkQueueWorker worker = worker("w1", handler);

    assertThat(worker.pollOnce()).isEqualTo(1); // attempt 1 fails: retry 1 after 5 s
    clock.advance(Duration.ofSeconds(4));
    assertThat(worker.pollOnce()).isZero();
    clock.advance(Duration.ofSeconds(1));
    assertThat(worker.pollOnce()).isEqualTo(1); // attempt 2 fails: retry 2 after 10 s
    clock.advance(Duration.ofSeconds(10));
    assertThat(worker.pollOnce()).isEqualTo(1); // attempt 3 fails: out of retries

    clock.advance(Duration.ofMinutes(5));
    assertThat(worker.pollOnce()).isZero();
    assertThat(handler.calls).containsExactly("throw#1", "throw#2", "throw#3");
    assertThat(worker.stats()).isEqualTo(new WorkQueueWorker.Stats(0, 0, 0, 3));
    assertThat(deadLetters())
        .singleElement()
        .satisfies(
            m -> assertThat(m.properties().get(MessageProperties.DLQ_REASON)).contains("retries"));
  }

  @Test
  void theDemoEndsWithEveryJobSettledAndTheTwoBadOnesDeadLettered() throws Exception {
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    try (Storage demoStore = QueueStores.file(dir.resolve("demo"))) {
      QueueManager demo = new QueueManager(demoStore, QueueManagerConfig.defaults());
      demo.start();
      try {
        List<Message> dead =
            WorkQueueDemo.run(
                demo,
                demoStore.queues(),
                new PrintStream(text, true, StandardCharsets.UTF_8),
                Duration.ofSeconds(60));
        assertThat(WorkQueueDemo.settled(demo.consumerGroups())).isTrue();
        assertThat(dead)
            .extracting(m -> new String(m.value(), StandardCharsets.UTF_8))
            .containsExactlyInAnyOrder("invalid:???", "crash:corrupt.png");
      } finally {
        demo.stop();
      }
    }
    assertThat(text.toString(StandardCharsets.UTF_8))
        .contains("flaky:upload-42        -> busy, retry in 300 ms")
        .containsPattern("flaky:upload-42 +-> done")
        .contains("Dead-letter queue '$dlq/work': 2 job(s)");
  }
}
