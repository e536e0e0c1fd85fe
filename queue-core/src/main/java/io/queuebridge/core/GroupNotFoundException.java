package io.queuebridge.core;

/** The consumer group does not exist on the queue. */
public class GroupNotFoundException extends QueueException {

  public GroupNotFoundException(String queue, String group) {
    super(queue, "consumer group not found: " + group + " on queue " + queue);
  }
}
