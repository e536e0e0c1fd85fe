package io.queuebridge.connect.sink;

import io.queuebridge.core.QueueManager;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.connect.errors.RetriableException;

/**
 * The task's writer thread: writes one {@link Batch} at a time, each queue's part with one
 * durability barrier ({@link QueueManager#publishBatchDurably}) atomically with its watermarks, so
 * batches reach the store in order. {@link #submit} returns at once; {@link #await} waits for the
 * outcome. With {@code queue.write.pipelined=true} the task collects the next puts meanwhile; with
 * {@code false} it awaits each batch in the put that submitted it.
 *
 * <p>{@link #submit}, {@link #await} and {@link #stop} are for the task thread only.
 */
final class BatchWriter {
  /** How long {@link #stop} waits for a batch still being written. */
  static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

  /**
   * What became of a batch: durable ({@code failure} null) or failed.
   *
   * @param batch the batch written; not null
   * @param failedOn the queue's part that failed; null when durable (or, on an unexpected failure,
   *     if no part was being written)
   * @param queue the queue that failed ({@code queue.name} if {@code failedOn} is null); null when
   *     durable
   * @param failure what failed, an interruption as a {@link RetriableException}; null when durable
   */
  record Outcome(Batch batch, QueueBatch failedOn, String queue, RuntimeException failure) {}

  private final String queueName;
  private final QueueManager manager;
  private final SinkMetrics metrics;
  private final ExecutorService executor;

  /** The batch handed over and not yet awaited; null when none. */
  private Batch inFlight;

  private Future<Void> done;

  /** The part of {@link #inFlight} being written (read after {@link #done} completed). */
  private volatile QueueBatch writing;

  /**
   * Starts the writer thread (a daemon) {@code queue-sink-writer-<queueName>}.
   *
   * @param queueName {@code queue.name}
   */
  BatchWriter(String queueName, QueueManager manager, SinkMetrics metrics) {
    this.queueName = queueName;
    this.manager = manager;
    this.metrics = metrics;
    String threadName = "queue-sink-writer-" + queueName;
    this.executor =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, threadName);
              t.setDaemon(true);
              return t;
            });
  }

  /** Whether a batch was handed over and not yet awaited. */
  boolean busy() {
    return inFlight != null;
  }

  /** Whether a batch was handed over and is written or failed: {@link #await} does not block. */
  boolean finished() {
    return inFlight != null && done.isDone();
  }

  /**
   * Hands {@code batch} to the writer thread.
   *
   * @throws IllegalStateException if a batch is still in flight (nothing changes)
   */
  void submit(Batch batch) {
    if (inFlight != null) {
      throw new IllegalStateException("a batch is still in flight");
    }
    writing = null;
    done = executor.submit(() -> writeAll(batch));
    inFlight = batch;
  }

  /** On the writer thread: every queue's part, in order; the first failure stops the rest. */
  private Void writeAll(Batch batch) throws InterruptedException {
    for (QueueBatch b : batch.queues.values()) {
      if (b.requests.isEmpty()) {
        continue; // only errant records: the watermark moves with the next batch
      }
      writing = b;
      Map<String, String> checkpoints = b.checkpoints();
      long started = System.nanoTime();
      manager.publishBatchDurably(b.config.name(), b.requests, checkpoints);
      metrics.appended(b.requests.size(), b.bytes, b.delayed, System.nanoTime() - started);
    }
    return null;
  }

  /**
   * Waits for the batch in flight and forgets it.
   *
   * @return its outcome; null when none is in flight
   * @throws RetriableException if interrupted; the batch stays in flight (the next call waits for
   *     it again)
   * @throws Error what the writer thread threw as an {@link Error}; the batch is forgotten
   */
  Outcome await() {
    Batch f = inFlight;
    if (f == null) {
      return null;
    }
    try {
      done.get();
      inFlight = null;
      return new Outcome(f, null, null, null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RetriableException("interrupted while waiting for a durability barrier", e);
    } catch (ExecutionException e) {
      inFlight = null;
      Throwable cause = e.getCause();
      if (cause instanceof Error error) {
        throw error;
      }
      QueueBatch failedOn = writing;
      String queue = failedOn == null ? queueName : failedOn.config.name();
      RuntimeException failure =
          cause instanceof RuntimeException re
              ? re
              : new RetriableException("interrupted writing into '" + queue + "'", cause);
      return new Outcome(f, failedOn, queue, failure);
    }
  }

  /**
   * Stops the writer thread, waiting up to {@link #STOP_TIMEOUT} for a batch still being written.
   *
   * @return whether the thread has ended (false: a batch may still be writing into the store)
   */
  boolean stop() {
    executor.shutdown();
    try {
      return executor.awaitTermination(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return executor.isTerminated();
    }
  }
}
