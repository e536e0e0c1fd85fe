package io.queuebridge.core.errors;

/** Ack, nack or reject named a message that no group member holds. */
public class MessageNotPendingException extends FatalQueueException {

  public MessageNotPendingException(String queue, String group, long offset) {
    super(
        queue,
        "message at offset "
            + offset
            + " is not pending in group "
            + (group == null || group.isEmpty() ? "(any)" : group)
            + " on queue "
            + queue);
  }
}
