package io.queuebridge.core;

/** The exact durable stream path is used for a queue without a registered contract. */
public class QueueNotProtectedException extends QueueException {

  public QueueNotProtectedException(String queue) {
    super(queue, "queue has no protected contract: " + queue);
  }
}
