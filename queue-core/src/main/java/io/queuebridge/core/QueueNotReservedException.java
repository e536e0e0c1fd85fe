package io.queuebridge.core;

/** An exact internal publish targets a queue that is not reserved. */
public class QueueNotReservedException extends QueueException {

  public QueueNotReservedException(String queue) {
    super(queue, "queue is not reserved: " + queue);
  }
}
