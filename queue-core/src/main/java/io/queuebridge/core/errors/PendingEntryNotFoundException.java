package io.queuebridge.core.errors;

/** The consumer holds no pending entry for that offset. */
public class PendingEntryNotFoundException extends FatalQueueException {

  public PendingEntryNotFoundException(String queue, String group, String consumer, long offset) {
    super(
        queue,
        "offset "
            + offset
            + " is not pending for consumer "
            + consumer
            + " in group "
            + group
            + " on queue "
            + queue);
  }
}
