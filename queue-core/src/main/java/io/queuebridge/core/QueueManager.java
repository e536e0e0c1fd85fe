package io.queuebridge.core;

import io.queuebridge.core.config.AckDurability;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.PeriodicScheduler;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.delivery.ConsumeOptions;
import io.queuebridge.core.delivery.DeliveryHandler;
import io.queuebridge.core.delivery.Subscription;
import io.queuebridge.core.errors.CaptureStillRunningException;
import io.queuebridge.core.errors.DeliveryStillRunningException;
import io.queuebridge.core.errors.DurableSyncUnsupportedException;
import io.queuebridge.core.errors.GroupModeMismatchException;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException;
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
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.Storage;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

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
 * consumerTimeout} (more often when a queue's {@code heartbeatTimeout} is shorter, at most once a
 * second), and the delivery sweep every second. After {@code stop} every operation that touches the
 * store throws {@link IllegalStateException}. The manager does not own the store: whoever opened it
 * closes it, and only once {@link #shutdownComplete()} is true.
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
  // The engines the collaborators share; built here, owned by the manager.
  private final GroupCoordinator consumerGroups;
  private final DeliveryEngine delivery;
  private final CaptureDispatcher captureDispatcher;
  private final DeliveryHook deliveryHook;

  // One collaborator per job; each method below delegates to one of them.
  private final ManagerLifecycle lifecycle;
  private final QueueAdministration administration;
  private final PublishRouter router;
  private final Deduplication deduplication = new Deduplication();
  private final TopicCapture capture;
  private final DurableStreamWriter durableStreams;
  private final ContractRegistry registry;
  private final Subscriptions subscriptions;
  private final DeadLetterRedrive redrive;

  /**
   * The delivery engine's hook: told after every successful append, queue creation and subscription
   * ({@link #schedule}) and after a queue is deleted ({@link #unschedule}). By default the {@link
   * DeliveryHook} calls the manager's {@link DeliveryEngine}; tests may install one of these
   * instead ({@link #deliveryScheduler(DeliveryScheduler)}). Implementations must not block; they
   * run on the appending thread (a publisher or a capture worker).
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
    Objects.requireNonNull(storage, "storage");
    Objects.requireNonNull(config, "config");
    DurableQueueStore queues = Objects.requireNonNull(storage.queues(), "storage.queues()");
    ConsumerGroupStore groups = Objects.requireNonNull(storage.groups(), "storage.groups()");
    Clock clock = config.clock();
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
            .defaultBatchSize(config.deliveryBatchSize())
            .threadPrefix("queuebridge-delivery")
            .build();
    this.captureDispatcher =
        new CaptureDispatcher(
            "queuebridge",
            config.captureWorkers(),
            config.captureQueueDepth(),
            config.captureDrainTimeout(),
            clock);
    this.deliveryHook = new DeliveryHook(delivery);
    LifecycleState state = new LifecycleState();
    this.registry =
        new ContractRegistry(
            config.protectedQueueContracts(), state, storage, queues, deliveryHook);
    this.administration =
        new QueueAdministration(state, queues, registry, deliveryHook, consumerGroups);
    this.router =
        new PublishRouter(
            state,
            storage,
            queues,
            administration,
            clock,
            deliveryHook,
            config.ackDurability(),
            deduplication);
    this.capture = new TopicCapture(state, queues, captureDispatcher, router, clock);
    this.durableStreams =
        new DurableStreamWriter(
            state, storage, queues, registry, clock, deliveryHook, deduplication);
    this.redrive = new DeadLetterRedrive(state, queues, administration, durableStreams, clock);
    this.subscriptions =
        new Subscriptions(state, queues, administration, consumerGroups, delivery, deliveryHook);
    ManagerLoops loops =
        new ManagerLoops(config, queues, groups, consumerGroups, administration, deliveryHook);
    this.lifecycle =
        new ManagerLifecycle(state, config, queues, registry, loops, delivery, captureDispatcher);
  }

  /** The group engine's redelivery times go to the delivery engine's timers. */
  private void redeliveryDue(String queue, Instant at) {
    DeliveryEngine engine = delivery; // null only while the constructor runs
    if (engine != null) {
      engine.redeliveryDue(queue, at);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Lifecycle (BEHAVIOUR M-START, M-LOOPS, Q-STOP): ManagerLifecycle, ManagerLoops
  // ------------------------------------------------------------------------------------------

  /**
   * Starts the manager (BEHAVIOUR M-START): creates the configured queues that do not exist (a
   * stored queue's config wins over the configured one), validates the protected contracts, deletes
   * ephemeral queues that expired while the manager was down, starts the delivery engine (which
   * schedules every queue with a push subscription), the capture workers, and the periodic loops:
   * retention every {@code retentionCheckInterval}, stale-consumer cleanup with ephemeral-queue
   * expiry every {@code consumerTimeout} (or the shortest {@code heartbeatTimeout} of a queue, if
   * shorter; at most once a second). Blocks for the store work of the first steps. If one of them
   * fails, the manager stays unstarted and {@code start} may be called again.
   *
   * @throws IllegalStateException if already started or stopped
   * @throws ProtectedQueueContractDriftException if a protected queue is missing or drifted
   * @throws DurableSyncUnsupportedException if contracts exist but the store cannot sync
   * @throws InvalidConfigException if the configured contracts are invalid
   */
  public void start() {
    lifecycle.start();
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
    lifecycle.stop();
  }

  /**
   * Whether {@link #stop()} finished with every capture worker out of the store. The owner of the
   * store closes it only when this is true; otherwise it must leak it (closing it under an
   * in-flight append is a use-after-close).
   */
  public boolean shutdownComplete() {
    return lifecycle.shutdownComplete();
  }

  /**
   * A snapshot of every counter: capture, consumer groups (claims, steals, settlements, dead
   * letters, PEL) and push delivery. Never blocks; allowed after stop.
   */
  public QueueManagerMetrics metrics() {
    return new QueueManagerMetrics(
        captureDispatcher.failures(),
        captureDispatcher.dropped(),
        consumerGroups.metrics(),
        delivery.metrics(),
        deduplication.duplicatesRefused());
  }

  // ------------------------------------------------------------------------------------------
  // Administration (BEHAVIOUR M-ADMIN): QueueAdministration
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
    administration.create(queue);
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
    administration.update(queue);
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
    administration.delete(name);
  }

  /**
   * Removes every message of a queue, keeping the queue, its configuration and its groups: each
   * group's cursor and committed offset move to the new head and its pending claims are dropped
   * (deliveries still held can no longer be settled). Offsets are not reused: the next append gets
   * the old tail.
   *
   * @return how many messages were removed
   * @throws ProtectedQueueMutationException if the queue is protected (a contract here, or stored
   *     as reserved): nothing removed
   * @throws QueueNotFoundException if there is no such queue
   * @throws QueueStoreException if the store failed
   * @throws IllegalStateException after {@link #stop()}
   */
  public long purgeQueue(String name) {
    return administration.purge(name);
  }

  /**
   * Deletes one consumer group of a queue with its cursor, pending claims and members (deliveries
   * still held can no longer be settled). The same as {@link ConsumerGroups#deleteGroup}, with the
   * operator's checks: the group must exist and the queue must not be protected.
   *
   * @throws ProtectedQueueMutationException if the queue is protected: nothing deleted
   * @throws QueueNotFoundException if there is no such queue
   * @throws io.queuebridge.core.errors.GroupNotFoundException if the queue has no such group
   * @throws IllegalStateException after {@link #stop()}
   */
  public void deleteConsumerGroup(String queue, String group) {
    administration.deleteGroup(queue, group);
  }

  /**
   * Moves dead letters back to the queue they came from (their {@link
   * MessageProperties#DLQ_ORIGINAL_QUEUE}) or to the request's target, exactly once: a redrive
   * stopped at any point (a kill included) and run again with the same target neither loses nor
   * duplicates a message (BEHAVIOUR M-REDRIVE). Messages go in dead-letter order, in batches, each
   * batch appended with one barrier and then removed from the dead-letter queue. Key, value,
   * headers and timestamp are kept byte for byte, and so are the properties (the {@code x-dlq-*}
   * provenance included); {@link MessageProperties#REDRIVE_DLQ}, {@link
   * MessageProperties#REDRIVE_DLQ_OFFSET} and {@link MessageProperties#REDRIVEN_AT} are added. A
   * target is checked like {@link #publishBatchDurably} checks it (size, depth), except that a
   * store that cannot make appends durable (memory) is accepted.
   *
   * <p>Stops at the first message it cannot move, with everything before it moved. One redrive of a
   * dead-letter queue at a time.
   *
   * @param listener told about each message looked at, on the calling thread
   * @return what was moved
   * @throws QueueNotFoundException if the dead-letter queue or a target does not exist
   * @throws ProtectedQueueMutationException if a target is protected
   * @throws io.queuebridge.core.errors.RedriveRefusedException if a message names no origin and no
   *     target was given, or the target is the dead-letter queue
   * @throws QueueFullException if a classic target has no room for the next batch
   * @throws QueueStoreException if the store failed
   * @throws InterruptedException if interrupted (what was moved stays moved)
   * @throws IllegalStateException after {@link #stop()}
   */
  public RedriveReport redriveDeadLetters(
      RedriveRequest request, Consumer<RedrivenMessage> listener) throws InterruptedException {
    return redrive.run(request, listener);
  }

  /**
   * The stored configuration of a queue.
   *
   * @throws QueueNotFoundException if there is no such queue
   * @throws IllegalStateException after {@link #stop()}
   */
  public QueueConfig getQueue(String name) {
    return administration.get(name);
  }

  /**
   * Every stored queue configuration, in no particular order; empty when there is none.
   *
   * @throws IllegalStateException after {@link #stop()}
   */
  public List<QueueConfig> listQueues() {
    return administration.list();
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
    return administration.getOrCreate(name, topics);
  }

  // ------------------------------------------------------------------------------------------
  // Publish (BEHAVIOUR Q-PUB, Q-ACK): PublishRouter
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
   * MessageProperties#RESERVED}) plus {@code x-client-id} when the request has a client id, state
   * {@code QUEUED}, created now and expiring after the queue's {@code messageTtl} (never when
   * zero).
   *
   * <p>Acknowledgement (BEHAVIOUR Q-ACK): the queue's {@code ackDurability} unless {@code DEFAULT}
   * (an {@code FSYNC} override is treated as {@code BUFFERED} when the store cannot sync), else the
   * manager's. {@code FSYNC} on a durable queue appends with a durability barrier and returns only
   * after it; ephemeral queues never sync. Blocks for the appends and barriers.
   *
   * <p>Deduplication (BEHAVIOUR Q-DEDUP): a request with a {@link PublishRequest#deduplicationId()
   * deduplication id} stores nothing in a target whose {@code dedupWindow} is on and remembers the
   * id from a message created within the window; that counts one {@code duplicatesRefused}.
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
    router.publish(request);
  }

  /**
   * Publishes synchronously to exactly {@code queue}: no routing by topic, no fan-out, no
   * auto-creation. Otherwise as {@link #publish}: the message is stamped the same way, the queue's
   * limits and acknowledgement policy apply, and the call blocks for the append (and the barrier,
   * under {@code FSYNC}). For writers that address one work queue, such as a job driver.
   *
   * @return the message's offset; for a duplicate (BEHAVIOUR Q-DEDUP) the offset of the message its
   *     deduplication id was first stored with, nothing being stored
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
    return router.publishTo(queue, request);
  }

  /**
   * Names of the queues whose topic filters match {@code topic}, in first-match order (BEHAVIOUR
   * T-IDX); empty for an empty topic.
   */
  public List<String> findMatchingQueues(String topic) {
    return router.findMatchingQueues(topic);
  }

  // ------------------------------------------------------------------------------------------
  // Capture (BEHAVIOUR Q-CAP, Q-CAPD): TopicCapture
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
    capture.capture(request);
  }

  // ------------------------------------------------------------------------------------------
  // Exact durable stream (BEHAVIOUR Q-EXACT): DurableStreamWriter
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
   * <p>Deduplication (BEHAVIOUR Q-DEDUP) applies as in {@link #publishTo}; the batch variants
   * refuse a request with a deduplication id.
   *
   * @return the message's offset, or for a duplicate the offset its id was first stored with
   * @throws QueueStoreException if the append or the barrier failed: do not acknowledge
   * @throws InterruptedException if interrupted before the append started (nothing written)
   * @throws IllegalStateException after {@link #stop()}
   */
  public long publishToDurableStream(String queue, PublishRequest request)
      throws InterruptedException {
    return durableStreams.publish(queue, request);
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
    return durableStreams.publishBatch(queue, batch, checkpoints);
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
    return durableStreams.publishBatchDurably(queue, batch, checkpoints);
  }

  /**
   * The first half of {@link #publishBatchDurably}: every check that needs no write (the target,
   * BEHAVIOUR Q-EXACT's checks for a protected stream, each message's size), the stamping, and what
   * the store can prepare ahead of the write ({@link
   * io.queuebridge.core.store.DurableQueueStore#prepareBatch}). Nothing is written; {@link
   * #publishPrepared} writes the batch. A writer that keeps one batch being prepared while the one
   * before is written overlaps its own work with the store's barrier.
   *
   * <p>Messages are stamped here: their creation time is the time of this call. A classic queue's
   * depth is checked when the batch is written, not here.
   *
   * @return the batch, to be written once, by this manager
   * @throws IllegalArgumentException if {@code batch} is empty
   * @throws QueueNotFoundException if there is no such queue
   * @throws QueueMessageTooLargeException for a message over the maximum size
   * @throws DurableSyncUnsupportedException if the store cannot make an append durable
   * @throws QueueStoreException if reading the queue failed
   * @throws IllegalStateException after {@link #stop()}
   */
  public DurableBatch prepareBatchDurably(
      String queue, List<PublishRequest> batch, Map<String, String> checkpoints) {
    return durableStreams.prepareBatchDurably(queue, batch, checkpoints);
  }

  /**
   * The second half of {@link #publishBatchDurably}: a classic queue's depth must leave room for
   * the whole batch, then the batch and its checkpoints are appended with one durability barrier.
   *
   * @return the offset of the first message
   * @throws IllegalArgumentException if the batch was prepared by another manager
   * @throws IllegalStateException if the batch was published before (it is appended at most once,
   *     whatever the outcome of the first call), or after {@link #stop()}
   * @throws QueueNotFoundException if the queue was deleted since
   * @throws QueueFullException if the batch does not fit under a classic queue's maxDepth
   * @throws QueueStoreException if the append or the barrier failed: do not acknowledge
   * @throws InterruptedException if interrupted before the append started (nothing written)
   */
  public long publishPrepared(DurableBatch batch) throws InterruptedException {
    return durableStreams.write(batch);
  }

  /**
   * The checkpoints stored with the batches of {@link #publishBatchToDurableStream} and {@link
   * #publishBatchDurably} to {@code queue}; empty when none. A copy.
   *
   * @throws QueueNotFoundException if there is no such queue
   * @throws IllegalStateException after {@link #stop()}
   */
  public Map<String, String> durableStreamCheckpoints(String queue) {
    return durableStreams.checkpoints(queue);
  }

  /**
   * Step 4 of BEHAVIOUR Q-EXACT, defence in depth behind the contract comparison: the stored
   * configuration is reserved, a stream and durable.
   */
  static void checkExactShape(QueueConfig stored) {
    DurableStreamWriter.checkExactShape(stored);
  }

  // ------------------------------------------------------------------------------------------
  // Protected contracts (BEHAVIOUR Q-PROT): ContractRegistry
  // ------------------------------------------------------------------------------------------

  /**
   * Compares a persisted configuration with a protected contract on the compared fields: name,
   * topics (in order), type, durable, reserved, retention (max age, max bytes, max messages),
   * maximum message size, message TTL and maximum delay. Every other field, {@code maxDepth}
   * included, is ignored. Thread-safe, no I/O.
   *
   * @throws InvalidConfigException if {@code expected} is not a valid contract (a reserved, durable
   *     stream with a positive maximum message size)
   * @throws ProtectedQueueContractDriftException listing every differing field, in config-file
   *     vocabulary ({@code topics}, {@code type}, {@code durable}, {@code reserved}, {@code
   *     retention.max_age}, {@code retention.max_length_bytes}, {@code
   *     retention.max_length_messages}, {@code limits.max_message_size}, {@code
   *     limits.message_ttl}, {@code limits.max_delay}), with the stored and the wanted value
   */
  public static void validateProtectedQueueContract(QueueConfig expected, QueueConfig persisted) {
    ContractRegistry.validate(expected, persisted);
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
    registry.validateAgainstStorage();
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
    registry.replace(contracts);
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
    registry.narrow(contracts);
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
    registry.check(contract);
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
    registry.declare(contract);
  }

  /** The registered contracts, in no particular order. A snapshot; never blocks on I/O. */
  public List<QueueConfig> protectedQueueContracts() {
    return registry.snapshot();
  }

  // ------------------------------------------------------------------------------------------
  // Consumers (BEHAVIOUR Q-SUB, Q-DEL): Subscriptions
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
    return subscriptions.subscribe(queue, pattern, clientId, groupId, cursor);
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
    return subscriptions.subscribeExisting(queue, pattern, clientId, groupId, cursor);
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
    return subscriptions.unsubscribe(queue, pattern, clientId, groupId);
  }

  /**
   * Refreshes the heartbeat of every group membership of {@code clientId} (BEHAVIOUR Q-HEARTBEAT)
   * through the consumer-group engine's heartbeat index, so a client that is alive but idle is not
   * removed as stale after its queue's {@code heartbeatTimeout} (else {@code consumerTimeout}).
   * Memberships that are gone are forgotten; null or empty ids are ignored.
   *
   * @return how many memberships were refreshed
   * @throws QueueStoreException if the store failed
   * @throws IllegalStateException after {@link #stop()}
   */
  public int heartbeat(String clientId) {
    return subscriptions.heartbeat(clientId);
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
    return subscriptions.consume(queue, groupId, consumerId, handler, options);
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
    return subscriptions.awaitAppend(queue, offset, timeout);
  }

  /**
   * The consumer-group engine over this manager's store: subscriptions, claims, settlement, stream
   * cursors, dead letters. One per manager, so every group mutation of the store is serialised by
   * one lock.
   */
  public ConsumerGroups consumerGroups() {
    return consumerGroups;
  }

  // ------------------------------------------------------------------------------------------
  // Package-private accessors (tests in this package)
  // ------------------------------------------------------------------------------------------

  /**
   * BEHAVIOUR Q-ACK: the queue's override unless {@code DEFAULT} ({@code FSYNC} forced to {@code
   * BUFFERED} when the store cannot sync), else the manager's default (downgraded at construction
   * when the store could not sync then).
   */
  AckDurability effectiveAckDurability(QueueConfig queue) {
    return router.effectiveAckDurability(queue);
  }

  /** Installs {@code scheduler} in place of the delivery engine; see {@link DeliveryScheduler}. */
  void deliveryScheduler(DeliveryScheduler scheduler) {
    deliveryHook.install(scheduler);
  }

  /** Whether {@code thread} waits for the contract registry lock (for race tests). */
  boolean waitsForContractLock(Thread thread) {
    return registry.waitsForLock(thread);
  }

  /** The capture dispatcher, for tests in this package. */
  CaptureDispatcher captureDispatcher() {
    return captureDispatcher;
  }
}
