package io.queuebridge.connect.sink;

import io.queuebridge.core.DurableBatch;
import io.queuebridge.core.QueueManager;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.connect.errors.RetriableException;

/**
 * The task's two writer threads, a pipeline of up to {@link #MAX_IN_FLIGHT} batches: the preparing
 * thread checks, stamps and encodes a {@link Batch} ({@link QueueManager#prepareBatchDurably}), the
 * writing thread writes each queue's part with one durability barrier ({@link
 * QueueManager#publishPrepared}) atomically with its watermarks. So the next batch is prepared
 * while the one before is being made durable, and batches reach the store in the order submitted.
 * Once a batch fails, the batches submitted after it are not written (their outcome says so) until
 * {@link #await} has handed out every outcome.
 *
 * <p>{@link #submit} returns at once; {@link #await} waits for the oldest outcome. With {@code
 * queue.write.pipelined=true} the task collects the next puts meanwhile; with {@code false} it
 * awaits each batch in the put that submitted it.
 *
 * <p>{@link #submit}, {@link #await} and {@link #stop} are for the task thread only.
 */
final class BatchWriter {
  /** How long {@link #stop} waits for a batch still being written. */
  static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

  /** Batches submitted and not yet awaited, at most: one being written, one prepared behind it. */
  static final int MAX_IN_FLIGHT = 2;

  /**
   * What became of a batch: durable ({@code failure} null) or failed.
   *
   * @param batch the batch written; not null
   * @param failedOn the queue's part that failed; null when durable (or, on an unexpected failure,
   *     if no part was being written)
   * @param queue the queue that failed ({@code queue.name} if {@code failedOn} is null); null when
   *     durable
   * @param failure what failed, an interruption as a {@link RetriableException}; null when durable
   * @param skipped whether the batch was not written at all because one before it failed
   */
  record Outcome(
      Batch batch, QueueBatch failedOn, String queue, RuntimeException failure, boolean skipped) {}

  /** A batch submitted: its write, and the queue's part being prepared or written. */
  private static final class InFlight {
    final Batch batch;
    Future<Void> done;
    volatile QueueBatch working;

    InFlight(Batch batch) {
      this.batch = batch;
    }
  }

  private final String queueName;
  private final QueueManager manager;
  private final SinkMetrics metrics;
  private final ExecutorService preparer;
  private final ExecutorService executor;

  /** Submitted and not yet awaited, oldest first. */
  private final Deque<InFlight> inFlight = new ArrayDeque<>(MAX_IN_FLIGHT);

  /** Set on the writing thread when a batch failed; cleared by {@link #await} once all are out. */
  private volatile boolean failed;

  /**
   * Starts the writer threads (daemons) {@code queue-sink-prepare-<queueName>} and {@code
   * queue-sink-writer-<queueName>}.
   *
   * @param queueName {@code queue.name}
   */
  BatchWriter(String queueName, QueueManager manager, SinkMetrics metrics) {
    this.queueName = queueName;
    this.manager = manager;
    this.metrics = metrics;
    this.preparer = daemon("queue-sink-prepare-" + queueName);
    this.executor = daemon("queue-sink-writer-" + queueName);
  }

  private static ExecutorService daemon(String name) {
    return Executors.newSingleThreadExecutor(
        r -> {
          Thread t = new Thread(r, name);
          t.setDaemon(true);
          return t;
        });
  }

  /** Whether a batch was handed over and not yet awaited. */
  boolean pending() {
    return !inFlight.isEmpty();
  }

  /** Whether {@link #MAX_IN_FLIGHT} batches are in flight: {@link #submit} must wait for one. */
  boolean busy() {
    return inFlight.size() >= MAX_IN_FLIGHT;
  }

  /** Whether the oldest batch handed over is written or failed: {@link #await} does not block. */
  boolean finished() {
    InFlight oldest = inFlight.peekFirst();
    return oldest != null && oldest.done.isDone();
  }

