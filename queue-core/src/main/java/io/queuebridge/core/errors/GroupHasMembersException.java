package io.queuebridge.core.errors;

import java.util.List;

/**
 * An operation that needs a group without members (an offset reset) found members registered in it.
 * Stop them (or let them leave) first, or force the operation.
 */
public class GroupHasMembersException extends FatalQueueException {
  private static final long serialVersionUID = 1L;

  public GroupHasMembersException(String queue, String group, List<String> members) {
    super(
        queue,
        "consumer group '"
            + group
            + "' on queue '"
            + queue
            + "' has "
            + members.size()
            + (members.size() == 1 ? " member " : " members ")
            + members
            + " (expected none: stop them first, or force it)");
  }
}
