package io.queuebridge.core;

/** A create, update or delete would violate a registered protected contract. */
public class ProtectedQueueMutationException extends QueueException {

  public ProtectedQueueMutationException(String queue, String reason) {
    super(queue, "protected queue mutation rejected for " + queue + ": " + reason);
  }
}
