package io.queuebridge.core.errors;

import io.queuebridge.core.QueueManager;

/**
 * Stop could not quiesce push delivery or the periodic loops within the drain timeout (a handler
 * still running, a retention pass stuck in the store): the store must not be closed (see {@link
 * QueueManager#shutdownComplete()}).
 */
public class DeliveryStillRunningException extends FatalQueueException {

  public DeliveryStillRunningException(int threads) {
    super(
        null,
        threads
            + " delivery or background thread(s) did not finish within the drain timeout;"
            + " queue resources left open");
  }
}
