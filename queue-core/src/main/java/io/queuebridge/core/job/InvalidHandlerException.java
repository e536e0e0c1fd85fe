package io.queuebridge.core.job;

/** {@link JobDriver#consume} was given a null handler ({@code ErrInvalidHandler}). */
public class InvalidHandlerException extends JobException {
  private static final long serialVersionUID = 1L;

  public InvalidHandlerException(String queue) {
    super("invalid job delivery handler for queue '" + queue + "': null (expected a handler)");
  }
}