  /**
   * Hands {@code batch} to the writer threads.
   *
   * @throws IllegalStateException if {@link #MAX_IN_FLIGHT} batches are in flight (nothing changes)
   */
  void submit(Batch batch) {
    if (busy()) {
      throw new IllegalStateException(inFlight.size() + " batches are still in flight");
    }
    InFlight f = new InFlight(batch);
    Future<List<DurableBatch>> prepared = preparer.submit(() -> prepareAll(f));
    f.done = executor.submit(() -> writeAll(f, prepared));
    inFlight.addLast(f);
  }

  /** On the preparing thread: every queue's part, in order; the first failure stops the rest. */
  private List<DurableBatch> prepareAll(InFlight f) {
    List<DurableBatch> out = new ArrayList<>(f.batch.queues.size());
    for (QueueBatch b : f.batch.queues.values()) {
      if (b.requests.isEmpty()) {
        continue; // only errant records: the watermark moves with the next batch
      }
      f.working = b;
      out.add(manager.prepareBatchDurably(b.config.name(), b.requests, b.checkpoints()));
    }
    f.working = null;
    return out;
  }

  /**
   * On the writing thread: every queue's part, in order; the first failure stops the rest and the
   * batches after it.
   */
  private Void writeAll(InFlight f, Future<List<DurableBatch>> prepared) throws Exception {
    if (failed) {
      throw new SkippedException();
    }
    try {
      List<DurableBatch> parts;
      try {
        parts = prepared.get();
      } catch (ExecutionException e) {
        if (e.getCause() instanceof Error error) {
          throw error; // as if thrown here: await hands it on
        }
        throw e.getCause() instanceof Exception cause ? cause : e;
      }
      int i = 0;
      for (QueueBatch b : f.batch.queues.values()) {
        if (b.requests.isEmpty()) {
          continue;
        }
        f.working = b;
        long started = System.nanoTime();
        manager.publishPrepared(parts.get(i++));
        metrics.appended(b.requests.size(), b.bytes, b.delayed, System.nanoTime() - started);
      }
      f.working = null;
      return null;
    } catch (Exception | Error e) {
      failed = true;
      throw e;
    }
  }

  /** The outcome of a batch not written because one before it failed. */
  private static final class SkippedException extends Exception {
    private static final long serialVersionUID = 1L;

    SkippedException() {
      super("not written: a batch before it failed", null, false, false);
    }
  }

  /**
   * Waits for the oldest batch in flight and forgets it.
   *
   * @return its outcome; null when none is in flight
   * @throws RetriableException if interrupted; the batch stays in flight (the next call waits for
   *     it again)
   * @throws Error what a writer thread threw as an {@link Error}; the batch is forgotten
   */
  Outcome await() {
    InFlight f = inFlight.peekFirst();
    if (f == null) {
      return null;
    }
    try {
      f.done.get();
      inFlight.removeFirst();
      return new Outcome(f.batch, null, null, null, false);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RetriableException("interrupted while waiting for a durability barrier", e);
    } catch (ExecutionException e) {
      inFlight.removeFirst();
      if (inFlight.isEmpty()) {
        failed = false; // every batch after the failure is out: the next ones are written
      }
      Throwable cause = e.getCause();
      if (cause instanceof Error error) {
        throw error;
      }
      QueueBatch failedOn = f.working;
      String queue = failedOn == null ? queueName : failedOn.config.name();
      if (cause instanceof SkippedException) {
        return new Outcome(
            f.batch,
            null,
            queue,
            new RetriableException("not written into '" + queue + "': a batch before it failed"),
            true);
      }
      RuntimeException failure =
          cause instanceof RuntimeException re
              ? re
              : new RetriableException("interrupted writing into '" + queue + "'", cause);
      return new Outcome(f.batch, failedOn, queue, failure, false);
    }
  }

  /**
   * Stops the writer threads, waiting up to {@link #STOP_TIMEOUT} for a batch still being written.
   *
   * @return whether the threads have ended (false: a batch may still be writing into the store)
   */
  boolean stop() {
    preparer.shutdown();
    executor.shutdown();
    try {
      long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
      return preparer.awaitTermination(STOP_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS)
          && executor.awaitTermination(
              Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return preparer.isTerminated() && executor.isTerminated();
    }
  }
}
