package io.queuebridge.examples.worker;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.errors.MessageNotPendingException;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.Message;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A competing consumer of a classic work queue, built on the queue core's consumer groups ({@link
 * QueueManager#consumerGroups()}): it claims jobs, hands each to a {@link Handler}, and settles the
 * delivery with the handler's {@link Outcome}:
 *
 * <ul>
 *   <li>{@link Outcome#done()}: acknowledged, gone for good;
 *   <li>{@link Outcome#retryAfter(Duration)}: given back, claimable again (by any member of the
 *       group) once the delay has passed; the queue's retry policy counts it, and a job out of
 *       retries goes to the dead-letter queue instead;
 *   <li>{@link Outcome#reject(String)}: dead-lettered at once with the reason;
 *   <li>a handler that throws: given back after the queue's retry-policy backoff.
 * </ul>
 *
 * <p>A job whose claim is never settled (the worker died) becomes visible again after the queue's
 * delivery timeout and is redelivered to whichever member claims next.
 *
 * <p>Run several workers with the same group and different consumer ids to share the queue.
 *
 * <p>Not thread-safe: one thread drives a worker ({@link #pollOnce} or {@link #run}).
 */
public final class WorkQueueWorker {
  private static final Logger LOG = LoggerFactory.getLogger(WorkQueueWorker.class);

  /** What the handler decided for one job. */
  public sealed interface Outcome {
    /** The job is finished: acknowledge it. */
    static Outcome done() {
      return Done.INSTANCE;
    }

    /** The job failed for a passing reason: offer it again after {@code delay}. */
    static Outcome retryAfter(Duration delay) {
      return new RetryAfter(delay);
    }

    /** The job can never succeed: dead-letter it with {@code reason}. */
    static Outcome reject(String reason) {
      return new Reject(reason);
    }
  }

  /** See {@link Outcome#done()}. */
  public enum Done implements Outcome {
    INSTANCE
  }

  /** See {@link Outcome#retryAfter(Duration)}. */
  public record RetryAfter(Duration delay) implements Outcome {
    public RetryAfter {
      Objects.requireNonNull(delay, "delay");
      if (delay.isNegative()) {
        throw new IllegalArgumentException("retry delay must be >= 0: " + delay);
      }
    }
  }

  /** See {@link Outcome#reject(String)}. */
  public record Reject(String reason) implements Outcome {
    public Reject {
      Objects.requireNonNull(reason, "reason");
    }
  }

  /** Does the work of one job. */
  @FunctionalInterface
  public interface Handler {
    /**
     * Handles one job.
     *
     * @param job the stored message
     * @param attempt 1 for the first delivery, 2 for the first retry, ...
     * @return what to do with the job; null counts as an error
     * @throws Exception to have the job retried after the queue's backoff
     */
    Outcome handle(Message job, int attempt) throws Exception;
  }

  /** Counters since the worker was built. */
  public record Stats(long done, long retried, long rejected, long failed) {}

  private final ConsumerGroups groups;
  private final String queue;
  private final String group;
  private final String consumerId;
  private final Handler handler;
  private final int batchSize;
  private final LongAdder done = new LongAdder();
  private final LongAdder retried = new LongAdder();
  private final LongAdder rejected = new LongAdder();
  private final LongAdder failed = new LongAdder();
  private boolean joined;

  /**
   * @param manager a started manager; the queue must exist and be a classic queue
   * @param group the consumer group the workers of this queue share
   * @param consumerId this worker's id within the group (unique per worker)
   * @param batchSize most jobs claimed at once
   */
  public WorkQueueWorker(
      QueueManager manager,
      String queue,
      String group,
      String consumerId,
      int batchSize,
      Handler handler) {
    this.groups = Objects.requireNonNull(manager, "manager").consumerGroups();
    this.queue = Objects.requireNonNull(queue, "queue");
    this.group = Objects.requireNonNull(group, "group");
    this.consumerId = Objects.requireNonNull(consumerId, "consumerId");
    this.handler = Objects.requireNonNull(handler, "handler");
    if (batchSize < 1) {
      throw new IllegalArgumentException("batchSize must be at least 1: " + batchSize);
    }
    this.batchSize = batchSize;
  }

  /**
   * Claims up to one batch of jobs and handles and settles each, on the calling thread.
   *
   * @return how many jobs were handled; 0 when none was claimable (nothing new, every retry still
   *     waiting)
   * @throws io.queuebridge.core.errors.QueueNotFoundException if the queue does not exist
   * @throws io.queuebridge.core.errors.GroupModeMismatchException if the group reads the queue as a
   *     stream
   */
  public int pollOnce() {
    if (!joined) {
      groups.join(queue, null, group, consumerId, CursorOption.resume(GroupMode.QUEUE));
      joined = true;
    }
    List<GroupDelivery> batch = groups.claimBatch(queue, group, consumerId, batchSize);
    for (GroupDelivery delivery : batch) {
      handle(delivery);
    }
    return batch.size();
  }

  /**
   * Polls until the thread is interrupted, waiting {@code idleWait} whenever nothing was claimable,
   * then leaves the group (its unsettled jobs stay for the other members).
   *
   * @throws InterruptedException when interrupted: the normal way to stop
   */
  public void run(Duration idleWait) throws InterruptedException {
    try {
      while (!Thread.currentThread().isInterrupted()) {
        if (pollOnce() == 0) {
          TimeUnit.NANOSECONDS.sleep(idleWait.toNanos());
        }
      }
      throw new InterruptedException();
    } finally {
      if (joined) {
        groups.leave(queue, null, group, consumerId);
        joined = false;
      }
    }
  }

  /** The counters so far. */
  public Stats stats() {
    return new Stats(done.sum(), retried.sum(), rejected.sum(), failed.sum());
  }

  private void handle(GroupDelivery delivery) {
    Message job = delivery.message();
    Outcome outcome;
    try {
      outcome = handler.handle(job, delivery.deliveryCount());
      if (outcome == null) {
        throw new IllegalStateException("the handler returned no outcome");
      }
    } catch (Exception e) {
      LOG.warn(
          "job at offset {} of {} failed on attempt {}; retrying after the queue's backoff",
          delivery.offset(),
          queue,
          delivery.deliveryCount(),
          e);
      failed.increment();
      try {
        delivery.nack();
      } catch (MessageNotPendingException redelivered) {
        LOG.warn("job at offset {} of {} was redelivered meanwhile", delivery.offset(), queue);
      }
      return;
    }
    try {
      if (outcome instanceof RetryAfter r) {
        delivery.nack(r.delay());
        retried.increment();
      } else if (outcome instanceof Reject r) {
        delivery.reject(r.reason());
        rejected.increment();
      } else {
        delivery.ack();
        done.increment();
      }
    } catch (MessageNotPendingException e) {
      // the claim expired while the handler ran: another member holds the job now, and this
      // settlement changed nothing (handlers should be idempotent, or faster than the timeout)
      LOG.warn(
          "job at offset {} of {} was redelivered before attempt {} settled: {}",
          delivery.offset(),
          queue,
          delivery.deliveryCount(),
          e.getMessage());
    }
  }
}
