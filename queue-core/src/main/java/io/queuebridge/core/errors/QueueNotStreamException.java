package io.queuebridge.core.errors;

/** An operation that needs a stream targets a classic queue. */
public class QueueNotStreamException extends FatalQueueException {

  public QueueNotStreamException(String queue) {
    super(queue, "queue is not a stream: " + queue);
  }
}
