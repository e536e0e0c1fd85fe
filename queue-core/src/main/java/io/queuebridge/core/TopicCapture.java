package io.queuebridge.core;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueFullException;
import io.queuebridge.core.internal.capture.CaptureDispatcher;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.DurableQueueStore;
import java.time.Clock;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Topic capture (BEHAVIOUR Q-CAP, Q-CAPD): resolves the queues matching a publish on the caller's
 * thread and hands one append per queue to the {@link CaptureDispatcher}'s lanes, whose workers
 * append through {@link PublishRouter#appendTo}. Reads the store's topic index and queue
 * configurations; counts every loss on the captureDispatcher. Never creates a queue, never waits
 * for an append. Starting and stopping the dispatcher is {@link ManagerLifecycle}'s.
 *
 * <p>Thread-safe: it holds no state of its own.
 */
final class TopicCapture {
  // Logs under the facade's name, which is what operators configure.
  private static final Logger LOG = LoggerFactory.getLogger(QueueManager.class);

  private final LifecycleState state;
  private final DurableQueueStore queues;
  private final CaptureDispatcher captureDispatcher;
  private final PublishRouter router;
  private final Clock clock;

  TopicCapture(
      LifecycleState state,
      DurableQueueStore queues,
      CaptureDispatcher captureDispatcher,
      PublishRouter router,
      Clock clock) {
    this.state = state;
    this.queues = queues;
    this.captureDispatcher = captureDispatcher;
    this.router = router;
    this.clock = clock;
  }

  /** {@link QueueManager#publishToMatchingQueues}. */
  void capture(PublishRequest request) {
    state.ensureUsable();
    String topic = request.topic();
    List<String> names;
    try {
      names = queues.findMatchingQueues(topic);
    } catch (RuntimeException e) {
      captureDispatcher.recordFailure();
      throw StoreErrors.wrap(null, "find queues matching topic " + topic, e);
    }
    if (names.isEmpty()) {
      return;
    }
    // The request is immutable (its arrays and maps were copied when it was built), so holding it
    // is taking ownership; normalising builds new maps.
    Message base = MessageStamping.normalise(request, clock);
    for (String name : names) {
      QueueConfig target;
      try {
        target = queues.getQueue(name);
      } catch (RuntimeException e) {
        captureDispatcher.recordFailure();
        LOG.warn(
            "Capture of topic {} lost for queue {}: its config cannot be read", topic, name, e);
        continue;
      }
      captureDispatcher.enqueue(name, () -> captureInto(target, base));
    }
  }

  /** On a capture worker: a full classic queue counts as dropped, any other failure as lost. */
  private void captureInto(QueueConfig target, Message base) throws InterruptedException {
    try {
      router.appendTo(target, base);
    } catch (QueueFullException e) {
      captureDispatcher.recordDropped(target.name(), e.getMessage());
    }
  }
}
