package io.queuebridge.core.errors;

/**
 * A subscription asks for a mode other than the existing group's. The modes are named as {@code
 * GroupMode} names them ({@code QUEUE}, {@code STREAM}); they are passed as names so that this
 * package stays below every other.
 */
public class GroupModeMismatchException extends FatalQueueException {

  public GroupModeMismatchException(String queue, String group, String existing, String requested) {
    super(
        queue,
        "consumer group "
            + group
            + " on queue "
            + queue
            + " is in "
            + existing
            + " mode, not "
            + requested);
  }
}
