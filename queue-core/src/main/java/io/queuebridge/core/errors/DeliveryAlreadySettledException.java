package io.queuebridge.core.errors;

/**
 * A delivery was settled (acknowledged, retried, rejected or failed) a second time, or while
 * another settlement of it was in progress. Raised by consumer-group deliveries and by the job API
 * alike. The first settlement stands and nothing changed; fatal, since settling again can never
 * succeed.
 */
public class DeliveryAlreadySettledException extends FatalQueueException {
  private static final long serialVersionUID = 1L;

  /** A consumer-group delivery of {@code offset} in {@code group} on {@code queue}. */
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

  /** A job delivery of message {@code messageId} of {@code queue}. */
  public DeliveryAlreadySettledException(String queue, String messageId) {
    super(
        queue, "job delivery already settled: message " + messageId + " of queue '" + queue + "'");
  }
}
