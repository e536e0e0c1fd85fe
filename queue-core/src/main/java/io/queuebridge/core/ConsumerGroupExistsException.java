package io.queuebridge.core;

/** A consumer group of that id already exists on the queue. */
public class ConsumerGroupExistsException extends QueueException {

  public ConsumerGroupExistsException(String queue, String group) {
    super(queue, "consumer group already exists: " + group + " on queue " + queue);
  }
}
