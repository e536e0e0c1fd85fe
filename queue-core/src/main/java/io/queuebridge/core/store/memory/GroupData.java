package io.queuebridge.core.store.memory;

import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.support.GroupTable;

/**
 * One memory-store consumer group: its {@link GroupTable} (the state and the rules of every change)
 * and whether it was deleted.
 *
 * <p>Not thread-safe by itself: {@link MemoryGroupStore} holds the object's monitor around every
 * read and change. Once {@link #deleted} is set (the group or its queue was deleted) the object is
 * detached from the store and every operation on it reports the group missing.
 */
final class GroupData {
  final GroupTable table;
  boolean deleted;

  GroupData(ConsumerGroupState state) {
    this.table = new GroupTable(state);
  }

  /**
   * The group's table, for a read or a change under this object's monitor.
   *
   * @throws GroupNotFoundException if the group was deleted
   */
  GroupTable live() {
    if (deleted) {
      throw new GroupNotFoundException(table.queue(), table.id());
    }
    return table;
  }
}
