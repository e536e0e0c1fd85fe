package io.queuebridge.cli;

/**
 * A failure the command reports as its one-line error (exit status 1): what was wrong, with the
 * value and what was expected. Thrown for the command line's own checks; the core's {@link
 * io.queuebridge.core.errors.QueueException}s are reported the same way.
 */
public final class CliException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public CliException(String message) {
    super(message);
  }
}
