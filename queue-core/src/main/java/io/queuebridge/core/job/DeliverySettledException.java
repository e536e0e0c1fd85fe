package io.queuebridge.core.job;

/**
 * A delivery was settled more than once, or while another settlement of it was in progress ({@code
 * ErrDeliverySettled}). The first settlement stands.
 */
public class DeliverySettledException extends JobException {
  private static final long serialVersionUID = 1L;

  public DeliverySettledException(String messageId, String queue) {
    super("job delivery already settled: message " + messageId + " of queue '" + queue + "'");
  }
}
