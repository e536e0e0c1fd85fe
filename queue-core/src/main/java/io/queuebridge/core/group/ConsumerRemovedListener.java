package io.queuebridge.core.group;

import io.queuebridge.core.internal.group.GroupCoordinator;
import java.util.List;

/**
 * Told when members are removed for missing heartbeats (BEHAVIOUR Q-HEARTBEAT). Called on the
 * thread running {@link GroupCoordinator#removeStaleConsumers}, after the coordinator released its
 * lock; it must not block. An exception it throws is logged and ignored.
 */
@FunctionalInterface
public interface ConsumerRemovedListener {

  /**
   * @param queue the queue
   * @param group the effective group id
   * @param consumerIds the removed members; an unmodifiable copy the listener may keep
   */
  void onConsumersRemoved(String queue, String group, List<String> consumerIds);
}
