package io.queuebridge.core.errors;

/** The exact durable stream path is used for a queue without a registered contract. */
public class QueueNotProtectedException extends FatalQueueException {

  public QueueNotProtectedException(String queue) {
    super(queue, "queue has no protected contract: " + queue);
  }
}
