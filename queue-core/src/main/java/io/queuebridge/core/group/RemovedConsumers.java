package io.queuebridge.core.group;

import io.queuebridge.core.internal.group.GroupCoordinator;
import java.util.List;
import java.util.Objects;

/**
 * Members of one group removed by {@link GroupCoordinator#removeStaleConsumers}.
 *
 * @param queue the queue
 * @param group the effective group id
 * @param consumerIds the removed members, never empty; unmodifiable
 */
public record RemovedConsumers(String queue, String group, List<String> consumerIds) {
  public RemovedConsumers {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(group, "group");
    consumerIds = List.copyOf(consumerIds);
  }
}
