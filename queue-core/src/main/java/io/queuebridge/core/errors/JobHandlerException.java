package io.queuebridge.core.errors;

import io.queuebridge.core.job.JobDriver;

/**
 * A handler threw: {@link JobDriver#consume} ends with this error, whose {@linkplain #getCause()
 * cause} is what the handler threw. The delivery was failed before (unless the handler had already
 * settled it, in which case that settlement stands).
 */
public class JobHandlerException extends JobException {
  private static final long serialVersionUID = 1L;

  public JobHandlerException(String messageId, String queue, Throwable cause) {
    super(
        "job delivery handler failed on message "
            + messageId
            + " of queue '"
            + queue
            + "': "
            + cause,
        cause);
  }
}
