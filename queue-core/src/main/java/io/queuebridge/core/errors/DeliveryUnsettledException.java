package io.queuebridge.core.errors;

import io.queuebridge.core.job.JobDriver;

/**
 * A handler returned without settling its delivery ({@code ErrDeliveryUnsettled}). The driver
 * failed the delivery (terminal cleanup) before ending {@link JobDriver#consume} with this error.
 */
public class DeliveryUnsettledException extends JobException {
  private static final long serialVersionUID = 1L;

  public DeliveryUnsettledException(String messageId, String queue) {
    super(
        "job delivery was not settled: the handler returned without settling message "
            + messageId
            + " of queue '"
            + queue
            + "'");
  }
}
