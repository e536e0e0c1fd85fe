package io.queuebridge.core;

import io.queuebridge.core.internal.delivery.DeliveryEngine;
import java.util.Objects;

/**
 * The collaborators' one way to tell push delivery (BEHAVIOUR Q-DEL) that a queue has work: after
 * every successful append, queue creation and subscription ({@link #schedule}) and after a queue is
 * deleted ({@link #unschedule}). Forwards to the manager's {@link DeliveryEngine}, or to the {@link
 * QueueManager.DeliveryScheduler} a test installed instead.
 *
 * <p>Thread-safe and non-blocking: it runs on the appending thread (a publisher or a capture
 * worker). The engine is called directly, with no forwarding object in between, while nothing is
 * installed.
 */
final class DeliveryHook {
  private final DeliveryEngine engine;
  private volatile QueueManager.DeliveryScheduler installed; // null: the engine

  DeliveryHook(DeliveryEngine engine) {
    this.engine = Objects.requireNonNull(engine, "engine");
  }

  void schedule(String queue) {
    QueueManager.DeliveryScheduler scheduler = installed;
    if (scheduler == null) {
      engine.schedule(queue);
    } else {
      scheduler.schedule(queue);
    }
  }

  void unschedule(String queue) {
    QueueManager.DeliveryScheduler scheduler = installed;
    if (scheduler == null) {
      engine.unschedule(queue);
    } else {
      scheduler.unschedule(queue);
    }
  }

  /** Sends every later call to {@code scheduler} instead of the engine. */
  void install(QueueManager.DeliveryScheduler scheduler) {
    this.installed = Objects.requireNonNull(scheduler, "scheduler");
  }
}
