package io.queuebridge.core;

import io.queuebridge.core.config.PeriodicScheduler;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The manager's periodic loops (BEHAVIOUR M-LOOPS): the retention pass every {@code
 * retentionCheckInterval} (BEHAVIOUR Q-RET), and every {@code consumerTimeout} (or more often, see
 * below) the stale-consumer cleanup followed by ephemeral-queue expiry (BEHAVIOUR Q-HEARTBEAT,
 * Q-EPHEMERAL); plus the one-off deletion at start of ephemeral queues that expired while the
 * manager was down. Runs them on the configured {@link PeriodicScheduler}, or on a daemon thread of
 * its own. Uses the {@link GroupCoordinator}, the store, {@link QueueAdministration} to delete
 * expired queues and the {@link DeliveryHook} to unschedule them.
 *
 * <p><b>Cleanup period.</b> A queue's {@code heartbeatTimeout} may be shorter than {@code
 * consumerTimeout}; its silent members must then go after about that timeout, not after the
 * manager's. So the cleanup task ticks every {@link #CLEANUP_TICK} (or every {@code
 * consumerTimeout}, if shorter) and runs the cleanup when the shortest consumer timeout the group
 * engine knows ({@link GroupCoordinator#shortestConsumerTimeout()}, lock-free, no store read) has
 * passed since the last one, but never more often than a tick. With no shorter queue timeout the
 * cleanup runs every {@code consumerTimeout}, as the loop always did.
 *
 * <p>Thread-safety: {@link #scheduler}, {@link #start} and {@link #stop} are called by {@link
 * ManagerLifecycle} under its lifecycle lock. A running loop holds the read side of a gate whose
 * write side {@link #stop} takes to wait for it; a loop that finds stop waiting skips its run.
 */
final class ManagerLoops {
  // Logs under the facade's name, which is what operators configure.
  private static final Logger LOG = LoggerFactory.getLogger(QueueManager.class);

  /** How often the cleanup task checks whether a cleanup is due (see the class comment). */
  static final Duration CLEANUP_TICK = Duration.ofSeconds(1);

  private final QueueManagerConfig config;
  private final Clock clock;
  private final DurableQueueStore queues;
  private final ConsumerGroupStore groups;
  private final GroupCoordinator consumerGroups;
  private final QueueAdministration administration;
  private final DeliveryHook deliveryHook;

  private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock();
  private final List<PeriodicScheduler.Cancellable> tasks = new ArrayList<>(); // lifecycle lock
  private ThreadPeriodicScheduler ownScheduler; // lifecycle lock
  private volatile boolean stopped;
  private final Duration cleanupTick;
  private volatile Instant lastCleanup; // the cleanup task (executions never overlap)

  ManagerLoops(
      QueueManagerConfig config,
      DurableQueueStore queues,
      ConsumerGroupStore groups,
      GroupCoordinator consumerGroups,
      QueueAdministration administration,
      DeliveryHook deliveryHook) {
    this.config = config;
    this.clock = config.clock();
    this.queues = queues;
    this.groups = groups;
    this.consumerGroups = consumerGroups;
    this.administration = administration;
    this.deliveryHook = deliveryHook;
    Duration timeout = config.consumerTimeout();
    this.cleanupTick = timeout.compareTo(CLEANUP_TICK) < 0 ? timeout : CLEANUP_TICK;
  }

  /** The configured scheduler, or a new daemon thread of the manager's own when there is none. */
  PeriodicScheduler scheduler() {
    PeriodicScheduler scheduler = config.scheduler();
    if (scheduler == null) {
      ownScheduler = new ThreadPeriodicScheduler("queuebridge-loops");
      scheduler = ownScheduler;
    }
    return scheduler;
  }

  /** Schedules the retention and consumer-cleanup loops on {@code scheduler}. */
  void start(PeriodicScheduler scheduler) {
    tasks.add(
        scheduler.schedule(
            "retention",
            config.retentionCheckInterval(),
            () -> run("retention", consumerGroups::retentionPass)));
    lastCleanup = clock.instant();
    tasks.add(
        scheduler.schedule(
            "consumer-cleanup",
            cleanupTick,
            () -> run("consumer cleanup", this::cleanUpConsumersIfDue)));
  }

  /**
   * Runs {@link #cleanUpConsumers} when the shortest consumer timeout has passed since the last run
   * (see the class comment).
   */
  private void cleanUpConsumersIfDue() {
    Instant now = clock.instant();
    Duration every = consumerGroups.shortestConsumerTimeout();
    if (every.compareTo(cleanupTick) < 0) {
      every = cleanupTick;
    }
    if (now.isBefore(lastCleanup.plus(every))) {
      return;
    }
    lastCleanup = now;
    cleanUpConsumers(now);
  }

  /** Stale members out, then expired ephemeral queues (BEHAVIOUR Q-HEARTBEAT, Q-EPHEMERAL). */
  private void cleanUpConsumers(Instant now) {
    consumerGroups.removeStaleConsumers(now);
    for (String deleted : consumerGroups.expireEphemeralQueues(now)) {
      deliveryHook.unschedule(deleted);
    }
  }

  private void run(String name, Runnable body) {
    ReentrantReadWriteLock.ReadLock read = gate.readLock();
    if (!read.tryLock()) {
      return; // stop is waiting for the loops
    }
    try {
      if (!stopped) {
        body.run();
      }
    } catch (RuntimeException e) {
      LOG.warn("The {} loop failed; it runs again next period", name, e);
    } finally {
      read.unlock();
    }
  }

  /** Cancels the loops and waits up to {@code timeout} for one in progress; whether none is. */
  boolean stop(Duration timeout) {
    stopped = true;
    for (PeriodicScheduler.Cancellable task : tasks) {
      task.cancel();
    }
    tasks.clear();
    if (ownScheduler != null) {
      ownScheduler.shutdown();
    }
    ReentrantReadWriteLock.WriteLock write = gate.writeLock();
    try {
      if (write.tryLock(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        write.unlock();
        return true;
      }
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Deletes, with their groups, the ephemeral queues whose expiry passed while no manager ran
   * (BEHAVIOUR Q-EPHEMERAL); a queue that cannot be deleted is logged and left.
   */
  void deleteExpiredEphemeralQueues() {
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
        administration.delete(q.name());
        LOG.info("Deleted ephemeral queue {}: expired at {}", q.name(), expiry);
      } catch (RuntimeException e) {
        LOG.warn("Cannot delete expired ephemeral queue {}", q.name(), e);
      }
    }
  }
}
