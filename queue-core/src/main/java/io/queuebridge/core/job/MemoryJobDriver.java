package io.queuebridge.core.job;

import io.queuebridge.core.errors.DriverClosedException;
import io.queuebridge.core.errors.InvalidQueueException;
import java.time.Clock;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An in-memory {@link JobDriver}: named FIFO queues of jobs plus a set of delayed jobs — retries
 * and jobs dispatched with a delay (BEHAVIOUR J-DRIVER, rules J-START … J-STOP).
 *
 * <p><b>Not durable.</b> Process exit or a crash loses every queued job.
 *
 * <p><b>No background thread.</b> Construction starts nothing. Consumers advance delayed work:
 * before each reservation a consumer moves every due retry of its queue to the queue's tail, and a
 * consumer with nothing to do waits until a new job arrives, the driver stops, its thread is
 * interrupted, or the earliest retry of its queue falls due. So a delayed retry does not become
 * ready while no consumer of its queue runs.
 *
 * <p><b>Delayed order</b> (BEHAVIOUR J-DELAY): delayed jobs fall due by due time, equal due times
 * in the order they were requested (a retry or a {@link #dispatch(JobMessage, Duration) delayed
 * dispatch}); promotion appends them to the tail in that order. Nothing is promoted after {@link
 * #stop}.
 *
 * <p><b>Time.</b> Due times come from the injected {@link Clock}; waits for a due time are timed
 * waits in real time. A clock that jumps (a test clock) must call {@link #recheckDueRetries()}
 * after each jump so waiting consumers re-read it.
 *
 * <p><b>Concurrency.</b> Thread-safe. One lock guards all queues, the delayed sets and the
 * lifecycle; handlers always run without it. Each queue has a condition its consumers wait on;
 * {@link #stop} waits on a second condition for the active consumer count to reach zero.
 */
public final class MemoryJobDriver implements JobDriver {
  /** What {@link #messagingSystem()} returns. */
  public static final String MESSAGING_SYSTEM = "memory";

  private static final AtomicLong IDS = new AtomicLong();

  private final Clock clock;
  private final Duration retryDelay;
  private final Logger log;

  private final ReentrantLock lock = new ReentrantLock();
  private final ActiveConsumers consumers = new ActiveConsumers(lock);
  private final Map<String, QueueState> queues = new HashMap<>();
  private boolean closed;
  private long retrySequence;

  /** A driver on the system clock with no default retry delay. */
  public MemoryJobDriver() {
    this(builder());
  }

  private MemoryJobDriver(Builder b) {
    this.clock = b.clock;
    this.retryDelay = b.retryDelay;
    this.log = b.logger;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** BEHAVIOUR J-START: interruption first, then closure; otherwise nothing to do. */
  @Override
  public void start() throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException("start interrupted");
    }
    lock.lock();
    try {
      if (closed) {
        throw closedError();
      }
    } finally {
      lock.unlock();
    }
  }

  /** BEHAVIOUR J-DISP. */
  @Override
  public String dispatch(JobMessage message, Duration delay) throws InterruptedException {
    Objects.requireNonNull(message, "message");
    Waits.checkDelay(delay);
    if (Thread.interrupted()) {
      throw new InterruptedException("dispatch interrupted");
    }
    if (message.queue().isEmpty()) {
      throw new InvalidQueueException("dispatch", message.queue());
    }
    lock.lock();
    try {
      // An interrupt that arrived while we waited for the admission lock wins over closure.
      if (Thread.interrupted()) {
        throw new InterruptedException("dispatch interrupted");
      }
      if (closed) {
        throw closedError();
      }
      String id = message.id().isEmpty() ? "memory-" + IDS.incrementAndGet() : message.id();
      QueueState q = queue(message.queue());
      JobMessage job = message.withId(id).withAttempts(0);
      if (delay.isZero()) {
        q.ready.addLast(job);
      } else {
        q.delayed.add(new DelayedJob(dueAfter(delay), retrySequence++, job));
      }
      q.changed.signalAll();
      return id;
    } finally {
      lock.unlock();
    }
  }

  /** BEHAVIOUR J-CONS and J-HAND. */
  @Override
  public void consume(String queue, JobHandler handler) throws InterruptedException {
    ActiveConsumers.checkConsume(queue, handler);
    consumers.enter(() -> closed, MemoryJobDriver::closedError);
    try {
      while (true) {
        SettleOnceDelivery.run(handler, new MemoryDelivery(reserve(queue)), log);
      }
    } finally {
      consumers.leave();
    }
  }

  private JobMessage reserve(String name) throws InterruptedException {
    lock.lock();
    try {
      QueueState q = queue(name);
      while (true) {
        if (Thread.interrupted()) {
          throw new InterruptedException("consume interrupted");
        }
        if (closed) {
          throw closedError();
        }
        Instant now = clock.instant();
        promoteDue(q, now);
        JobMessage head = q.ready.pollFirst();
        if (head != null) {
          return head.withAttempts(head.attempts() + 1);
        }
        DelayedJob earliest = q.delayed.peek();
        if (earliest == null) {
          q.changed.await();
        } else {
          q.changed.awaitNanos(
              Math.max(1, Waits.saturatedNanos(Duration.between(now, earliest.due))));
        }
      }
    } finally {
      lock.unlock();
    }
  }

  private static void promoteDue(QueueState q, Instant now) {
    DelayedJob d;
    while ((d = q.delayed.peek()) != null && !d.due.isAfter(now)) {
      q.ready.addLast(q.delayed.poll().job);
    }
  }

  /** BEHAVIOUR J-STOP. */
  @Override
  public boolean stop(Duration timeout) throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    lock.lock();
    try {
      closed = true;
      for (QueueState q : queues.values()) {
        q.ready.clear();
        q.delayed.clear();
        q.changed.signalAll();
      }
      return consumers.awaitNone(timeout);
    } finally {
      lock.unlock();
    }
  }

  /** {@value #MESSAGING_SYSTEM}. */
  @Override
  public String messagingSystem() {
    return MESSAGING_SYSTEM;
  }

  /**
   * Wakes every consumer waiting for a delayed retry's due time, so it re-reads the clock and
   * promotes what is due. Only needed when the injected clock jumps (a test clock); with a clock
   * that follows real time the timed waits wake by themselves. Cheap and non-blocking beyond the
   * driver's lock; harmless at any time.
   */
  public void recheckDueRetries() {
    lock.lock();
    try {
      for (QueueState q : queues.values()) {
        if (!q.delayed.isEmpty()) {
          q.changed.signalAll();
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** Jobs waiting in {@code queue}: ready ones plus delayed retries. For tests and monitoring. */
  public int size(String queue) {
    lock.lock();
    try {
      QueueState q = queues.get(queue);
      return q == null ? 0 : q.ready.size() + q.delayed.size();
    } finally {
      lock.unlock();
    }
  }

  private QueueState queue(String name) {
    return queues.computeIfAbsent(name, n -> new QueueState(lock.newCondition()));
  }

  private static DriverClosedException closedError() {
    return new DriverClosedException(MESSAGING_SYSTEM);
  }

  /** The clock's now plus {@code delay}, or {@link Instant#MAX} beyond what an instant holds. */
  private Instant dueAfter(Duration delay) {
    try {
      return clock.instant().plus(delay);
    } catch (DateTimeException | ArithmeticException e) {
      return Instant.MAX;
    }
  }

  private void requeue(JobMessage job, Duration delay) {
    lock.lock();
    try {
      if (closed) {
        throw closedError();
      }
      Duration effective = delay.isZero() ? retryDelay : delay;
      QueueState q = queue(job.queue());
      if (effective.isNegative() || effective.isZero()) {
        q.ready.addLast(job);
      } else {
        Instant due = dueAfter(effective);
        q.delayed.add(new DelayedJob(due, retrySequence++, job));
      }
      q.changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private static final class QueueState {
    final ArrayDeque<JobMessage> ready = new ArrayDeque<>();
    final PriorityQueue<DelayedJob> delayed = new PriorityQueue<>(DelayedJob.ORDER);
    final Condition changed;

    QueueState(Condition changed) {
      this.changed = changed;
    }
  }

  private record DelayedJob(Instant due, long sequence, JobMessage job) {
    static final Comparator<DelayedJob> ORDER =
        Comparator.comparing(DelayedJob::due).thenComparingLong(DelayedJob::sequence);
  }

  /** A delivery of this driver: acknowledge, reject and fail drop the job, retry requeues it. */
  private final class MemoryDelivery extends SettleOnceDelivery {
    MemoryDelivery(JobMessage job) {
      super(job);
    }

    @Override
    void onAcknowledge() {}

    @Override
    void onRetry(Duration delay) {
      requeue(message(), delay);
    }

    @Override
    void onReject() {}

    @Override
    void onFail(Throwable cause) {
      if (cause != null) {
        log.warn("job {} of queue '{}' failed", message().id(), message().queue(), cause);
      }
    }
  }

  /** Configures a {@link MemoryJobDriver}. Not thread-safe. */
  public static final class Builder {
    private Clock clock = Clock.systemUTC();
    private Duration retryDelay = Duration.ZERO;
    private Logger logger = LoggerFactory.getLogger(MemoryJobDriver.class);

    private Builder() {}

    /** The clock retry due times are read from; the system UTC clock by default. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The delay of a retry that asks for none; zero (requeue at once) by default. */
    public Builder retryDelay(Duration retryDelay) {
      this.retryDelay = Objects.requireNonNull(retryDelay, "retryDelay");
      return this;
    }

    /** Where delivery failures are logged. */
    public Builder logger(Logger logger) {
      this.logger = Objects.requireNonNull(logger, "logger");
      return this;
    }

    public MemoryJobDriver build() {
      return new MemoryJobDriver(this);
    }
  }
}
