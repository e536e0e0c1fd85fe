package io.queuebridge.core.errors;

/** An exact internal publish targets a queue that is not reserved. */
public class QueueNotReservedException extends FatalQueueException {

  public QueueNotReservedException(String queue) {
    super(queue, "queue is not reserved: " + queue);
  }
}
