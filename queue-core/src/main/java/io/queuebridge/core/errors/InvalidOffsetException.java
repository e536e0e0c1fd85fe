package io.queuebridge.core.errors;

/** A commit names an offset beyond the group's cursor. */
public class InvalidOffsetException extends FatalQueueException {

  public InvalidOffsetException(String queue, String group, long offset, long cursor) {
    super(
        queue,
        "cannot commit offset "
            + offset
            + " for group "
            + group
            + " on queue "
            + queue
            + ": beyond the cursor "
            + cursor);
  }
}
