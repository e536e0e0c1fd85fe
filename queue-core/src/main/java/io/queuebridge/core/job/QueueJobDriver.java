package io.queuebridge.core.job;

import io.queuebridge.core.ConsumerNotFoundException;
import io.queuebridge.core.PublishRequest;
import io.queuebridge.core.QueueAlreadyExistsException;
import io.queuebridge.core.QueueConfig;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueNotFoundException;
import io.queuebridge.core.group.GroupCoordinator;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.store.ConsumerGroupState;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A durable {@link JobDriver} on a {@link QueueManager}'s work queues, over any store (SEMANTICS B
 * §5 with the consumer-group engine of §3.6–§3.9): jobs survive a restart on a persistent store and
 * are shared by every driver on the same store.
 *
 * <h2>Mapping</h2>
 *
 * <ul>
 *   <li><b>Queue</b>: a job queue is a classic queue of the same name, created on first use from
 *       the driver's queue template (by default a durable classic queue with the filter {@code
 *       $queue/<name>/#}, no TTL and the default retry policy and dead-letter queue). A queue that
 *       exists is used as it is, so its retry policy, delivery timeout and DLQ settings are the
 *       operator's. Job queue names must be valid queue names (SEMANTICS A11).
 *   <li><b>Dispatch</b>: one message appended to exactly that queue ({@link
 *       QueueManager#publishTo}) on topic {@code $queue/<name>}: the payload is the value, the id,
 *       name and metadata are the properties {@value #JOB_ID}, {@value #JOB_NAME} and {@value
 *       #METADATA_PREFIX}{@code <key>}. It is as durable as the queue's acknowledgement policy
 *       makes it when dispatch returns.
 *   <li><b>Consume</b>: each {@code consume} call is one member of the queue-mode group {@code
 *       group} (default {@value #DEFAULT_GROUP}) and claims one message at a time, so consumers of
 *       every driver on the store compete and each job goes to one handler at a time. The member
 *       leaves the group when consume ends.
 *   <li><b>Attempts</b> = the claim's delivery count (1 on the first delivery).
 *   <li><b>Settlement</b>: {@link Delivery#acknowledge()} = ack; {@link Delivery#retry(Duration)} =
 *       nack with that delay, where zero means the queue's retry-policy backoff for this attempt
 *       and a negative delay means at once; {@link Delivery#reject()} = reject, which moves the job
 *       to the queue's dead-letter queue (or drops it when the queue's DLQ is disabled); {@link
 *       Delivery#fail(Throwable)} = the cause is logged and the job nacked with the retry policy
 *       (it comes back after the backoff, and goes to the DLQ once the retry policy or the
 *       manager's {@code maxDeliveryCount} is exhausted). A handler that throws or returns
 *       unsettled is failed the same way.
 * </ul>
 *
 * <h2>Differences from {@link MemoryJobDriver}</h2>
 *
 * Retries are bounded (retry policy and {@code maxDeliveryCount}; then the DLQ) where the memory
 * driver retries forever; {@code retry(Duration.ZERO)} uses the queue's backoff, not a driver-wide
 * delay; retries fall due by time and are picked up oldest offset first, not in due-time order;
 * {@link #stop} discards nothing (the jobs stay in the store for the next driver); a job held by a
 * handler longer than the queue's {@code deliveryTimeout} becomes claimable again by another
 * consumer, and the late settlement then fails with {@link
 * io.queuebridge.core.MessageNotPendingException} (the delivery stays unsettled). Settlements do
 * store I/O and may block for it.
 *
 * <h2>Waiting</h2>
 *
 * A consumer with nothing to claim waits for an append to its queue ({@link
 * QueueManager#awaitAppend}) for at most the poll interval, then claims again; so new jobs are
 * picked up at once, retries and expired claims within a poll interval of falling due, and {@link
 * #stop} is noticed within a poll interval. Claims count as the member's heartbeat; a consumer
 * removed from the group as stale while one job ran longer than the manager's {@code
 * consumerTimeout} joins again at its next claim. Consumers do not run while the manager is stopped
 * (they end with its {@link IllegalStateException}).
 *
 * <p>Thread-safe. The driver does not own the manager: stopping the driver leaves the manager
 * running.
 */
public final class QueueJobDriver implements JobDriver {
  /** What {@link #messagingSystem()} returns. */
  public static final String MESSAGING_SYSTEM = "queuebridge";

  /** Property holding the job id. */
  public static final String JOB_ID = "job.id";

  /** Property holding the job name. */
  public static final String JOB_NAME = "job.name";

  /** Prefix of the properties holding the job's metadata. */
  public static final String METADATA_PREFIX = "job.meta.";

  /** The consumer group of the job consumers unless the builder names another. */
  public static final String DEFAULT_GROUP = "jobs";

  private static final int UNSETTLED = 0;
  private static final int SETTLING = 1;
  private static final int SETTLED = 2;

  private final QueueManager manager;
  private final GroupCoordinator groups;
  private final String group;
  private final Function<String, QueueConfig> queueTemplate;
  private final Duration pollInterval;
  private final Logger log;
  private final String instance = UUID.randomUUID().toString().substring(0, 8);
  private final AtomicLong consumerSequence = new AtomicLong();

  // Admission: dispatches hold the read side across their append, stop takes the write side to
  // close, so no dispatch is accepted after stop returned.
  private final ReentrantReadWriteLock admission = new ReentrantReadWriteLock();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition idle = lock.newCondition();
  private final Condition changed = lock.newCondition();
  private volatile boolean closed;
  private int activeConsumers; // guarded by lock

  private QueueJobDriver(Builder b) {
    this.manager = b.manager;
    this.groups = b.manager.consumerGroups();
    this.group = b.group;
    this.queueTemplate = b.queueTemplate;
    this.pollInterval = b.pollInterval;
    this.log = b.logger;
  }

  /** A builder over {@code manager}. */
  public static Builder builder(QueueManager manager) {
    return new Builder(manager);
  }

  /** {@code J-START}: interruption first, then closure; otherwise nothing to do. */
  @Override
  public void start() throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException("start interrupted");
    }
    if (closed) {
      throw closedError();
    }
  }

  /**
   * {@code J-DISP}: appends the job to its queue (created from the template when absent). Blocks
   * for the append and, when the queue acknowledges with fsync, the durability barrier.
   *
   * @throws io.queuebridge.core.QueueException if the queue cannot be created or the append fails
   *     (nothing is enqueued)
   */
  @Override
  public String dispatch(JobMessage message) throws InterruptedException {
    Objects.requireNonNull(message, "message");
    if (Thread.interrupted()) {
      throw new InterruptedException("dispatch interrupted");
    }
    String queue = message.queue();
    if (queue.isEmpty()) {
      throw new InvalidQueueException("dispatch", queue);
    }
    ReentrantReadWriteLock.ReadLock admit = admission.readLock();
    admit.lockInterruptibly();
    try {
      if (Thread.interrupted()) {
        throw new InterruptedException("dispatch interrupted");
      }
      if (closed) {
        throw closedError();
      }
      String id = message.id().isEmpty() ? UUID.randomUUID().toString() : message.id();
      ensureQueue(queue);
      PublishRequest.Builder request =
          PublishRequest.builder("$queue/" + queue)
              .value(message.payload())
              .property(JOB_ID, id)
              .property(JOB_NAME, message.name());
      message.metadata().forEach((k, v) -> request.property(METADATA_PREFIX + k, v));
      manager.publishTo(queue, request.build());
      return id;
    } finally {
      admit.unlock();
    }
  }

  private void ensureQueue(String queue) {
    try {
      manager.getQueue(queue);
    } catch (QueueNotFoundException absent) {
      try {
        manager.createQueue(queueTemplate.apply(queue));
      } catch (QueueAlreadyExistsException raced) {
        // another dispatcher or consumer made it
      }
    }
  }

  /** {@code J-CONS} and {@code J-HAND} over the group engine. */
  @Override
  public void consume(String queue, JobHandler handler) throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException("consume interrupted");
    }
    if (queue == null || queue.isEmpty()) {
      throw new InvalidQueueException("consume", queue);
    }
    if (handler == null) {
      throw new InvalidHandlerException(queue);
    }
    lock.lock();
    try {
      if (closed) {
        throw closedError();
      }
      activeConsumers++;
    } finally {
      lock.unlock();
    }
    String me = "job-" + instance + "-" + consumerSequence.incrementAndGet();
    boolean joined = false;
    try {
      ensureQueue(queue);
      manager.subscribeExisting(queue, "", me, group);
      joined = true;
      Waiter waiter = new Waiter(queue);
      while (true) {
        handle(queue, handler, reserve(queue, me, waiter));
      }
    } finally {
      if (joined) {
        try {
          manager.unsubscribe(queue, "", me, group);
        } catch (RuntimeException e) {
          log.debug("job consumer {} could not leave group {} of queue '{}'", me, group, queue, e);
        }
      }
      lock.lock();
      try {
        if (--activeConsumers == 0) {
          idle.signalAll();
        }
      } finally {
        lock.unlock();
      }
    }
  }

  private GroupDelivery reserve(String queue, String me, Waiter waiter)
      throws InterruptedException {
    while (true) {
      if (Thread.interrupted()) {
        throw new InterruptedException("consume interrupted");
      }
      if (closed) {
        throw closedError();
      }
      List<GroupDelivery> claimed;
      try {
        claimed = groups.claimBatch(queue, group, me, 1);
      } catch (ConsumerNotFoundException removed) {
        // removed as stale while a long job ran (no claim, no heartbeat): join again
        log.info(
            "job consumer {} of queue '{}' was removed from group {}; rejoining", me, queue, group);
        manager.subscribeExisting(queue, "", me, group);
        continue;
      }
      if (!claimed.isEmpty()) {
        return claimed.get(0);
      }
      waiter.await();
    }
  }

  /** Waits for work after an empty claim without spinning when the cursor cannot move. */
  private final class Waiter {
    private final String queue;
    private long lastCursor = -1;
    private boolean lastReady;

    Waiter(String queue) {
      this.queue = queue;
    }

    void await() throws InterruptedException {
      long cursor = groups.group(queue, group).map(ConsumerGroupState::cursor).orElse(0L);
      if (cursor == lastCursor && lastReady) {
        // the tail is beyond the cursor but nothing was claimable (PEL full): just poll
        lock.lockInterruptibly();
        try {
          if (!closed) {
            changed.awaitNanos(pollInterval.toNanos());
          }
        } finally {
          lock.unlock();
        }
        lastReady = false;
        return;
      }
      lastCursor = cursor;
      lastReady = manager.awaitAppend(queue, cursor, pollInterval);
    }
  }

  private void handle(String queue, JobHandler handler, GroupDelivery claimed)
      throws InterruptedException {
    QueueDelivery delivery = new QueueDelivery(claimed, toJob(claimed));
    String id = delivery.job.id();
    Exception failure = null;
    try {
      handler.handle(delivery);
    } catch (Exception e) {
      failure = e;
    } catch (Error e) {
      delivery.cleanup(e);
      throw e;
    }
    if (failure != null) {
      log.warn(
          "job delivery handler failed on job {} of queue '{}'; failing the delivery",
          id,
          queue,
          failure);
      delivery.cleanup(failure);
      if (failure instanceof InterruptedException ie) {
        throw ie;
      }
      throw new JobHandlerException(id, queue, failure);
    }
    if (delivery.state.get() != SETTLED) {
      DeliveryUnsettledException unsettled = new DeliveryUnsettledException(id, queue);
      log.warn("{}; failing the delivery", unsettled.getMessage());
      delivery.cleanup(unsettled);
      throw unsettled;
    }
  }

  private static JobMessage toJob(GroupDelivery d) {
    Map<String, String> props = d.message().properties();
    Map<String, String> metadata = new LinkedHashMap<>();
    props.forEach(
        (k, v) -> {
          if (k.startsWith(METADATA_PREFIX)) {
            metadata.put(k.substring(METADATA_PREFIX.length()), v);
          }
        });
    return JobMessage.builder(d.queue())
        .id(props.getOrDefault(JOB_ID, d.message().id()))
        .name(props.get(JOB_NAME))
        .payload(d.message().valueUnsafe())
        .metadata(metadata)
        .attempts(d.deliveryCount())
        .build();
  }

  /**
   * {@code J-STOP}: closes the driver (dispatch, consume, start and retry are refused from now on;
   * a dispatch in progress finishes first), wakes the consumers (they end with {@link
   * DriverClosedException} within a poll interval) and waits up to {@code timeout} for them and
   * their handlers. Discards nothing: queued and delayed jobs stay in the store.
   */
  @Override
  public boolean stop(Duration timeout) throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    ReentrantReadWriteLock.WriteLock close = admission.writeLock();
    close.lock();
    try {
      closed = true;
    } finally {
      close.unlock();
    }
    lock.lock();
    try {
      changed.signalAll();
      if (Thread.interrupted()) {
        throw new InterruptedException("stop interrupted; the driver is stopped");
      }
      long nanos = saturatedNanos(timeout);
      while (activeConsumers > 0) {
        if (nanos <= 0) {
          return false;
        }
        nanos = idle.awaitNanos(nanos);
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** {@value #MESSAGING_SYSTEM}. */
  @Override
  public String messagingSystem() {
    return MESSAGING_SYSTEM;
  }

  /** The consumer group job consumers join. */
  public String group() {
    return group;
  }

  private static DriverClosedException closedError() {
    return new DriverClosedException(MESSAGING_SYSTEM);
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }

  @FunctionalInterface
  private interface Settlement {
    void run();
  }

  /** A settle-once delivery ({@code J-SETTLE}) over one claim. */
  private final class QueueDelivery implements Delivery {
    final GroupDelivery claim;
    final JobMessage job;
    final AtomicInteger state = new AtomicInteger(UNSETTLED);

    QueueDelivery(GroupDelivery claim, JobMessage job) {
      this.claim = claim;
      this.job = job;
    }

    @Override
    public JobMessage message() {
      return job;
    }

    @Override
    public void acknowledge() throws InterruptedException {
      settle(true, claim::ack);
    }

    @Override
    public void retry(Duration delay) throws InterruptedException {
      Objects.requireNonNull(delay, "delay");
      settle(
          true,
          () -> {
            if (closed) {
              throw closedError();
            }
            if (delay.isZero()) {
              claim.nack();
            } else {
              claim.nack(delay.isNegative() ? Duration.ZERO : delay);
            }
          });
    }

    @Override
    public void reject() throws InterruptedException {
      settle(true, () -> claim.reject("rejected by the job handler"));
    }

    @Override
    public void fail(Throwable cause) throws InterruptedException {
      settle(true, () -> failNow(cause));
    }

    /** The driver's terminal cleanup: fail, ignoring interruption and an earlier settlement. */
    void cleanup(Throwable cause) {
      try {
        settle(false, () -> failNow(cause));
      } catch (DeliverySettledException | InterruptedException e) {
        // The handler's own settlement stands (InterruptedException cannot happen here).
      } catch (RuntimeException e) {
        log.warn(
            "cannot fail job {} of queue '{}'; it is redelivered after its visibility timeout",
            job.id(),
            job.queue(),
            e);
      }
    }

    private void failNow(Throwable cause) {
      if (cause != null) {
        log.warn("job {} of queue '{}' failed; retrying it", job.id(), job.queue(), cause);
      }
      claim.nack();
    }

    private void settle(boolean checkInterrupt, Settlement action) throws InterruptedException {
      if (!state.compareAndSet(UNSETTLED, SETTLING)) {
        throw new DeliverySettledException(job.id(), job.queue());
      }
      boolean done = false;
      try {
        if (checkInterrupt && Thread.interrupted()) {
          throw new InterruptedException("settlement interrupted");
        }
        action.run();
        done = true;
      } finally {
        state.set(done ? SETTLED : UNSETTLED);
      }
    }
  }

  /** Configures a {@link QueueJobDriver}. Not thread-safe. */
  public static final class Builder {
    private final QueueManager manager;
    private String group = DEFAULT_GROUP;
    private Function<String, QueueConfig> queueTemplate =
        name ->
            QueueConfig.durable(name)
                .topics("$queue/" + name + "/#")
                .messageTtl(Duration.ZERO)
                .build();
    private Duration pollInterval = Duration.ofMillis(100);
    private Logger logger = LoggerFactory.getLogger(QueueJobDriver.class);

    private Builder(QueueManager manager) {
      this.manager = Objects.requireNonNull(manager, "manager");
    }

    /**
     * The queue-mode group every job consumer joins; {@value QueueJobDriver#DEFAULT_GROUP} by
     * default.
     */
    public Builder group(String value) {
      Objects.requireNonNull(value, "group");
      if (value.isEmpty()) {
        throw new IllegalArgumentException("job consumer group must be non-empty");
      }
      this.group = value;
      return this;
    }

    /** The configuration of a job queue created on first use, from its name. */
    public Builder queueTemplate(Function<String, QueueConfig> value) {
      this.queueTemplate = Objects.requireNonNull(value, "queueTemplate");
      return this;
    }

    /**
     * The longest a consumer with nothing to claim waits before claiming again; positive; 100 ms by
     * default. Bounds how late a due retry or an expired claim is picked up and how long a consumer
     * takes to notice {@link #stop}.
     */
    public Builder pollInterval(Duration value) {
      Objects.requireNonNull(value, "pollInterval");
      if (value.isZero() || value.isNegative()) {
        throw new IllegalArgumentException("pollInterval must be positive, got " + value);
      }
      this.pollInterval = value;
      return this;
    }

    /** Where delivery failures are logged. */
    public Builder logger(Logger value) {
      this.logger = Objects.requireNonNull(value, "logger");
      return this;
    }

    public QueueJobDriver build() {
      return new QueueJobDriver(this);
    }
  }
}
