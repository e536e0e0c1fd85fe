package io.queuebridge.core.errors;

/** The group's pending entry list reached its cap; new claims wait for acks. */
public class PelFullException extends RetriableQueueException {

  public PelFullException(String queue, String group, int pending, int limit) {
    super(
        queue,
        "pending entry list of group "
            + group
            + " on queue "
            + queue
            + " is full: "
            + pending
            + " >= "
            + limit);
  }
}
