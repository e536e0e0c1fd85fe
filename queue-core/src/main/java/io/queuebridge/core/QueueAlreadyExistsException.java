package io.queuebridge.core;

/** A queue of that name already exists. */
public class QueueAlreadyExistsException extends QueueException {

  public QueueAlreadyExistsException(String queue) {
    super(queue, "queue already exists: " + queue);
  }
}
