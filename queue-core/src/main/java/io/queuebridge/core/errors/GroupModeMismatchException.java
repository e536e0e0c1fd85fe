package io.queuebridge.core.errors;

import io.queuebridge.core.GroupMode;

/** A subscription asks for a mode other than the existing group's. */
public class GroupModeMismatchException extends FatalQueueException {

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
