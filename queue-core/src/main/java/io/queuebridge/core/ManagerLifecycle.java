package io.queuebridge.core;

import io.queuebridge.core.config.PeriodicScheduler;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.CaptureStillRunningException;
import io.queuebridge.core.errors.DeliveryStillRunningException;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.internal.capture.CaptureDispatcher;
import io.queuebridge.core.internal.delivery.DeliveryEngine;
import io.queuebridge.core.store.DurableQueueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starting and stopping a manager (BEHAVIOUR M-START, Q-STOP): the order in which the configured
 * queues, the contract check, expired ephemeral queues, the delivery engine, the capture dispatcher
 * and the {@link ManagerLoops} are brought up, and the order in which capture, delivery and the
 * loops are drained. Moves the {@link LifecycleState} on; remembers whether shutdown completed.
 *
 * <p>Thread-safe: {@link #start} and {@link #stop} are serialised by one lifecycle lock, held for
 * their whole run (and so across the store work of start and the drains of stop); {@link
 * #shutdownComplete} reads a volatile flag.
 */
final class ManagerLifecycle {
  // Logs under the facade's name, which is what operators configure.
  private static final Logger LOG = LoggerFactory.getLogger(QueueManager.class);

  private final LifecycleState state;
  private final QueueManagerConfig config;
  private final DurableQueueStore queues;
  private final ContractRegistry registry;
  private final ManagerLoops loops;
  private final DeliveryEngine delivery;
  private final CaptureDispatcher captureDispatcher;

  private final Object lock = new Object();
  private volatile boolean shutdownComplete;

  ManagerLifecycle(
      LifecycleState state,
      QueueManagerConfig config,
      DurableQueueStore queues,
      ContractRegistry registry,
      ManagerLoops loops,
      DeliveryEngine delivery,
      CaptureDispatcher captureDispatcher) {
    this.state = state;
    this.config = config;
    this.queues = queues;
    this.registry = registry;
    this.loops = loops;
    this.delivery = delivery;
    this.captureDispatcher = captureDispatcher;
  }

  /** {@link QueueManager#start()}. */
  void start() {
    synchronized (lock) {
      state.ensureStartable();
      for (QueueConfig q : config.queueConfigs()) {
        try {
          queues.createQueue(q);
        } catch (QueueAlreadyExistsException e) {
          LOG.debug("Configured queue {} exists; keeping the stored configuration", q.name());
        } catch (RuntimeException e) {
          throw StoreErrors.wrap(q.name(), "create configured queue " + q.name(), e);
        }
      }
      registry.validateAgainstStorage();
      loops.deleteExpiredEphemeralQueues();
      PeriodicScheduler scheduler = loops.scheduler();
      delivery.start(scheduler);
      captureDispatcher.start();
      loops.start(scheduler);
      state.running();
    }
  }

  /**
   * {@link QueueManager#stop()}: capture first, because its workers append and schedule deliveries;
   * then the delivery engine; then the loops. The last two share the delivery drain timeout.
   */
  void stop() {
    synchronized (lock) {
      if (shutdownComplete) {
        return;
      }
      state.stopped();
      boolean captureQuiet = captureDispatcher.stop();
      boolean deliveryQuiet = delivery.stop(config.deliveryDrainTimeout());
      boolean loopsQuiet = loops.stop(config.deliveryDrainTimeout());
      if (!captureQuiet) {
        throw new CaptureStillRunningException(captureDispatcher.liveWorkers());
      }
      if (!deliveryQuiet || !loopsQuiet) {
        throw new DeliveryStillRunningException(delivery.liveThreads() + (loopsQuiet ? 0 : 1));
      }
      shutdownComplete = true;
    }
  }

  /** {@link QueueManager#shutdownComplete()}. */
  boolean shutdownComplete() {
    return shutdownComplete;
  }
}
