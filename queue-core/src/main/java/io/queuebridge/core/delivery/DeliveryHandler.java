package io.queuebridge.core.delivery;

import io.queuebridge.core.group.GroupDelivery;

/**
 * Handles the messages a push subscription receives ({@link
 * io.queuebridge.core.QueueManager#consume}), one at a time, on a delivery worker thread.
 *
 * <p>The handler owns each delivery while it runs and settles it before returning: {@link
 * GroupDelivery#ack()}, {@link GroupDelivery#nack()}, {@link
 * GroupDelivery#nack(java.time.Duration)} or {@link GroupDelivery#reject(String)} (settle-once,
 * BEHAVIOUR Q-SETTLE). What happens otherwise:
 *
 * <ul>
 *   <li>it <b>throws</b>: the failure is logged and counted, and the delivery is nacked unless the
 *       handler settled it first. In queue mode the message comes back after the queue's retry
 *       backoff (or goes to the dead-letter queue once its retries are exhausted) and the next
 *       message of the batch is handed over; in stream mode the pass stops there, the cursor is
 *       committed up to (not including) the failed message, and the message is offered again at the
 *       next sweep (about a second later) until the handler accepts or rejects it;
 *   <li>it <b>returns without settling</b>: logged and counted, and the delivery is nacked too — in
 *       queue mode it is retried like a failure; in stream mode a nack changes nothing, so the
 *       message counts as delivered and the cursor moves past it.
 * </ul>
 *
 * A handler must not hand its delivery to another thread to settle later: the engine nacks it as
 * soon as the handler returns. Handlers of one subscription are never called concurrently; handlers
 * of different subscriptions are.
 */
@FunctionalInterface
public interface DeliveryHandler {

  /**
   * Handles one delivery.
   *
   * @throws Exception anything; see the class comment for what the engine does with it
   */
  void handle(GroupDelivery delivery) throws Exception;
}
