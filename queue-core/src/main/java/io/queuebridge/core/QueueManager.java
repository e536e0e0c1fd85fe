package io.queuebridge.core;

import io.queuebridge.core.delivery.ConsumeOptions;
import io.queuebridge.core.delivery.DeliveryHandler;
import io.queuebridge.core.delivery.Subscription;
import io.queuebridge.core.errors.CaptureStillRunningException;
import io.queuebridge.core.errors.DeliveryStillRunningException;
import io.queuebridge.core.errors.DurableSyncUnsupportedException;
import io.queuebridge.core.errors.GroupModeMismatchException;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException.FieldMismatch;
import io.queuebridge.core.errors.ProtectedQueueMutationException;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.errors.QueueFullException;
import io.queuebridge.core.errors.QueueMessageTooLargeException;
import io.queuebridge.core.errors.QueueNotDurableException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueNotProtectedException;
import io.queuebridge.core.errors.QueueNotReservedException;
import io.queuebridge.core.errors.QueueNotStreamException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.ReservedQueueException;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.group.GroupSettings;
import io.queuebridge.core.internal.capture.CaptureDispatcher;
import io.queuebridge.core.internal.delivery.DeliveryEngine;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.topic.TopicFilters;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.IntConsumer;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The queue core's facade: queue administration, the three publish paths and protected durable
 * streams over one {@link Storage} (BEHAVIOUR M-CONFIG to Q-ERR).
 *
 * <p><b>Publish paths.</b>
 *
 * <ul>
 *   <li>{@link #publish} — strict and synchronous (BEHAVIOUR Q-PUB): routes by topic (or by an
 *       explicit target list), auto-creates an ephemeral queue when nothing matches, appends to
 *       every target with the queue's acknowledgement policy and reports every failure.
 *   <li>{@link #publishToMatchingQueues} — topic capture (BEHAVIOUR Q-CAP): resolves the matching
 *       queues on the caller's thread and hands the appends to background lanes; never blocks on
 *       the store, never auto-creates; losses are counted in {@link #metrics()}.
 *   <li>{@link #publishToDurableStream} and {@link #publishBatchToDurableStream} — exact and
 *       durable (BEHAVIOUR Q-EXACT): one protected, reserved, durable stream, every precondition
 *       checked before anything is appended, acknowledged only after a durability barrier.
 * </ul>
 *
 * <p><b>Limits</b> (BEHAVIOUR L-LIMITS) are enforced on every publish path before the append: a
 * message larger than the queue's {@code maxMessageSize} ({@link Message#size()}: key + value +
 * headers) is refused with {@link QueueMessageTooLargeException}; a classic queue holding {@code
 * maxDepth} messages refuses with {@link QueueFullException} (capture counts it as dropped). The
 * depth check reads the queue's count before appending, so concurrent publishers may overshoot
 * {@code maxDepth} by at most their number of messages, or, for batch publishes ({@link
 * #publishBatchDurably}), by up to one batch per other concurrent publisher.
 *
 * <p><b>Consumers.</b> {@link #subscribe} / {@link #subscribeExisting} / {@link #unsubscribe}
 * manage group membership (BEHAVIOUR Q-SUB) for pull consumers, which then claim and settle through
 * {@link #consumerGroups()}; {@link #consume} registers a push subscription whose handler the
 * delivery engine ({@link DeliveryEngine}, BEHAVIOUR Q-DEL) calls with settle-once {@link
 * io.queuebridge.core.group.GroupDelivery} handles (BEHAVIOUR Q-SETTLE). Visibility: a queue's
 * {@code deliveryTimeout} is its visibility timeout unless the configuration sets a manager-wide
 * {@link QueueManagerConfig#visibilityTimeout()} (BEHAVIOUR L-LIMITS).
 *
 * <p><b>Lifecycle.</b> Build, {@link #start()}, use, {@link #stop()}. Administration, publishing
 * and subscribing work before {@code start} too (captures wait in their lanes, push deliveries
 * begin at {@code start}). {@code start} runs the periodic loops on the configured {@link
 * PeriodicScheduler} (or a daemon thread of its own): the retention pass every {@code
 * retentionCheckInterval}, the stale-consumer cleanup and ephemeral-queue expiry every {@code
 * consumerTimeout}, and the delivery sweep every second. After {@code stop} every operation that
 * touches the store throws {@link IllegalStateException}. The manager does not own the store:
 * whoever opened it closes it, and only once {@link #shutdownComplete()} is true.
 *
 * <p><b>Errors.</b> The typed {@link QueueException}s listed per method. Exceptions a store raises
 * that are not {@code QueueException}s are wrapped in a {@link QueueStoreException} naming what was
 * being done, with the cause kept; {@code QueueException}s from the store pass through unchanged so
 * that callers can classify them by type.
 *
 * <p><b>Concurrency.</b> Thread-safe. One read/write lock guards the protected-contract registry:
 * creates, updates and deletes hold its read side across their store write, {@link
 * #replaceProtectedQueueContracts} holds the write side across validation and swap, so no mutation
 * can fall between the two. Exact publishes take the read side only to copy their contract out and
 * never hold it across an append, so a slow barrier never blocks a contract reload.
 */
public final class QueueManager {
  private static final Logger LOG = LoggerFactory.getLogger(QueueManager.class);
  private static final String AUTO_QUEUE_ROOT = "$queue/";

  /** Process-wide message id sequence (BEHAVIOUR Q-MSG): not unique across restarts. */
  private static final AtomicLong MESSAGE_IDS = new AtomicLong();

  private enum State {
    NEW,
    RUNNING,
    STOPPED
  }

  private final Storage storage;
  private final DurableQueueStore queues;
  private final ConsumerGroupStore groups;
  private final QueueManagerConfig config;
  private final Clock clock;
  private final AckDurability defaultAckDurability;
  private final CaptureDispatcher capture;
  private final GroupCoordinator consumerGroups;
  private final DeliveryEngine delivery;

  private final ReentrantReadWriteLock contractLock = new ReentrantReadWriteLock();
  // Replaced wholesale under the write side of contractLock; an unmodifiable map sorted by name.
  private volatile Map<String, QueueConfig> contracts;
  // The error building the configured contracts, surfaced by validate/start until a replace.
  private volatile RuntimeException contractBuildError;

  private final Object lifecycle = new Object();
  private volatile State state = State.NEW;
  private volatile boolean shutdownComplete;
  private volatile DeliveryScheduler deliveryScheduler;

  // The periodic loops: tasks on the scheduler, a gate stop takes to wait for a running one.
  private final ReentrantReadWriteLock loopGate = new ReentrantReadWriteLock();
  private final List<PeriodicScheduler.Cancellable> loopTasks = new ArrayList<>(); // lifecycle
  private ThreadPeriodicScheduler ownScheduler; // guarded by lifecycle
  private volatile boolean loopsStopped;

  /**
   * The delivery engine's hook: told after every successful append, queue creation and subscription
   * ({@link #schedule}) and after a queue is deleted ({@link #unschedule}). By default it forwards
   * to the manager's {@link DeliveryEngine}; tests may replace it. Implementations must not block;
   * they run on the appending thread (a publisher or a capture worker).
   */
  interface DeliveryScheduler {
    DeliveryScheduler NONE =
        new DeliveryScheduler() {
          @Override
          public void schedule(String queue) {}

          @Override
          public void unschedule(String queue) {}
        };

    void schedule(String queue);

    void unschedule(String queue);
  }

  /**
   * A manager over {@code storage}. Starts no thread. If the configured acknowledgement policy is
   * {@code FSYNC} but the store cannot make an append durable, logs a warning and uses {@code
   * BUFFERED}. Invalid protected contracts do not fail construction: the error is remembered and
   * thrown by {@link #validateProtectedQueueContracts()} and {@link #start()}.
   *
   * @param storage the store; not owned: the manager never closes it
   * @param config the configuration
   */
  public QueueManager(Storage storage, QueueManagerConfig config) {
    this.storage = Objects.requireNonNull(storage, "storage");
    this.config = Objects.requireNonNull(config, "config");
    this.queues = Objects.requireNonNull(storage.queues(), "storage.queues()");
    this.groups = Objects.requireNonNull(storage.groups(), "storage.groups()");
    this.clock = config.clock();
    if (config.ackDurability() == AckDurability.FSYNC && !queues.supportsDurableSync()) {
      LOG.warn(
          "Ack durability fsync requested but store {} cannot make an append durable;"
              + " acknowledging buffered",
          storage.description());
      this.defaultAckDurability = AckDurability.BUFFERED;
    } else {
      this.defaultAckDurability = config.ackDurability();
    }
    Map<String, QueueConfig> built;
    try {
      built = ProtectedContracts.build(config.protectedQueueContracts());
    } catch (InvalidConfigException e) {
      contractBuildError = e;
      built = Map.of();
    }
    this.contracts = built;
    GroupCoordinator.Builder groupsBuilder =
        GroupCoordinator.builder(queues, groups)
            .clock(clock)
            .onRedeliveryDue((queue, group, at) -> redeliveryDue(queue, at));
    if (config.onConsumerRemoved() != null) {
      groupsBuilder.onConsumerRemoved(config.onConsumerRemoved());
    }
    this.consumerGroups =
        groupsBuilder
            .settings(
                new GroupSettings(
                    config.visibilityTimeout(),
                    config.maxDeliveryCount(),
                    config.claimBatchSize(),
                    config.autoCommitInterval(),
                    config.maxPelSize(),
                    config.dlqTopicPrefix(),
                    config.consumerTimeout()))
            .build();
    this.delivery =
        DeliveryEngine.builder(consumerGroups)
            .clock(clock)
            .workers(config.deliveryWorkers())
            .threadPrefix("queuebridge-delivery")
            .build();
    this.deliveryScheduler =
        new DeliveryScheduler() {
          @Override
          public void schedule(String queue) {
            delivery.schedule(queue);
          }

          @Override
          public void unschedule(String queue) {
            delivery.unschedule(queue);
          }
        };
    this.capture =
        new CaptureDispatcher(
            "queuebridge",
            config.captureWorkers(),
            config.captureQueueDepth(),
            config.captureDrainTimeout(),
            clock);
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle (BEHAVIOUR M-START, M-LOOPS, Q-STOP)
  // ------------------------------------------------------------------------------------------

  /**
   * Starts the manager (BEHAVIOUR M-START): creates the configured queues that do not exist (a
   * stored queue's config wins over the configured one), validates the protected contracts, deletes
   * ephemeral queues that expired while the manager was down, starts the delivery engine (which
   * schedules every queue with a push subscription), the capture workers, and the periodic loops:
   * retention every {@code retentionCheckInterval}, stale-consumer cleanup with ephemeral-queue
   * expiry every {@code consumerTimeout}. Blocks for the store work of the first steps. If one of
   * them fails, the manager stays unstarted and {@code start} may be called again.
   *
   * @throws IllegalStateException if already started or stopped
   * @throws ProtectedQueueContractDriftException if a protected queue is missing or drifted
   * @throws DurableSyncUnsupportedException if contracts exist but the store cannot sync
   * @throws InvalidConfigException if the configured contracts are invalid
   */
  public void start() {
    synchronized (lifecycle) {
      if (state == State.RUNNING) {
        throw new IllegalStateException("queue manager already started");
      }
      if (state == State.STOPPED) {
        throw new IllegalStateException("queue manager is stopped; build a new one");
      }
      for (QueueConfig q : config.queueConfigs()) {
        try {
          queues.createQueue(q);
        } catch (QueueAlreadyExistsException e) {
          LOG.debug("Configured queue {} exists; keeping the stored configuration", q.name());
        } catch (RuntimeException e) {
          throw wrap(q.name(), "create configured queue " + q.name(), e);
        }
      }
      validateProtectedQueueContracts();
      deleteExpiredEphemeralQueues();
      PeriodicScheduler loops = config.scheduler();
      if (loops == null) {
        ownScheduler = new ThreadPeriodicScheduler("queuebridge-loops");
        loops = ownScheduler;
      }
      delivery.start(loops);
      capture.start();
      loopTasks.add(
          loops.schedule(
              "retention",
              config.retentionCheckInterval(),
              () -> runLoop("retention", consumerGroups::retentionPass)));
      loopTasks.add(
          loops.schedule(
              "consumer-cleanup",
              config.consumerTimeout(),
              () -> runLoop("consumer cleanup", this::cleanUpConsumers)));
      state = State.RUNNING;
    }
  }

  /** The group engine's redelivery times go to the delivery engine's timers. */
  private void redeliveryDue(String queue, Instant at) {
    DeliveryEngine engine = delivery; // null only while the constructor runs
    if (engine != null) {
      engine.redeliveryDue(queue, at);
    }
  }

  /** Stale members out, then expired ephemeral queues (BEHAVIOUR Q-HEARTBEAT, Q-EPHEMERAL). */
  private void cleanUpConsumers() {
    Instant now = clock.instant();
    consumerGroups.removeStaleConsumers(now);
    for (String deleted : consumerGroups.expireEphemeralQueues(now)) {
      deliveryScheduler.unschedule(deleted);
    }
  }

  private void runLoop(String name, Runnable body) {
    ReentrantReadWriteLock.ReadLock gate = loopGate.readLock();
    if (!gate.tryLock()) {
      return; // stop is waiting for the loops
    }
    try {
      if (!loopsStopped) {
        body.run();
      }
    } catch (RuntimeException e) {
      LOG.warn("The {} loop failed; it runs again next period", name, e);
    } finally {
      gate.unlock();
    }
  }

  /** Cancels the loops and waits up to {@code timeout} for one in progress; whether none is. */
  private boolean stopLoops(Duration timeout) {
    loopsStopped = true;
    for (PeriodicScheduler.Cancellable task : loopTasks) {
      task.cancel();
    }
    loopTasks.clear();
    if (ownScheduler != null) {
      ownScheduler.shutdown();
    }
    ReentrantReadWriteLock.WriteLock w = loopGate.writeLock();
    try {
      if (w.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        w.unlock();
        return true;
      }
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Stops the manager (BEHAVIOUR Q-STOP), in this order: capture first (no capture is accepted
   * afterwards; the lanes drain for at most the capture drain timeout; what is left is counted as
   * dropped), because its workers append and schedule deliveries; then the delivery engine (every
   * push subscription ends and leaves its group, running handlers are waited for, never
   * interrupted); then the periodic loops (cancelled, one in progress waited for). The last two
   * share the delivery drain timeout. Blocks up to the sum of both timeouts. Idempotent: once
   * shutdown is complete further calls return at once; after a {@link CaptureStillRunningException}
   * or {@link DeliveryStillRunningException} a further call waits again and completes the shutdown
   * if everything has left the store.
   *
   * @throws CaptureStillRunningException if a capture worker is still inside the store: the store
   *     must then not be closed, and {@link #shutdownComplete()} stays false
   * @throws DeliveryStillRunningException if a handler, the delivery dispatcher or a periodic loop
   *     is still running: the store must then not be closed, and {@link #shutdownComplete()} stays
   *     false
   */
  public void stop() {
    synchronized (lifecycle) {
      if (shutdownComplete) {
        return;
      }
      state = State.STOPPED;
      boolean captureQuiet = capture.stop();
      boolean deliveryQuiet = delivery.stop(config.deliveryDrainTimeout());
      boolean loopsQuiet = stopLoops(config.deliveryDrainTimeout());
      if (!captureQuiet) {
        throw new CaptureStillRunningException(capture.liveWorkers());
      }
      if (!deliveryQuiet || !loopsQuiet) {
        throw new DeliveryStillRunningException(delivery.liveThreads() + (loopsQuiet ? 0 : 1));
      }
      shutdownComplete = true;
    }
  }

  /**
   * Whether {@link #stop()} finished with every capture worker out of the store. The owner of the
   * store closes it only when this is true; otherwise it must leak it (closing it under an
   * in-flight append is a use-after-close).
   */
  public boolean shutdownComplete() {
    return shutdownComplete;
  }

  /**
   * A snapshot of every counter: capture, consumer groups (claims, steals, settlements, dead
   * letters, PEL) and push delivery. Never blocks; allowed after stop.
   */
  public QueueManagerMetrics metrics() {
    return new QueueManagerMetrics(
        capture.failures(), capture.dropped(), consumerGroups.metrics(), delivery.metrics());
  }

  // ------------------------------------------------------------------------------------------
  // Administration (BEHAVIOUR M-ADMIN)
  // ------------------------------------------------------------------------------------------

  /**
   * Creates a queue after checking its configuration fully ({@link QueueConfig#validate()}) and
   * against its protected contract, if it has one (the compared fields must be equal). Blocks for
   * the store write; durable on return in a persistent store.
   *
   * @throws InvalidConfigException if the configuration is invalid
   * @throws ProtectedQueueMutationException if the queue is protected and the configuration differs
   *     from the contract (nothing is created)
   * @throws QueueAlreadyExistsException if the queue exists
   * @throws IllegalStateException after {@link #stop()}
   */
  public void createQueue(QueueConfig queue) {
    ensureUsable();
    Objects.requireNonNull(queue, "queue").validate();
    ReentrantReadWriteLock.ReadLock read = contractLock.readLock();
    read.lock();
    try {
      checkProtectedMutation(queue);
      try {
        queues.createQueue(queue);
      } catch (RuntimeException e) {
        throw wrap(queue.name(), "create queue " + queue.name(), e);
      }
    } finally {
      read.unlock();
    }
    deliveryScheduler.schedule(queue.name());
  }

  /**
   * Replaces a queue's configuration, with the checks of {@link #createQueue}. A protected queue's
   * compared fields must stay equal to its contract; the others (such as {@code maxDepth}) may
   * change.
   *
   * @throws InvalidConfigException if the configuration is invalid
   * @throws ProtectedQueueMutationException if the queue is protected and the update would break
   *     the contract (nothing is changed)
   * @throws QueueNotFoundException if there is no such queue
   * @throws IllegalStateException after {@link #stop()}
   */
  public void updateQueue(QueueConfig queue) {
    ensureUsable();
    Objects.requireNonNull(queue, "queue").validate();
    ReentrantReadWriteLock.ReadLock read = contractLock.readLock();
    read.lock();
    try {
      checkProtectedMutation(queue);
      try {
        queues.getQueue(queue.name());
        queues.updateQueue(queue);
      } catch (RuntimeException e) {
        throw wrap(queue.name(), "update queue " + queue.name(), e);
      }
    } finally {
      read.unlock();
    }
  }

  /**
   * Deletes a queue with its log and consumer groups.
   *
   * @throws ProtectedQueueMutationException if the queue is protected (always refused)
   * @throws QueueNotFoundException if there is no such queue
   * @throws ReservedQueueException if the store refuses to delete a reserved queue
   * @throws IllegalStateException after {@link #stop()}
   */
  public void deleteQueue(String name) {
    ensureUsable();
    Objects.requireNonNull(name, "name");
    ReentrantReadWriteLock.ReadLock read = contractLock.readLock();
    read.lock();
    try {
      if (contracts.containsKey(name)) {
        throw new ProtectedQueueMutationException(name, "a protected queue cannot be deleted");
      }
      try {
        queues.getQueue(name);
        queues.deleteQueue(name);
      } catch (RuntimeException e) {
        throw wrap(name, "delete queue " + name, e);
      }
    } finally {
      read.unlock();
    }
    deliveryScheduler.unschedule(name);
  }

  /**
   * The stored configuration of a queue.
   *
   * @throws QueueNotFoundException if there is no such queue
   * @throws IllegalStateException after {@link #stop()}
   */
  public QueueConfig getQueue(String name) {
    ensureUsable();
    try {
      return queues.getQueue(Objects.requireNonNull(name, "name"));
    } catch (RuntimeException e) {
      throw wrap(name, "get queue " + name, e);
    }
  }

  /**
   * Every stored queue configuration, in no particular order; empty when there is none.
   *
   * @throws IllegalStateException after {@link #stop()}
   */
  public List<QueueConfig> listQueues() {
    ensureUsable();
    try {
      return queues.listQueues();
    } catch (RuntimeException e) {
      throw wrap(null, "list queues", e);
    }
  }

  /**
   * The queue's stored configuration, creating an ephemeral queue ({@link
   * QueueConfig#ephemeral(String)}) with {@code topics} (default {@code #}) when there is none. A
   * concurrent creation is tolerated: the configuration is re-read.
   *
   * @throws InvalidConfigException if a queue must be created and the name or topics are invalid
   * @throws ProtectedQueueMutationException if the queue is protected but absent (an ephemeral
   *     queue cannot match its contract)
   * @throws IllegalStateException after {@link #stop()}
   */
  public QueueConfig getOrCreateQueue(String name, String... topics) {
    ensureUsable();
    Objects.requireNonNull(name, "name");
    try {
      return queues.getQueue(name);
    } catch (QueueNotFoundException absent) {
      try {
        createQueue(QueueConfig.ephemeral(name).topics(List.of(topics)).build());
      } catch (QueueAlreadyExistsException raced) {
        LOG.debug("Queue {} was created concurrently; re-reading it", name);
      }
      return getQueue(name);
    } catch (RuntimeException e) {
      throw wrap(name, "get queue " + name, e);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Publish (BEHAVIOUR Q-PUB, Q-ACK)
  // ------------------------------------------------------------------------------------------

  /**
   * Publishes synchronously to every target queue (BEHAVIOUR Q-PUB).
   *
   * <p>Targets: the queues named in the {@link MessageProperties#FORWARD_TARGETS} property when it
   * is present (comma-separated; unknown queues are skipped with a warning), otherwise every queue
   * whose topic filters match the topic (configurations that cannot be read are skipped with a
   * warning). When no queue matches, an ephemeral queue is created and used: for {@code
   * $queue/<name>/...} the queue {@code <name>} with filter {@code $queue/<name>/#}, for any other
   * topic a queue named like the topic with the topic as its only filter.
   *
   * <p>Each target gets its own message: a fresh id, copies of key, value and headers, the
   * request's topic and timestamp, the request's properties without reserved names ({@link
   * MessageProperties#RESERVED}) plus {@code client_id} when the request has a client id, state
   * {@code QUEUED}, created now and expiring after the queue's {@code messageTtl} (never when
   * zero).
   *
   * <p>Acknowledgement (BEHAVIOUR Q-ACK): the queue's {@code ackDurability} unless {@code DEFAULT}
   * (an {@code FSYNC} override is treated as {@code BUFFERED} when the store cannot sync), else the
   * manager's. {@code FSYNC} on a durable queue appends with a durability barrier and returns only
   * after it; ephemeral queues never sync. Blocks for the appends and barriers.
   *
   * <p>Every target is attempted. If any fails, the first failure is thrown with the others added
   * as suppressed exceptions; the targets that succeeded keep the message. A request that resolves
   * to no target at all (every named target unknown) succeeds and writes nothing.
   *
   * @throws InvalidConfigException if the topic is not a valid topic name
   * @throws QueueMessageTooLargeException if the message is over a target's maximum size
   * @throws QueueFullException if a classic target holds its {@code maxDepth} messages
   * @throws DurableSyncUnsupportedException if a target needs a barrier the store cannot provide
   * @throws QueueStoreException if an append, a barrier or target resolution failed
   * @throws InterruptedException if interrupted before a barrier-backed append started: targets
   *     appended before it keep the message, it and later targets were not written
   * @throws IllegalStateException after {@link #stop()}
   */
  public void publish(PublishRequest request) throws InterruptedException {
    ensureUsable();
    Objects.requireNonNull(request, "request");
    TopicFilters.validateTopicName(request.topic());
    Message base = normalise(request);
    List<QueueConfig> targets = resolvePublishTargets(request);
    QueueException failure = null;
    for (QueueConfig target : targets) {
      try {
        appendTo(target, base);
      } catch (InterruptedException e) {
        if (failure != null) {
          e.addSuppressed(failure);
        }
        throw e;
      } catch (RuntimeException e) {
        QueueException wrapped = wrap(target.name(), "append to queue " + target.name(), e);
        if (failure == null) {
          failure = wrapped;
        } else {
          failure.addSuppressed(wrapped);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * Publishes synchronously to exactly {@code queue}: no routing by topic, no fan-out, no
   * auto-creation. Otherwise as {@link #publish}: the message is stamped the same way, the queue's
   * limits and acknowledgement policy apply, and the call blocks for the append (and the barrier,
   * under {@code FSYNC}). For writers that address one work queue, such as a job driver.
   *
   * @return the message's offset
   * @throws QueueNotFoundException if there is no such queue
   * @throws InvalidConfigException if the topic is not a valid topic name
   * @throws QueueMessageTooLargeException if the message is over the queue's maximum size
   * @throws QueueFullException if a classic queue holds its {@code maxDepth} messages
   * @throws DurableSyncUnsupportedException if the queue needs a barrier the store cannot provide
   * @throws QueueStoreException if the append or the barrier failed
   * @throws InterruptedException if interrupted before a barrier-backed append started (nothing
   *     written)
   * @throws IllegalStateException after {@link #stop()}
   */
  public long publishTo(String queue, PublishRequest request) throws InterruptedException {
    ensureUsable();
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(request, "request");
    TopicFilters.validateTopicName(request.topic());
    Message base = normalise(request);
    QueueConfig target = getQueue(queue);
    try {
      return appendTo(target, base);
    } catch (RuntimeException e) {
      throw wrap(queue, "append to queue " + queue, e);
    }
  }

  private List<QueueConfig> resolvePublishTargets(PublishRequest request) {
    String forced = request.properties().get(MessageProperties.FORWARD_TARGETS);
    if (forced != null) {
      List<QueueConfig> targets = new ArrayList<>();
      for (String name : parseTargets(forced)) {
        try {
          targets.add(queues.getQueue(name));
        } catch (QueueNotFoundException e) {
          LOG.warn("Publish to {} names unknown target queue {}; skipped", request.topic(), name);
        } catch (RuntimeException e) {
          throw wrap(name, "get target queue " + name, e);
        }
      }
      return targets;
    }
    List<String> names = findMatching(request.topic());
    if (!names.isEmpty()) {
      return loadMatched(names, request.topic());
    }
    String topic = request.topic();
    String name = topic;
    String filter = topic;
    if (topic.startsWith(AUTO_QUEUE_ROOT)) {
      int end = topic.indexOf('/', AUTO_QUEUE_ROOT.length());
      String first = topic.substring(AUTO_QUEUE_ROOT.length(), end < 0 ? topic.length() : end);
      if (!first.isEmpty()) {
        name = first;
        filter = AUTO_QUEUE_ROOT + first + "/#";
      }
    }
    QueueConfig created = getOrCreateQueue(name, filter);
    List<QueueConfig> targets = loadMatched(findMatching(topic), topic);
    return targets.isEmpty() ? List.of(created) : targets;
  }

  /** Comma-separated names, trimmed, empties dropped, duplicates removed, order kept. */
  static Set<String> parseTargets(String list) {
    Set<String> names = new LinkedHashSet<>();
    for (String part : list.split(",", -1)) {
      String name = part.trim();
      if (!name.isEmpty()) {
        names.add(name);
      }
    }
    return names;
  }

  private List<String> findMatching(String topic) {
    try {
      return queues.findMatchingQueues(topic);
    } catch (RuntimeException e) {
      throw wrap(null, "find queues matching topic " + topic, e);
    }
  }

  private List<QueueConfig> loadMatched(List<String> names, String topic) {
    List<QueueConfig> targets = new ArrayList<>(names.size());
    for (String name : names) {
      try {
        targets.add(queues.getQueue(name));
      } catch (RuntimeException e) {
        LOG.warn(
            "Queue {} matches topic {} but its config cannot be read; skipped", name, topic, e);
      }
    }
    return targets;
  }

  // ------------------------------------------------------------------------------------------
  // Capture (BEHAVIOUR Q-CAP, Q-CAPD)
  // ------------------------------------------------------------------------------------------

  /**
   * Captures a publish into every existing queue whose topic filters match its topic (BEHAVIOUR
   * Q-CAP). Resolves the targets on the calling thread (index lookup and configuration reads), then
   * hands one append per target to the capture lanes and returns without waiting; never creates a
   * queue. Never blocks on a slow store's appends. When nothing matches it returns without
   * allocating.
   *
   * <p>What happens afterwards is reported only through {@link #metrics()}: {@code captureFailures}
   * counts one per lost queue (a configuration that could not be read, a message over the queue's
   * maximum size, a failed append), {@code captureDropped} one per capture never attempted (full
   * lane, capture stopped, drain deadline passed, classic queue at {@code maxDepth}). The message
   * stored per queue is built as in {@link #publish}; the queue's acknowledgement policy applies on
   * the worker.
   *
   * @throws QueueException if the matching queues could not be resolved at all (counted as one
   *     capture failure)
   * @throws IllegalStateException after {@link #stop()}
   */
  public void publishToMatchingQueues(PublishRequest request) {
    ensureUsable();
    String topic = request.topic();
    List<String> names;
    try {
      names = queues.findMatchingQueues(topic);
    } catch (RuntimeException e) {
      capture.recordFailure();
      throw wrap(null, "find queues matching topic " + topic, e);
    }
    if (names.isEmpty()) {
      return;
    }
    // The request is immutable (its arrays and maps were copied when it was built), so holding it
    // is taking ownership; normalising builds new maps.
    Message base = normalise(request);
    for (String name : names) {
      QueueConfig target;
      try {
        target = queues.getQueue(name);
      } catch (RuntimeException e) {
        capture.recordFailure();
        LOG.warn(
            "Capture of topic {} lost for queue {}: its config cannot be read", topic, name, e);
        continue;
      }
      capture.enqueue(name, () -> captureInto(target, base));
    }
  }

  private void captureInto(QueueConfig target, Message base) throws InterruptedException {
    try {
      appendTo(target, base);
    } catch (QueueFullException e) {
      capture.recordDropped(target.name(), e.getMessage());
    }
  }

  // ------------------------------------------------------------------------------------------
  // Exact durable stream (BEHAVIOUR Q-EXACT)
  // ------------------------------------------------------------------------------------------

  /**
   * Appends to exactly {@code queue}, a protected durable stream, and returns the offset once a
   * durability barrier covers the message (BEHAVIOUR Q-EXACT). Never routes by topic, never creates
   * a queue. Every precondition is checked, in this order, before anything is appended:
   *
   * <ol>
   *   <li>the queue has a protected contract — else {@link QueueNotProtectedException};
   *   <li>the queue exists — else {@link QueueNotFoundException};
   *   <li>its stored configuration matches the contract — else {@link
   *       ProtectedQueueContractDriftException};
   *   <li>it is reserved, a stream and durable — else {@link QueueNotReservedException}, {@link
   *       QueueNotStreamException}, {@link QueueNotDurableException} (defence in depth: the
   *       contract check already implies them);
   *   <li>the store can make an append durable — else {@link DurableSyncUnsupportedException};
   *   <li>the message fits the queue's maximum size — else {@link QueueMessageTooLargeException};
   *   <li>the thread is not interrupted — else {@link InterruptedException}.
   * </ol>
   *
   * The contract is copied out of the registry under a brief read lock, never held during I/O.
   * Blocks for the append and the barrier (shared with concurrent callers by group commit).
   *
   * @return the message's offset
   * @throws QueueStoreException if the append or the barrier failed: do not acknowledge
   * @throws InterruptedException if interrupted before the append started (nothing written)
   * @throws IllegalStateException after {@link #stop()}
   */
  public long publishToDurableStream(String queue, PublishRequest request)
      throws InterruptedException {
    ensureUsable();
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(request, "request");
    QueueConfig stored = checkExactTarget(queue);
    Message base = normalise(request);
    checkSize(stored, base.size());
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before the append to " + queue);
    }
    Message message = newMessage(base, stored, clock.instant());
    long offset;
    try {
      offset = queues.appendAndSync(queue, message);
    } catch (RuntimeException e) {
      throw wrap(queue, "durable append to queue " + queue, e);
    }
    deliveryScheduler.schedule(queue);
    return offset;
  }

  /**
   * Appends a batch to exactly {@code queue} with the checks of {@link #publishToDurableStream}
   * (every message's size is checked before anything is written) and one durability barrier for the
   * whole batch, merging {@code checkpoints} into the queue's checkpoint map atomically with it:
   * after a crash both are there or neither is. Returns the first offset; the batch occupies
   * contiguous offsets in list order.
   *
   * @param checkpoints opaque positions of the writer's source (the sink's Kafka offsets); empty
   *     writes none
   * @return the offset of the first message
   * @throws IllegalArgumentException if {@code batch} is empty
   * @throws QueueMessageTooLargeException for the first message over the maximum size (nothing is
   *     written)
   * @throws QueueStoreException if the append or the barrier failed: do not acknowledge
   * @throws InterruptedException if interrupted before the append started (nothing written)
   * @throws IllegalStateException after {@link #stop()}
   */
  public long publishBatchToDurableStream(
      String queue, List<PublishRequest> batch, Map<String, String> checkpoints)
      throws InterruptedException {
    ensureUsable();
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(batch, "batch");
    Map<String, String> marks = Map.copyOf(Objects.requireNonNull(checkpoints, "checkpoints"));
    if (batch.isEmpty()) {
      throw new IllegalArgumentException("empty batch for durable stream " + queue);
    }
    QueueConfig stored = checkExactTarget(queue);
    return appendBatchAndSync(queue, stored, batch, marks, size -> {});
  }

  /**
   * Appends a batch to exactly {@code queue} (no fan-out, no auto-create) with one durability
   * barrier, merging {@code checkpoints} atomically with it — for writers that must acknowledge a
   * source only once its records are durable in an ordinary queue (the sink connector's {@code
   * matching} routing). A protected stream is written through {@link #publishBatchToDurableStream}
   * with all its checks. Otherwise every message is checked against the queue's maximum size, and a
   * classic queue's depth must leave room for the whole batch, before anything is written; messages
   * are stamped as {@link #publish} stamps them.
   *
   * @return the offset of the first message
   * @throws IllegalArgumentException if {@code batch} is empty
   * @throws QueueNotFoundException if there is no such queue
   * @throws QueueMessageTooLargeException for a message over the maximum size (nothing written)
   * @throws QueueFullException if the batch does not fit under a classic queue's maxDepth
   * @throws DurableSyncUnsupportedException if the store cannot make an append durable
   * @throws QueueStoreException if the append or the barrier failed: do not acknowledge
   * @throws InterruptedException if interrupted before the append started (nothing written)
   * @throws IllegalStateException after {@link #stop()}
   */
  public long publishBatchDurably(
      String queue, List<PublishRequest> batch, Map<String, String> checkpoints)
      throws InterruptedException {
    ensureUsable();
    Objects.requireNonNull(queue, "queue");
    if (contractOf(queue) != null) {
      return publishBatchToDurableStream(queue, batch, checkpoints);
    }
    Map<String, String> marks = Map.copyOf(Objects.requireNonNull(checkpoints, "checkpoints"));
    if (batch.isEmpty()) {
      throw new IllegalArgumentException("empty batch for queue " + queue);
    }
    QueueConfig stored;
    try {
      stored = queues.getQueue(queue);
    } catch (RuntimeException e) {
      throw wrap(queue, "get queue " + queue, e);
    }
    if (!queues.supportsDurableSync()) {
      throw new DurableSyncUnsupportedException(queue, storage.description());
    }
    return appendBatchAndSync(
        queue,
        stored,
        batch,
        marks,
        size -> {
          if (!stored.isStream()) {
            long depth = queues.count(queue);
            if (depth + size > stored.maxDepth()) {
              throw new QueueFullException(queue, depth, stored.maxDepth());
            }
          }
        });
  }

  /**
   * The common part of {@link #publishBatchToDurableStream} and {@link #publishBatchDurably}:
   * normalises and size-checks every message, runs {@code admit} with the batch size (it throws to
   * refuse the batch), then stamps the messages and appends them with one barrier. Nothing is
   * written unless every check passed.
   */
  private long appendBatchAndSync(
      String queue,
      QueueConfig stored,
      List<PublishRequest> batch,
      Map<String, String> marks,
      IntConsumer admit)
      throws InterruptedException {
    List<Message> bases = new ArrayList<>(batch.size());
    for (PublishRequest request : batch) {
      Message base = normalise(Objects.requireNonNull(request, "batch element"));
      checkSize(stored, base.size());
      bases.add(base);
    }
    admit.accept(bases.size());
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before the append to " + queue);
    }
    Instant now = clock.instant();
    List<Message> messages = new ArrayList<>(bases.size());
    for (Message base : bases) {
      messages.add(newMessage(base, stored, now));
    }
    long first;
    try {
      first = queues.appendBatchAndSync(queue, messages, marks);
    } catch (RuntimeException e) {
      throw wrap(queue, "durable batch append to queue " + queue, e);
    }
    deliveryScheduler.schedule(queue);
    return first;
  }

  /**
   * Names of the queues whose topic filters match {@code topic}, in first-match order (BEHAVIOUR
   * T-IDX); empty for an empty topic.
   */
  public List<String> findMatchingQueues(String topic) {
    ensureUsable();
    return queues.findMatchingQueues(topic);
  }

  /**
   * The checkpoints stored with the batches of {@link #publishBatchToDurableStream} and {@link
   * #publishBatchDurably} to {@code queue}; empty when none. A copy.
   *
   * @throws QueueNotFoundException if there is no such queue
   * @throws IllegalStateException after {@link #stop()}
   */
  public Map<String, String> durableStreamCheckpoints(String queue) {
    ensureUsable();
    try {
      return queues.checkpoints(Objects.requireNonNull(queue, "queue"));
    } catch (RuntimeException e) {
      throw wrap(queue, "read checkpoints of queue " + queue, e);
    }
  }

  /** Steps 1–5 of BEHAVIOUR Q-EXACT; returns the stored configuration. */
  private QueueConfig checkExactTarget(String queue) {
    QueueConfig contract = contractOf(queue);
    if (contract == null) {
      throw new QueueNotProtectedException(queue);
    }
    QueueConfig stored;
    try {
      stored = queues.getQueue(queue);
    } catch (RuntimeException e) {
      throw wrap(queue, "get exact stream " + queue, e);
    }
    List<FieldMismatch> drift = ProtectedContracts.mismatches(contract, stored);
    if (!drift.isEmpty()) {
      throw new ProtectedQueueContractDriftException(queue, drift);
    }
    checkExactShape(stored);
    if (!queues.supportsDurableSync()) {
      throw new DurableSyncUnsupportedException(queue, storage.description());
    }
    return stored;
  }

  /**
   * Step 4 of BEHAVIOUR Q-EXACT, defence in depth behind the contract comparison: the stored
   * configuration is reserved, a stream and durable.
   */
  static void checkExactShape(QueueConfig stored) {
    if (!stored.reserved()) {
      throw new QueueNotReservedException(stored.name());
    }
    if (!stored.isStream()) {
      throw new QueueNotStreamException(stored.name());
    }
    if (!stored.durable()) {
      throw new QueueNotDurableException(stored.name());
    }
  }

  private static void checkSize(QueueConfig queue, long size) {
    if (queue.maxMessageSize() <= 0 || size > queue.maxMessageSize()) {
      throw new QueueMessageTooLargeException(queue.name(), queue.maxMessageSize(), size);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Protected contracts (BEHAVIOUR Q-PROT)
  // ------------------------------------------------------------------------------------------

  /**
   * Compares a persisted configuration with a protected contract on the compared fields: name,
   * topics (in order), type, durable, reserved, retention (max age, max bytes, max messages),
   * maximum message size and message TTL. Every other field, {@code maxDepth} included, is ignored.
   * Thread-safe, no I/O.
   *
   * @throws InvalidConfigException if {@code expected} is not a valid contract (a reserved, durable
   *     stream with a positive maximum message size)
   * @throws ProtectedQueueContractDriftException listing every differing field, in config-file
   *     vocabulary ({@code topics}, {@code type}, {@code durable}, {@code reserved}, {@code
   *     retention.max_age}, {@code retention.max_length_bytes}, {@code
   *     retention.max_length_messages}, {@code limits.max_message_size}, {@code
   *     limits.message_ttl}), with the stored and the wanted value
   */
  public static void validateProtectedQueueContract(QueueConfig expected, QueueConfig persisted) {
    Objects.requireNonNull(expected, "expected");
    Objects.requireNonNull(persisted, "persisted");
    ProtectedContracts.checkSelfValid(expected);
    List<FieldMismatch> drift = ProtectedContracts.mismatches(expected, persisted);
    if (!drift.isEmpty()) {
      throw new ProtectedQueueContractDriftException(expected.name(), drift);
    }
  }

  /**
   * Checks every registered contract against storage: first the error building the configured
   * contracts, if any; then, if any contract exists, that the store can make an append durable;
   * then, in name order, that each queue exists and matches. Reads the store; holds no lock during
   * the reads.
   *
   * @throws InvalidConfigException if the configured contracts were invalid
   * @throws DurableSyncUnsupportedException if contracts exist but the store cannot sync
   * @throws ProtectedQueueContractDriftException for the first queue (by name) missing, unreadable
   *     or drifted
   * @throws IllegalStateException after {@link #stop()}
   */
  public void validateProtectedQueueContracts() {
    ensureUsable();
    RuntimeException buildError = contractBuildError;
    if (buildError != null) {
      throw buildError;
    }
    validateAgainstStorage(contracts);
  }

  private void validateAgainstStorage(Map<String, QueueConfig> registry) {
    if (registry.isEmpty()) {
      return;
    }
    if (!queues.supportsDurableSync()) {
      throw new DurableSyncUnsupportedException(null, storage.description());
    }
    for (QueueConfig contract : registry.values()) { // sorted by name
      String name = contract.name();
      QueueConfig stored;
      try {
        stored = queues.getQueue(name);
      } catch (QueueNotFoundException e) {
        throw new ProtectedQueueContractDriftException(name, ProtectedContracts.missing(name));
      } catch (RuntimeException e) {
        throw new ProtectedQueueContractDriftException(
            name, "stored configuration cannot be read: " + e.getMessage(), e);
      }
      List<FieldMismatch> drift = ProtectedContracts.mismatches(contract, stored);
      if (!drift.isEmpty()) {
        throw new ProtectedQueueContractDriftException(name, drift);
      }
    }
  }

  /**
   * Replaces the contract registry with {@code contracts} after validating them against storage
   * ({@link #validateProtectedQueueContracts()} rules). The new set is built first (no lock); then,
   * holding the registry's write lock, validated and swapped, so no create, update, delete or exact
   * publish can slip between validation and swap. On success the error remembered from construction
   * is cleared; on failure the registry is unchanged. Blocks for the store reads.
   *
   * @throws InvalidConfigException if a contract is invalid or two share a name
   * @throws DurableSyncUnsupportedException if {@code contracts} is not empty and the store cannot
   *     sync
   * @throws ProtectedQueueContractDriftException if a queue is missing, unreadable or drifted
   * @throws IllegalStateException after {@link #stop()}
   */
  public void replaceProtectedQueueContracts(List<QueueConfig> contracts) {
    ensureUsable();
    Map<String, QueueConfig> built =
        ProtectedContracts.build(Objects.requireNonNull(contracts, "contracts"));
    ReentrantReadWriteLock.WriteLock write = contractLock.writeLock();
    write.lock();
    try {
      validateAgainstStorage(built);
      this.contracts = built;
      this.contractBuildError = null;
    } finally {
      write.unlock();
    }
  }

  /**
   * Shrinks the registry to exactly {@code contracts}, each of which must already be installed and
   * equal to the installed contract on the compared fields. Does no storage I/O, so it cannot fail
   * on I/O. Takes the registry's write lock briefly.
   *
   * @throws InvalidConfigException if a contract is invalid, duplicated, not installed, or differs
   *     from the installed one (the registry is unchanged)
   */
  public void narrowProtectedQueueContracts(List<QueueConfig> contracts) {
    Map<String, QueueConfig> built =
        ProtectedContracts.build(Objects.requireNonNull(contracts, "contracts"));
    ReentrantReadWriteLock.WriteLock write = contractLock.writeLock();
    write.lock();
    try {
      Map<String, QueueConfig> installed = this.contracts;
      for (QueueConfig c : built.values()) {
        QueueConfig current = installed.get(c.name());
        if (current == null) {
          throw new InvalidConfigException(
              "protectedQueueContracts[" + c.name() + "]",
              c.name(),
              "a contract already installed");
        }
        List<FieldMismatch> differs = ProtectedContracts.mismatches(current, c);
        if (!differs.isEmpty()) {
          throw new InvalidConfigException(
              "protectedQueueContracts[" + c.name() + "]",
              differs.stream()
                  .map(m -> m.field() + " " + m.stored() + " (installed " + m.wanted() + ")")
                  .collect(Collectors.joining(", ")),
              "the installed contract: narrowing cannot change a contract");
        }
      }
      this.contracts = built;
    } finally {
      write.unlock();
    }
  }

  /**
   * Checks, without changing anything, whether {@link #declareProtectedStream} would accept {@code
   * contract}: it is a valid contract, no different contract is registered under its name, the
   * store can make an append durable, and the stream, if it exists, matches it. A stream that does
   * not exist yet passes (declaring will create it). Reads the store; takes no lock across the
   * read.
   *
   * @throws InvalidConfigException if {@code contract} is not a valid contract
   * @throws ProtectedQueueMutationException if a different contract is registered for the name
   * @throws DurableSyncUnsupportedException if the store cannot make an append durable
   * @throws ProtectedQueueContractDriftException listing every field on which the stored stream
   *     differs, with the stored and the wanted value
   * @throws IllegalStateException after {@link #stop()}
   */
  public void checkProtectedStream(QueueConfig contract) {
    ensureUsable();
    Objects.requireNonNull(contract, "contract");
    ProtectedContracts.checkSelfValid(contract);
    checkNotRegisteredDifferently(contracts, contract);
    if (!queues.supportsDurableSync()) {
      throw new DurableSyncUnsupportedException(contract.name(), storage.description());
    }
    QueueConfig stored = storedOrNull(contract.name());
    if (stored != null) {
      validateProtectedQueueContract(contract, stored);
    }
  }

  /**
   * Declares a protected durable stream, the way a message broker declares a queue: creates it with
   * {@code contract} as its configuration if it does not exist, asserts that the stored stream
   * matches {@code contract} if it does (a drifted stream is never changed), and adds {@code
   * contract} to the registry, keeping the contracts of other streams. Idempotent for an equal
   * contract. Holds the registry's write lock across the store read and creation, like {@link
   * #replaceProtectedQueueContracts}; blocks for that I/O.
   *
   * @throws InvalidConfigException if {@code contract} is not a valid contract
   * @throws ProtectedQueueMutationException if a different contract is registered for the name
   *     (nothing changes)
   * @throws DurableSyncUnsupportedException if the store cannot make an append durable
   * @throws ProtectedQueueContractDriftException if the stored stream differs (nothing changes)
   * @throws IllegalStateException after {@link #stop()}
   */
  public void declareProtectedStream(QueueConfig contract) {
    ensureUsable();
    Objects.requireNonNull(contract, "contract");
    ProtectedContracts.checkSelfValid(contract);
    String name = contract.name();
    boolean created = false;
    ReentrantReadWriteLock.WriteLock write = contractLock.writeLock();
    write.lock();
    try {
      Map<String, QueueConfig> installed = this.contracts;
      checkNotRegisteredDifferently(installed, contract);
      if (!queues.supportsDurableSync()) {
        throw new DurableSyncUnsupportedException(name, storage.description());
      }
      QueueConfig stored = storedOrNull(name);
      if (stored == null) {
        try {
          queues.createQueue(contract);
          created = true;
        } catch (QueueAlreadyExistsException raced) {
          LOG.debug("Stream {} was created concurrently; checking it", name);
        } catch (RuntimeException e) {
          throw wrap(name, "create protected stream " + name, e);
        }
        stored = storedOrNull(name);
        if (stored == null) {
          throw new ProtectedQueueContractDriftException(name, ProtectedContracts.missing(name));
        }
      }
      validateProtectedQueueContract(contract, stored);
      TreeMap<String, QueueConfig> next = new TreeMap<>(installed);
      next.put(name, contract);
      this.contracts = Collections.unmodifiableMap(next);
    } finally {
      write.unlock();
    }
    if (created) {
      LOG.info("Declared protected stream {}: created", name);
      deliveryScheduler.schedule(name);
    }
  }

  private static void checkNotRegisteredDifferently(
      Map<String, QueueConfig> registry, QueueConfig contract) {
    QueueConfig current = registry.get(contract.name());
    if (current == null) {
      return;
    }
    List<FieldMismatch> differs = ProtectedContracts.mismatches(current, contract);
    if (!differs.isEmpty()) {
      throw new ProtectedQueueMutationException(
          contract.name(),
          "a different contract is registered; it differs on "
              + differs.stream()
                  .map(
                      m ->
                          m.field()
                              + " (requested "
                              + m.stored()
                              + ", registered "
                              + m.wanted()
                              + ")")
                  .collect(Collectors.joining(", ")));
    }
  }

  /** The stored config, or null when the queue does not exist; other errors propagate. */
  private QueueConfig storedOrNull(String name) {
    try {
      return queues.getQueue(name);
    } catch (QueueNotFoundException e) {
      return null;
    } catch (RuntimeException e) {
      throw wrap(name, "get protected stream " + name, e);
    }
  }

  /** The registered contracts, in no particular order. A snapshot; never blocks on I/O. */
  public List<QueueConfig> protectedQueueContracts() {
    return List.copyOf(contracts.values());
  }

  private QueueConfig contractOf(String queue) {
    ReentrantReadWriteLock.ReadLock read = contractLock.readLock();
    read.lock();
    try {
      return contracts.get(queue);
    } finally {
      read.unlock();
    }
  }

  /** Caller holds the read side of the contract lock. */
  private void checkProtectedMutation(QueueConfig requested) {
    QueueConfig contract = contracts.get(requested.name());
    if (contract == null) {
      return;
    }
    List<FieldMismatch> differs = ProtectedContracts.mismatches(contract, requested);
    if (!differs.isEmpty()) {
      throw new ProtectedQueueMutationException(
          requested.name(),
          "the configuration differs from its contract on "
              + differs.stream()
                  .map(
                      m ->
                          m.field()
                              + " (requested "
                              + m.stored()
                              + ", contract "
                              + m.wanted()
                              + ")")
                  .collect(Collectors.joining(", ")));
    }
  }

  // ------------------------------------------------------------------------------------------
  // Consumers (BEHAVIOUR Q-SUB, Q-DEL)
  // ------------------------------------------------------------------------------------------

  /**
   * Joins {@code clientId} to a queue-mode group of {@code queue}, creating the queue when absent
   * ({@code subscribe}, BEHAVIOUR Q-SUB): as {@link #subscribe(String, String, String, String,
   * CursorOption)} with a null cursor.
   */
  public ConsumerGroupState subscribe(
      String queue, String pattern, String clientId, String groupId) {
    return subscribe(queue, pattern, clientId, groupId, null);
  }

  /**
   * Joins {@code clientId} to a group of {@code queue} as member {@code clientId}, creating the
   * queue when absent ({@code subscribe} / {@code subscribeWithCursor}, BEHAVIOUR Q-SUB):
   *
   * <ol>
   *   <li>the queue is read, or created as an ephemeral queue with the filter {@code
   *       $queue/<queue>/#} (a concurrent creation is tolerated);
   *   <li>a stream-mode cursor on a classic queue converts the queue to a stream ({@link
   *       #updateQueue}); a refused conversion (a protected queue, say) is logged and the join goes
   *       on;
   *   <li>the member joins the group {@code groupId} qualified by {@code pattern} ({@code
   *       group@pattern}), created when needed with the cursor's mode and auto-commit; a null or
   *       empty {@code groupId} means the default group: the client id up to its first {@code -} in
   *       queue mode, the whole client id in stream mode (BEHAVIOUR Q-GROUP); the cursor's position
   *       is applied to the group's shared cursor ({@link GroupCoordinator#join});
   *   <li>an ephemeral queue's disconnect time is cleared, and delivery is scheduled.
   * </ol>
   *
   * Pull consumers then claim and settle through {@link #consumerGroups()}; for push delivery use
   * {@link #consume}. Blocks for the store work.
   *
   * @param pattern routing-key filter of the group; null or empty = every message
   * @param cursor mode, position and auto-commit; null = resume in queue mode
   * @return the group after joining
   * @throws GroupModeMismatchException if the group exists in the other mode
   * @throws InvalidConfigException if the queue name or the pattern is invalid
   * @throws ProtectedQueueMutationException if the queue is protected but absent
   * @throws IllegalArgumentException if {@code clientId} is empty, or the default group is empty
   * @throws QueueStoreException if the store failed ("failed to resolve queue for subscription"
   *     when resolving the queue)
   * @throws IllegalStateException after {@link #stop()}
   */
  public ConsumerGroupState subscribe(
      String queue, String pattern, String clientId, String groupId, CursorOption cursor) {
    ensureUsable();
    Objects.requireNonNull(queue, "queue");
    GroupMode mode = cursor == null ? GroupMode.QUEUE : cursor.effectiveMode();
    QueueConfig q;
    try {
      q = getOrCreateQueue(queue, AUTO_QUEUE_ROOT + queue + "/#");
    } catch (QueueException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new QueueStoreException(queue, "failed to resolve queue for subscription: " + e, e);
    }
    if (mode == GroupMode.STREAM && !q.isStream()) {
      try {
        updateQueue(q.toBuilder().type(QueueType.STREAM).build());
        LOG.info("Converted queue {} to a stream for stream subscriber {}", queue, clientId);
      } catch (RuntimeException e) {
        LOG.warn(
            "Cannot convert queue {} to a stream for stream subscriber {}; joining anyway",
            queue,
            clientId,
            e);
      }
    }
    return join(queue, pattern, clientId, groupId, cursor);
  }

  /**
   * As {@link #subscribeExisting(String, String, String, String, CursorOption)} with a null cursor:
   * joins a queue-mode group of an existing queue.
   */
  public ConsumerGroupState subscribeExisting(
      String queue, String pattern, String clientId, String groupId) {
    return subscribeExisting(queue, pattern, clientId, groupId, null);
  }

  /**
   * Joins {@code clientId} to a group of an existing queue ({@code subscribeExisting} / {@code
   * subscribeExistingWithCursor}, BEHAVIOUR Q-SUB): as {@link #subscribe(String, String, String,
   * String, CursorOption)}, but the queue is never created or converted.
   *
   * @throws QueueNotFoundException if there is no such queue
   * @throws QueueNotStreamException if the cursor is in stream mode and the queue is classic
   * @throws GroupModeMismatchException if the group exists in the other mode
   * @throws InvalidConfigException if the pattern is invalid
   * @throws IllegalArgumentException if {@code clientId} is empty, or the default group is empty
   * @throws IllegalStateException after {@link #stop()}
   */
  public ConsumerGroupState subscribeExisting(
      String queue, String pattern, String clientId, String groupId, CursorOption cursor) {
    ensureUsable();
    QueueConfig q = getQueue(Objects.requireNonNull(queue, "queue"));
    if (cursor != null && cursor.effectiveMode() == GroupMode.STREAM && !q.isStream()) {
      throw new QueueNotStreamException(queue);
    }
    return join(queue, pattern, clientId, groupId, cursor);
  }

  private ConsumerGroupState join(
      String queue, String pattern, String clientId, String groupId, CursorOption cursor) {
    ConsumerGroupState g;
    try {
      g = consumerGroups.join(queue, pattern, groupId, clientId, cursor);
    } catch (IllegalArgumentException e) {
      throw e;
    } catch (RuntimeException e) {
      throw wrap(queue, "join a group of queue " + queue, e);
    }
    deliveryScheduler.schedule(queue);
    return g;
  }

  /**
   * Removes {@code clientId} from a group of {@code queue} ({@code unsubscribe}, BEHAVIOUR Q-SUB).
   * A null or empty {@code groupId} means the default group the client is a member of: the
   * queue-mode one ({@code worker-7} → {@code worker}) is tried first, then the stream-mode one
   * (the whole id), so a stream subscription made with the default group can be left without naming
   * it. The member's pending entries stay, to be redelivered after their visibility timeout. An
   * ephemeral queue left without members gets its disconnect time (it expires {@code expiresAfter}
   * later). A live push subscription of that member ends. Unknown queues, groups and members are
   * not errors.
   *
   * @return whether the client was a member
   * @throws IllegalArgumentException if {@code clientId} is empty
   * @throws QueueStoreException if the store failed
   * @throws IllegalStateException after {@link #stop()}
   */
  public boolean unsubscribe(String queue, String pattern, String clientId, String groupId) {
    ensureUsable();
    Objects.requireNonNull(queue, "queue");
    boolean was;
    try {
      was = consumerGroups.leave(queue, pattern, groupId, clientId);
    } catch (IllegalArgumentException e) {
      throw e;
    } catch (RuntimeException e) {
      throw wrap(queue, "leave a group of queue " + queue, e);
    }
    deliveryScheduler.schedule(queue);
    return was;
  }

  /**
   * Refreshes the heartbeat of every group membership of {@code clientId} (BEHAVIOUR Q-HEARTBEAT)
   * through the consumer-group engine's heartbeat index, so a client that is alive but idle is not
   * removed as stale after {@code consumerTimeout}. Memberships that are gone are forgotten; null
   * or empty ids are ignored.
   *
   * @return how many memberships were refreshed
   * @throws QueueStoreException if the store failed
   * @throws IllegalStateException after {@link #stop()}
   */
  public int heartbeat(String clientId) {
    ensureUsable();
    try {
      return consumerGroups.heartbeat(clientId);
    } catch (RuntimeException e) {
      throw wrap("", "refresh the heartbeats of client " + clientId, e);
    }
  }

  /**
   * Subscribes {@code consumerId} to a group of {@code queue} and has the delivery engine push its
   * messages to {@code handler} (BEHAVIOUR Q-DEL): joins as {@link #subscribe(String, String,
   * String, String, CursorOption)} (or {@link #subscribeExisting(String, String, String, String,
   * CursorOption)} when {@link ConsumeOptions#createQueue()} is false) with the options' pattern
   * and cursor, then registers the subscription with the engine. Deliveries begin at once when the
   * manager is started, else at {@link #start()}.
   *
   * <p>The handler receives settle-once {@link io.queuebridge.core.group.GroupDelivery} handles on
   * a delivery worker thread, one at a time per subscription; {@link DeliveryHandler} says what
   * happens when it throws or returns without settling. Messages arrive when they are appended
   * (through any publish path of this manager); a nacked message when its backoff or delay ends and
   * an expired claim when its visibility timeout ends (a timer on the manager's scheduler);
   * anything else, such as messages appended to the store by someone else, at the engine's
   * one-second sweep. Closing the returned handle leaves the group.
   *
   * @param groupId the group; null or empty = the default group for the options' mode
   * @return the live subscription
   * @throws IllegalStateException if {@code consumerId} already has a live subscription on that
   *     group, or after {@link #stop()}
   * @throws QueueException and the other errors of {@code subscribe} / {@code subscribeExisting}
   */
  public Subscription consume(
      String queue,
      String groupId,
      String consumerId,
      DeliveryHandler handler,
      ConsumeOptions options) {
    ensureUsable();
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(handler, "handler");
    Objects.requireNonNull(options, "options");
    if (consumerId == null || consumerId.isEmpty()) {
      throw new IllegalArgumentException("consumerId must be non-empty, got " + consumerId);
    }
    String base =
        groupId == null || groupId.isEmpty()
            ? GroupCoordinator.defaultGroupId(consumerId, options.mode())
            : groupId;
    String effective = GroupCoordinator.effectiveGroupId(base, options.pattern());
    int batch = options.batchSize() > 0 ? options.batchSize() : config.deliveryBatchSize();
    return delivery.register(
        queue,
        effective,
        consumerId,
        () ->
            options.createQueue()
                ? subscribe(queue, options.pattern(), consumerId, base, options.cursor())
                : subscribeExisting(queue, options.pattern(), consumerId, base, options.cursor()),
        handler,
        batch);
  }

  /**
   * Waits until {@code queue}'s tail is beyond {@code offset} (a message at {@code offset} was
   * appended, or truncated away), the timeout passes, or the thread is interrupted — for pull
   * consumers that found nothing to claim. Returns at once when the tail is already beyond it.
   *
   * @return whether the tail is beyond {@code offset}
   * @throws InterruptedException if interrupted while waiting
   * @throws QueueNotFoundException if there is no such queue
   * @throws IllegalStateException after {@link #stop()}
   */
  public boolean awaitAppend(String queue, long offset, Duration timeout)
      throws InterruptedException {
    ensureUsable();
    Objects.requireNonNull(timeout, "timeout");
    try {
      return queues.awaitAppend(Objects.requireNonNull(queue, "queue"), offset, timeout);
    } catch (RuntimeException e) {
      throw wrap(queue, "wait for an append to queue " + queue, e);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Internals
  // ------------------------------------------------------------------------------------------

  /**
   * The request as an un-appended message with normalised properties: reserved names removed,
   * {@code client_id} added when the request has a client id. Key, value and headers are shared
   * with the immutable request; {@link #newMessage} copies them per target.
   */
  static Message normalise(PublishRequest request) {
    Map<String, String> user = request.properties();
    if (request.clientId().isEmpty() && !request.hasReservedProperty()) {
      return request.asMessage(); // nothing to change; the request's message is immutable
    }
    Map<String, String> props = new LinkedHashMap<>(Math.max(4, user.size() * 2));
    for (Map.Entry<String, String> e : user.entrySet()) {
      if (!MessageProperties.isReserved(e.getKey())) {
        props.put(e.getKey(), e.getValue());
      }
    }
    if (!request.clientId().isEmpty()) {
      props.put(MessageProperties.CLIENT_ID, request.clientId());
    }
    Message m = request.asMessage();
    return m.toBuilder().topic(request.topic()).properties(props).buildOwned();
  }

  /**
   * One target's message: fresh id, the request's bytes, state queued, created now, TTL applied.
   */
  private static Message newMessage(Message base, QueueConfig queue, Instant now) {
    Message.Builder b =
        base.toBuilder()
            .id(Long.toString(MESSAGE_IDS.incrementAndGet()))
            .offset(Message.NO_OFFSET)
            .state(MessageState.QUEUED)
            .createdAt(now)
            .expiresAt(
                queue.messageTtl().isZero() || queue.messageTtl().isNegative()
                    ? null
                    : now.plus(queue.messageTtl()));
    // The request already copied the caller's arrays when it was built and a Message never
    // exposes them for writing, so every target can share them.
    return b.buildOwned();
  }

  /**
   * The per-target append of publish and capture: limits, then the acknowledgement policy
   * (BEHAVIOUR Q-PUB, L-LIMITS, Q-ACK).
   */
  private long appendTo(QueueConfig target, Message base) throws InterruptedException {
    String name = target.name();
    checkSize(target, base.size());
    if (!target.isStream()) {
      long depth = queues.count(name);
      if (depth >= target.maxDepth()) {
        throw new QueueFullException(name, depth, target.maxDepth());
      }
    }
    Message message = newMessage(base, target, clock.instant());
    long offset;
    if (effectiveAckDurability(target) == AckDurability.FSYNC && target.durable()) {
      if (!queues.supportsDurableSync()) {
        throw new DurableSyncUnsupportedException(name, storage.description());
      }
      offset = queues.appendAndSync(name, message);
    } else {
      offset = queues.append(name, message);
    }
    deliveryScheduler.schedule(name);
    return offset;
  }

  /**
   * BEHAVIOUR Q-ACK: the queue's override unless {@code DEFAULT} ({@code FSYNC} forced to {@code
   * BUFFERED} when the store cannot sync), else the manager's default (downgraded at construction
   * when the store could not sync then).
   */
  AckDurability effectiveAckDurability(QueueConfig queue) {
    AckDurability override = queue.ackDurability();
    if (override == AckDurability.DEFAULT) {
      return defaultAckDurability;
    }
    if (override == AckDurability.FSYNC && !queues.supportsDurableSync()) {
      return AckDurability.BUFFERED;
    }
    return override;
  }

  private void deleteExpiredEphemeralQueues() {
    Instant now = clock.instant();
    List<QueueConfig> all;
    try {
      all = queues.listQueues();
    } catch (RuntimeException e) {
      LOG.warn("Cannot list queues to clean up expired ephemeral queues", e);
      return;
    }
    for (QueueConfig q : all) {
      if (q.durable() || q.reserved() || q.lastConsumerDisconnect().isEmpty()) {
        continue;
      }
      Instant expiry = q.lastConsumerDisconnect().get().plus(q.expiresAfter());
      if (now.isBefore(expiry)) {
        continue;
      }
      try {
        for (ConsumerGroupState g : groups.listGroups(q.name())) {
          groups.deleteGroup(q.name(), g.id());
        }
        deleteQueue(q.name());
        LOG.info("Deleted ephemeral queue {}: expired at {}", q.name(), expiry);
      } catch (RuntimeException e) {
        LOG.warn("Cannot delete expired ephemeral queue {}", q.name(), e);
      }
    }
  }

  private void ensureUsable() {
    if (state == State.STOPPED) {
      throw new IllegalStateException("queue manager is stopped");
    }
  }

  private static QueueException wrap(String queue, String action, RuntimeException e) {
    if (e instanceof QueueException q) {
      return q;
    }
    return new QueueStoreException(queue, action + " failed: " + e, e);
  }

  /** The delivery engine installs itself here; see {@link DeliveryScheduler}. */
  void deliveryScheduler(DeliveryScheduler scheduler) {
    this.deliveryScheduler = Objects.requireNonNull(scheduler, "scheduler");
  }

  /** Whether {@code thread} waits for the contract registry lock (for race tests). */
  boolean waitsForContractLock(Thread thread) {
    return contractLock.hasQueuedThread(thread);
  }

  /** The capture dispatcher, for tests in this package. */
  CaptureDispatcher captureDispatcher() {
    return capture;
  }

  /**
   * The consumer-group engine over this manager's store: subscriptions, claims, settlement, stream
   * cursors, dead letters. One per manager, so every group mutation of the store is serialised by
   * one lock.
   */
  public ConsumerGroups consumerGroups() {
    return consumerGroups;
  }
}
