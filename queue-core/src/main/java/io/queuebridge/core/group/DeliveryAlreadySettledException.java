package io.queuebridge.core.group;

import io.queuebridge.core.QueueException;

/**
 * A {@link GroupDelivery} was settled (acked, nacked or rejected) a second time, or while another
 * settlement of it was in progress. The first settlement stands.
 */
public class DeliveryAlreadySettledException extends QueueException {
  private static final long serialVersionUID = 1L;

  public DeliveryAlreadySettledException(String queue, String group, long offset) {
    super(
        queue,
        "delivery of offset "
            + offset
            + " in group "
            + group
            + " on queue "
            + queue
            + " is already settled");
  }
}
