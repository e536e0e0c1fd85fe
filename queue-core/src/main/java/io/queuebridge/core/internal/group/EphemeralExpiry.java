package io.queuebridge.core.internal.group;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.ReservedQueueException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.QueueStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Expiry of ephemeral queues (BEHAVIOUR Q-EPHEMERAL): deletes the queues that are neither durable
 * nor reserved and whose last consumer left at least their {@code expiresAfter} ago (the time
 * {@link Members} records), with their groups.
 *
 * <p>Holds no state. Expects the coordinator's lock held, outside any store section (an expiry can
 * race with a join in another process). Calls the two stores, {@link Members} (to delete the groups
 * and forget their members) and {@link StreamCursors} (to forget their auto-commit throttle).
 */
final class EphemeralExpiry {
  private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);

  private final QueueStore queues;
  private final ConsumerGroupStore groups;
  private final Members members;
  private final StreamCursors cursors;

  EphemeralExpiry(
      QueueStore queues, ConsumerGroupStore groups, Members members, StreamCursors cursors) {
    this.queues = queues;
    this.groups = groups;
    this.members = members;
    this.cursors = cursors;
  }

  /**
   * Deletes the expired ephemeral queues; one that never had a consumer never expires, one the
   * store refuses to delete is skipped.
   *
   * @return the deleted queues
   */
  List<String> expire(Instant now) {
    List<String> deleted = new ArrayList<>();
    for (QueueConfig config : queues.listQueues()) {
      Optional<Instant> since = config.lastConsumerDisconnect();
      if (config.durable()
          || config.reserved()
          || since.isEmpty()
          || now.isBefore(since.get().plus(config.expiresAfter()))) {
        continue;
      }
      String queue = config.name();
      try {
        List<ConsumerGroupState> gs = groups.listGroups(queue);
        if (gs.stream().anyMatch(g -> !g.consumers().isEmpty())) {
          continue; // a member joined without clearing the mark: not idle
        }
        for (ConsumerGroupState g : gs) {
          members.deleteIdleGroup(queue, g);
          cursors.forgetAutoCommit(queue, g.id());
        }
        queues.deleteQueue(queue);
        deleted.add(queue);
        LOG.info("deleted ephemeral queue {}: no consumer since {}", queue, since.get());
      } catch (ReservedQueueException | QueueNotFoundException e) {
        LOG.debug("ephemeral queue {} not deleted", queue, e);
      }
    }
    return deleted;
  }
}
