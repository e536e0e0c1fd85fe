package io.queuebridge.core.errors;

/** A queue of that name already exists. */
public class QueueAlreadyExistsException extends FatalQueueException {

  public QueueAlreadyExistsException(String queue) {
    super(queue, "queue already exists: " + queue);
  }
}
