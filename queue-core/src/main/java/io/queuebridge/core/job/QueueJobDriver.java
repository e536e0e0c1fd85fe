package io.queuebridge.core.job;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.config.PeriodicScheduler;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.ConsumerNotFoundException;
import io.queuebridge.core.errors.DriverClosedException;
import io.queuebridge.core.errors.InvalidQueueException;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.ConsumerGroupState;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A durable {@link JobDriver} on a {@link QueueManager}'s work queues, over any store (BEHAVIOUR
 * J-QUEUE: the job API of J-DRIVER on the consumer-group engine of Q-SUB to Q-DLQ): jobs survive a
 * restart on a persistent store and are shared by every driver on the same store.
 *
 * <h2>Mapping</h2>
 *
 * <ul>
 *   <li><b>Queue</b>: a job queue is a classic queue of the same name, created on first use from
 *       the driver's queue template (by default a durable classic queue with the filter {@code
 *       $queue/<name>/#}, no TTL and the default retry policy and dead-letter queue). A queue that
 *       exists is used as it is, so its retry policy, delivery timeout and DLQ settings are the
 *       operator's. Job queue names must be valid queue names (BEHAVIOUR S-NAMES).
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
 * {@link #stop} discards nothing (the jobs stay in the store for the next driver). Settlements do
 * store I/O and may block for it.
 *
 * <h2>Long jobs</h2>
 *
 * While a handler runs, the driver renews its claim every third of the queue's visibility timeout
 * (the queue's {@code deliveryTimeout}, or the manager's {@code visibilityTimeout} when set) on its
 * renewal scheduler ({@link Builder#scheduler}), so a job that runs longer than the timeout is not
 * handed to another consumer; renewing stops when the delivery is settled (a renewal never pushes
 * back a retry's delay) and when the handler returns. Only a claim that could not be renewed in
 * time (the process stalled or died) becomes claimable again by another consumer; a late settlement
 * of it then fails with {@link io.queuebridge.core.errors.MessageNotPendingException} and the
 * delivery stays unsettled.
 *
 * <h2>Waiting</h2>
 *
 * A consumer with nothing to claim waits for an append to its queue ({@link
 * QueueManager#awaitAppend}) for at most the poll interval, then claims again; so new jobs are
 * picked up at once, retries and expired claims within a poll interval of falling due, and {@link
 * #stop} is noticed within a poll interval. Claims count as the member's heartbeat; a consumer
 * removed from the group as stale while one job ran longer than the queue's consumer timeout (its
 * {@code heartbeatTimeout}, else the manager's {@code consumerTimeout}) joins again at its next
 * claim. Consumers do not run while the manager is stopped (they end with its {@link
 * IllegalStateException}).
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

  /** Renewals per visibility timeout while a handler runs. */
  private static final int RENEWALS_PER_TIMEOUT = 3;

  private static final Duration MIN_RENEWAL_PERIOD = Duration.ofMillis(1);

  private final QueueManager manager;
  private final ConsumerGroups groups;
  private final String group;
  private final Function<String, QueueConfig> queueTemplate;
  private final Duration pollInterval;
  private final PeriodicScheduler renewals;
  private final Logger log;
  private final String instance = UUID.randomUUID().toString().substring(0, 8);
  private final AtomicLong consumerSequence = new AtomicLong();

  // Admission: dispatches hold the read side across their append, stop takes the write side to
  // close, so no dispatch is accepted after stop returned.
  private final ReentrantReadWriteLock admission = new ReentrantReadWriteLock();
  private final ReentrantLock lock = new ReentrantLock();
  private final ActiveConsumers consumers = new ActiveConsumers(lock);
  private final Condition changed = lock.newCondition();
  private volatile boolean closed;

  private QueueJobDriver(Builder b) {
    this.manager = b.manager;
    this.groups = b.manager.consumerGroups();
    this.group = b.group;
    this.queueTemplate = b.queueTemplate;
    this.pollInterval = b.pollInterval;
    this.renewals = b.scheduler != null ? b.scheduler : daemonScheduler();
    this.log = b.logger;
  }

  /** A builder over {@code manager}. */
  public static Builder builder(QueueManager manager) {
    return new Builder(manager);
  }

  /** BEHAVIOUR J-START: interruption first, then closure; otherwise nothing to do. */
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
   * BEHAVIOUR J-DISP: appends the job to its queue (created from the template when absent). Blocks
   * for the append and, when the queue acknowledges with fsync, the durability barrier.
   *
   * @throws io.queuebridge.core.errors.QueueException if the queue cannot be created or the append
   *     fails (nothing is enqueued)
   */
  @Override
  public String dispatch(JobMessage message, Duration delay) throws InterruptedException {
    Objects.requireNonNull(message, "message");
    Waits.checkDelay(delay);
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
      if (!delay.isZero()) {
        request.delay(delay);
      }
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

  /** BEHAVIOUR J-CONS and J-HAND over the group engine. */
  @Override
  public void consume(String queue, JobHandler handler) throws InterruptedException {
    ActiveConsumers.checkConsume(queue, handler);
    consumers.enter(() -> closed, QueueJobDriver::closedError);
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
      consumers.leave();
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
    PeriodicScheduler.Cancellable renewal = renewWhileRunning(queue, claimed);
    try {
      SettleOnceDelivery.run(handler, new QueueDelivery(claimed), log);
    } finally {
      renewal.cancel();
    }
  }

  /**
   * Renews the claim {@value #RENEWALS_PER_TIMEOUT} times per visibility timeout until the handler
   * returns; a renewal of a delivery that is settling or settled changes nothing ({@link
   * GroupDelivery#renew()}), so a retry's delay is never pushed back.
   */
  private PeriodicScheduler.Cancellable renewWhileRunning(String queue, GroupDelivery claim) {
    Duration visibility = groups.settings().visibilityTimeout();
    try {
      if (visibility.isZero()) {
        visibility = manager.getQueue(queue).deliveryTimeout();
      }
    } catch (RuntimeException e) {
      log.debug("cannot read the delivery timeout of queue '{}'; no renewals", queue, e);
      return () -> {};
    }
    Duration period = visibility.dividedBy(RENEWALS_PER_TIMEOUT);
    if (period.compareTo(MIN_RENEWAL_PERIOD) < 0) {
      period = MIN_RENEWAL_PERIOD;
    }
    return renewals.schedule(
        "job-renewal-" + queue,
        period,
        () -> {
          try {
            claim.renew();
          } catch (RuntimeException e) {
            log.debug("cannot renew the claim of offset {} on '{}'", claim.offset(), queue, e);
          }
        });
  }

  private static PeriodicScheduler daemonScheduler() {
    ScheduledThreadPoolExecutor executor =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "queuebridge-job-renewal");
              t.setDaemon(true);
              return t;
            });
    executor.setRemoveOnCancelPolicy(true);
    executor.setKeepAliveTime(10, TimeUnit.SECONDS); // no thread while no job runs
    executor.allowCoreThreadTimeOut(true);
    return (name, period, task) -> {
      long nanos = period.toNanos();
      var future = executor.scheduleWithFixedDelay(task, nanos, nanos, TimeUnit.NANOSECONDS);
      return () -> future.cancel(false);
    };
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
   * BEHAVIOUR J-STOP: closes the driver (dispatch, consume, start and retry are refused from now
   * on; a dispatch in progress finishes first), wakes the consumers (they end with {@link
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

  /** The consumer group job consumers join. */
  public String group() {
    return group;
  }

  private static DriverClosedException closedError() {
    return new DriverClosedException(MESSAGING_SYSTEM);
  }

  /** A settle-once delivery (BEHAVIOUR J-SETTLE) over one claim. */
  private final class QueueDelivery extends SettleOnceDelivery {
    private final GroupDelivery claim;

    QueueDelivery(GroupDelivery claim) {
      super(toJob(claim));
      this.claim = claim;
    }

    @Override
    void onAcknowledge() {
      claim.ack();
    }

    @Override
    void onRetry(Duration delay) {
      if (closed) {
        throw closedError();
      }
      if (delay.isZero()) {
        claim.nack();
      } else {
        claim.nack(delay.isNegative() ? Duration.ZERO : delay);
      }
    }

    @Override
    void onReject() {
      claim.reject("rejected by the job handler");
    }

    @Override
    void onFail(Throwable cause) {
      if (cause != null) {
        log.warn(
            "job {} of queue '{}' failed; retrying it", message().id(), message().queue(), cause);
      }
      claim.nack();
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
    private PeriodicScheduler scheduler;
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

    /**
     * Runs the claim renewals of running jobs (a renewal every third of the queue's visibility
     * timeout while a handler runs); by default one daemon thread of the driver's own, alive only
     * while jobs run. Inject one to drive renewals from a test clock.
     */
    public Builder scheduler(PeriodicScheduler value) {
      this.scheduler = Objects.requireNonNull(value, "scheduler");
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
