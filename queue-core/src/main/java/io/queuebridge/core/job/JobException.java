package io.queuebridge.core.job;

/**
 * The base of every error the job API raises. Unchecked; each kind of failure (BEHAVIOUR J-DRIVER)
 * has its own subclass. Causes are always kept.
 */
public class JobException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public JobException(String message) {
    super(message);
  }

  public JobException(String message, Throwable cause) {
    super(message, cause);
  }
}
