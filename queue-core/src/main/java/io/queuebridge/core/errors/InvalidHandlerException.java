package io.queuebridge.core.errors;

import io.queuebridge.core.job.JobDriver;

/** {@link JobDriver#consume} was given a null handler ({@code ErrInvalidHandler}). */
public class InvalidHandlerException extends JobException {
  private static final long serialVersionUID = 1L;

  public InvalidHandlerException(String queue) {
    super("invalid job delivery handler for queue '" + queue + "': null (expected a handler)");
  }
}
