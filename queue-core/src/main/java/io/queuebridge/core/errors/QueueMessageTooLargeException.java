package io.queuebridge.core.errors;

/** A message exceeds the queue's maximum message size; raised before anything is appended. */
public class QueueMessageTooLargeException extends FatalQueueException {
  private final long limit;
  private final long actual;

  public QueueMessageTooLargeException(String queue, long limit, long actual) {
    super(
        queue,
        "message of "
            + actual
            + " bytes exceeds the maximum message size "
            + limit
            + " of queue "
            + queue);
    this.limit = limit;
    this.actual = actual;
  }

  public long limit() {
    return limit;
  }

  public long actual() {
    return actual;
  }
}
