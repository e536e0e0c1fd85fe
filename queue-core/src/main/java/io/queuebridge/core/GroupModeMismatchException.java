package io.queuebridge.core;

/** A subscription asks for a mode other than the existing group's. */
public class GroupModeMismatchException extends QueueException {

  public GroupModeMismatchException(
      String queue, String group, GroupMode existing, GroupMode requested) {
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
