package io.queuebridge.core;

/** An exact durable publish targets an ephemeral queue. */
public class QueueNotDurableException extends QueueException {

  public QueueNotDurableException(String queue) {
    super(queue, "queue is not durable: " + queue);
  }
}
