package io.queuebridge.core.errors;

import io.queuebridge.core.job.JobDriver;

/**
 * The driver is stopped: startup, dispatch, consumption and retries are refused once {@link
 * JobDriver#stop} has begun ({@code ErrDriverClosed}).
 */
public class DriverClosedException extends JobException {
  private static final long serialVersionUID = 1L;

  public DriverClosedException(String system) {
    super(system + " job driver is closed");
  }
}
