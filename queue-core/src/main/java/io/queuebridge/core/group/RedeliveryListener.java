package io.queuebridge.core.group;

import io.queuebridge.core.internal.group.GroupCoordinator;
import java.time.Instant;

/**
 * Told when a pending message becomes claimable again at a known time: a claim's or a steal's
 * visibility timeout, a nack's retry backoff or explicit delay, a renewal (see {@link
 * GroupCoordinator.Builder#onRedeliveryDue}). A push delivery engine arms a timer for that time, so
 * a redelivery waits about the backoff rather than until the next periodic sweep.
 *
 * <p>Called on the thread settling or claiming, while the coordinator holds its lock: it must not
 * block and must not call back into the coordinator. An exception it throws is logged and ignored.
 * One call may stand for several entries (a claimed batch reports its one visibility time).
 */
@FunctionalInterface
public interface RedeliveryListener {

  /**
   * @param queue the queue
   * @param group the effective group id
   * @param visibleAt when the entry (or entries) can be claimed again
   */
  void redeliveryDue(String queue, String group, Instant visibleAt);
}
