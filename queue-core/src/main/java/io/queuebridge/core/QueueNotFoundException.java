package io.queuebridge.core;

/** The named queue does not exist. */
public class QueueNotFoundException extends QueueException {

  public QueueNotFoundException(String queue) {
    super(queue, "queue not found: " + queue);
  }
}
