package io.queuebridge.core.errors;

/** A consumer group of that id already exists on the queue. */
public class ConsumerGroupExistsException extends FatalQueueException {

  public ConsumerGroupExistsException(String queue, String group) {
    super(queue, "consumer group already exists: " + group + " on queue " + queue);
  }
}
