package io.queuebridge.core.errors;

/** A store refuses to delete a reserved (system) queue. */
public class ReservedQueueException extends FatalQueueException {

  public ReservedQueueException(String queue) {
    super(queue, "reserved queue cannot be deleted: " + queue);
  }
}
