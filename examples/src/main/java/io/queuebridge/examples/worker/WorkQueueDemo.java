package io.queuebridge.examples.worker;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.DlqConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStore;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A small application on the queue core: a durable work queue in a {@code file} store, a few jobs,
 * and two {@link WorkQueueWorker}s sharing it. One job succeeds at its second attempt, one is
 * rejected as invalid, one throws until its retries run out; the rest succeed. Prints what happened
 * and the dead-letter queue.
 *
 * <pre>
 * java -cp examples/target/classes:$(cat examples/target/quickstart.classpath) \
 *     io.queuebridge.examples.worker.WorkQueueDemo [store-directory]
 * </pre>
 *
 * <p>The store directory (default: a new temporary one) must not be open in another process, for
 * example a Connect worker: a file store has one opener.
 */
public final class WorkQueueDemo {
  /** The work queue. */
  public static final String QUEUE = "work";

  /** The workers' consumer group. */
  public static final String GROUP = "thumbnailers";

  private WorkQueueDemo() {}

  /** The work queue's configuration: durable, classic, 3 quick retries, dead-letter queue on. */
  public static QueueConfig workQueue() {
    return QueueConfig.durable(QUEUE)
        .topics("work/#")
        .retryPolicy(
            new RetryPolicy(
                3, Duration.ofMillis(200), Duration.ofSeconds(2), 2.0, Duration.ofMinutes(5)))
        .dlq(DlqConfig.DEFAULT)
        .deliveryTimeout(Duration.ofSeconds(30))
        .build();
  }

  /**
   * The demo's handler: {@code thumbnail:*} succeeds, {@code flaky:*} asks for a retry on its first
   * attempt, {@code invalid:*} is rejected, {@code crash:*} throws.
   */
  public static WorkQueueWorker.Handler handler(PrintStream out, String worker) {
    return (job, attempt) -> {
      String task = new String(job.value(), StandardCharsets.UTF_8);
      String where =
          String.format("  %-9s offset %d attempt %d  %-22s", worker, job.offset(), attempt, task);
      if (task.startsWith("flaky:") && attempt == 1) {
        out.println(where + " -> busy, retry in 300 ms");
        return WorkQueueWorker.Outcome.retryAfter(Duration.ofMillis(300));
      }
      if (task.startsWith("invalid:")) {
        out.println(where + " -> rejected");
        return WorkQueueWorker.Outcome.reject("cannot parse '" + task + "'");
      }
      if (task.startsWith("crash:")) {
        out.println(where + " -> throws");
        throw new IllegalStateException("simulated crash on " + task);
      }
      out.println(where + " -> done");
      return WorkQueueWorker.Outcome.done();
    };
  }

  public static void main(String[] args) throws Exception {
    Path dir =
        args.length > 0 ? Path.of(args[0]) : Files.createTempDirectory("queue-bridge-work-demo-");
    PrintStream out = System.out;
    out.println("Work queue demo, file store at " + dir);
    try (Storage storage = QueueStores.file(dir)) {
      QueueManager manager = new QueueManager(storage, QueueManagerConfig.defaults());
      manager.start();
      try {
        run(manager, storage.queues(), out, Duration.ofSeconds(30));
      } finally {
        manager.stop();
      }
    }
  }

  /**
   * Publishes the demo jobs, runs two workers until every job is settled (or {@code timeout}), and
   * prints the outcome.
   *
   * @return the dead letters
   */
  static List<Message> run(
      QueueManager manager, QueueStore queues, PrintStream out, Duration timeout)
      throws InterruptedException {
    if (manager.listQueues().stream().noneMatch(q -> q.name().equals(QUEUE))) {
      manager.createQueue(workQueue());
    }
    for (String job : JOBS) {
      manager.publish(
          PublishRequest.builder("work/thumbnails")
              .value(job.getBytes(StandardCharsets.UTF_8))
              .build());
    }
    out.println("Published " + JOBS.size() + " jobs to queue '" + QUEUE + "'");

    List<WorkQueueWorker> workers = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (String id : List.of("worker-1", "worker-2")) {
      WorkQueueWorker w = new WorkQueueWorker(manager, QUEUE, GROUP, id, 2, handler(out, id));
      Thread t =
          new Thread(
              () -> {
                try {
                  w.run(Duration.ofMillis(50));
                } catch (InterruptedException stopped) {
                  // the normal way out
                }
              },
              id);
      workers.add(w);
      threads.add(t);
      t.start();
    }
    ConsumerGroups groups = manager.consumerGroups();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline && !settled(groups)) {
      TimeUnit.MILLISECONDS.sleep(50);
    }
    for (Thread t : threads) {
      t.interrupt();
      t.join();
    }
    for (int i = 0; i < workers.size(); i++) {
      out.println(threads.get(i).getName() + ": " + workers.get(i).stats());
    }
    String dlq = groups.deadLetterQueue(manager.getQueue(QUEUE));
    List<Message> dead =
        manager.listQueues().stream().anyMatch(q -> q.name().equals(dlq))
            ? queues.readBatch(dlq, 0, 1000)
            : List.of();
    out.println("Dead-letter queue '" + dlq + "': " + dead.size() + " job(s)");
    for (Message m : dead) {
      out.println(
          "  "
              + new String(m.value(), StandardCharsets.UTF_8)
              + "  reason: "
              + m.properties().get(MessageProperties.DLQ_REASON)
              + "  deliveries: "
              + m.properties().get(MessageProperties.DLQ_DELIVERY_COUNT));
    }
    return dead;
  }

  /** The demo jobs, in publishing order. */
  static final List<String> JOBS =
      List.of(
          "thumbnail:cat.jpg",
          "flaky:upload-42",
          "thumbnail:dog.jpg",
          "invalid:???",
          "crash:corrupt.png",
          "thumbnail:bird.png");

  /** Whether every job is settled: nothing left to claim and nothing pending. */
  static boolean settled(ConsumerGroups groups) {
    return groups
        .group(QUEUE, GROUP)
        .map(g -> g.pending().isEmpty() && groups.lag(QUEUE, GROUP) == 0)
        .orElse(false);
  }
}
