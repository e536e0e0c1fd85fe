package io.queuebridge.core;

/** A store refuses to delete a reserved (system) queue. */
public class ReservedQueueException extends QueueException {

  public ReservedQueueException(String queue) {
    super(queue, "reserved queue cannot be deleted: " + queue);
  }
}
