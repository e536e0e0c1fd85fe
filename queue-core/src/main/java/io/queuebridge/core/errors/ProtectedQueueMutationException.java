package io.queuebridge.core.errors;

/** A create, update or delete would violate a registered protected contract. */
public class ProtectedQueueMutationException extends FatalQueueException {

  public ProtectedQueueMutationException(String queue, String reason) {
    super(queue, "protected queue mutation rejected for " + queue + ": " + reason);
  }
}
