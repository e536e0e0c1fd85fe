package io.queuebridge.core.errors;

/**
 * Stop could not quiesce capture: the store must not be closed (see
 * QueueManager#shutdownComplete()).
 */
public class CaptureStillRunningException extends FatalQueueException {

  public CaptureStillRunningException(int workers) {
    super(
        null,
        workers
            + " capture worker(s) did not finish within the drain timeout; queue resources left open");
  }
}
