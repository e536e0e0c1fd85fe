package io.queuebridge.core.errors;

/** The consumer is not a member of the group. */
public class ConsumerNotFoundException extends FatalQueueException {

  public ConsumerNotFoundException(String queue, String group, String consumer) {
    super(queue, "consumer not found: " + consumer + " in group " + group + " on queue " + queue);
  }
}
