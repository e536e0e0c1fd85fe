package io.queuebridge.examples.embedding;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.job.JobMessage;
import io.queuebridge.core.job.QueueJobDriver;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * The README's embedding example, compiled: the core as a durable job queue on a {@code file}
 * store. The region between the {@code README:begin} and {@code README:end} markers is what the
 * README shows, character for character (a test checks it).
 */
public final class EmbeddedJobQueue {
  private EmbeddedJobQueue() {}

  /** A temporary failure: the job is retried later. */
  static final class TemporaryFailure extends Exception {
    private static final long serialVersionUID = 1L;
  }

  /** A permanent failure: the job is dead-lettered. */
  static final class PermanentFailure extends Exception {
    private static final long serialVersionUID = 1L;
  }

  /** Sends one welcome email; the stand-in for an application's work. */
  static void send(JobMessage job) throws TemporaryFailure, PermanentFailure {
    if (job.payload().length == 0) {
      throw new PermanentFailure();
    }
  }

  /** Dispatches one job and consumes the queue until the thread is interrupted. */
  public static void main(String[] args) throws Exception {
    byte[] bytes = "hello".getBytes(StandardCharsets.UTF_8);
    // README:begin
    try (Storage storage = QueueStores.open("file", Map.of("path", "/var/lib/jobs"))) {
      QueueManager manager = new QueueManager(storage, QueueManagerConfig.defaults());
      manager.start();
      QueueJobDriver jobs = QueueJobDriver.builder(manager).build();
      jobs.dispatch(JobMessage.builder("emails").name("welcome").payload(bytes).build());
      jobs.consume(
          "emails",
          delivery -> {
            try {
              send(delivery.message());
              delivery.acknowledge();
            } catch (TemporaryFailure e) {
              delivery.retry(Duration.ofSeconds(30)); // claimable again after 30 s
            } catch (PermanentFailure e) {
              delivery.reject(); // to the dead-letter queue $dlq/emails
            }
          });
    }
    // README:end
  }
}
