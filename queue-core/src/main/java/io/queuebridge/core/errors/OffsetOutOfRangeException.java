package io.queuebridge.core.errors;

/** A read names an offset outside [head, tail) of the queue's log. */
public class OffsetOutOfRangeException extends FatalQueueException {
  private final long offset;
  private final long head;
  private final long tail;

  public OffsetOutOfRangeException(String queue, long offset, long head, long tail) {
    super(
        queue,
        "offset " + offset + " is out of range [" + head + ", " + tail + ") of queue " + queue);
    this.offset = offset;
    this.head = head;
    this.tail = tail;
  }

  public long offset() {
    return offset;
  }

  public long head() {
    return head;
  }

  public long tail() {
    return tail;
  }
}
