package io.queuebridge.core.errors;

/** The consumer group does not exist on the queue. */
public class GroupNotFoundException extends FatalQueueException {

  public GroupNotFoundException(String queue, String group) {
    super(queue, "consumer group not found: " + group + " on queue " + queue);
  }
}
