package io.queuebridge.core.errors;

/** The named queue does not exist. */
public class QueueNotFoundException extends FatalQueueException {

  public QueueNotFoundException(String queue) {
    super(queue, "queue not found: " + queue);
  }
}
