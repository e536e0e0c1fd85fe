package io.queuebridge.core.group;

import io.queuebridge.core.internal.group.GroupCoordinator;
import java.util.List;

/**
 * What {@link GroupCoordinator#peek} read from a stream-mode group's cursor.
 *
 * @param deliveries the matching, unexpired messages in offset order; empty when there were none
 * @param next one past the last offset examined (skipped messages included); the cursor to commit
 *     with {@link GroupCoordinator#commitCursor} once all deliveries were handed over. Equal to the
 *     cursor when nothing was examined.
 */
public record StreamBatch(List<GroupDelivery> deliveries, long next) {
  public StreamBatch {
    deliveries = List.copyOf(deliveries);
  }

  public boolean isEmpty() {
    return deliveries.isEmpty();
  }
}
