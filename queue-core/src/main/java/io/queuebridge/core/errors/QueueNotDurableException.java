package io.queuebridge.core.errors;

/** An exact durable publish targets an ephemeral queue. */
public class QueueNotDurableException extends FatalQueueException {

  public QueueNotDurableException(String queue) {
    super(queue, "queue is not durable: " + queue);
  }
}
