package io.queuebridge.core.errors;

/**
 * The errors only the job API raises (a closed driver, an invalid handler or queue name, a handler
 * that failed, a delivery its handler left unsettled). Fatal, under the same root as every other
 * queue error: a job API call can also raise {@link DeliveryAlreadySettledException}, a {@link
 * RetriableQueueException} from the store beneath a durable driver, and the other queue errors.
 */
public abstract class JobException extends FatalQueueException {
  private static final long serialVersionUID = 1L;

  protected JobException(String message) {
    super(null, message);
  }

  protected JobException(String message, Throwable cause) {
    super(null, message, cause);
  }
}
