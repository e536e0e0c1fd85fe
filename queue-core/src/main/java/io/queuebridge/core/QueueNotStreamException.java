package io.queuebridge.core;

/** An operation that needs a stream targets a classic queue. */
public class QueueNotStreamException extends QueueException {

  public QueueNotStreamException(String queue) {
    super(queue, "queue is not a stream: " + queue);
  }
}
