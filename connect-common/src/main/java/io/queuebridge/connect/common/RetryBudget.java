package io.queuebridge.connect.common;

import io.queuebridge.core.errors.QueueStoreException;
import java.time.Clock;
import java.time.Duration;
import org.apache.kafka.connect.errors.ConnectException;

/**
 * A task's budget for transient store errors ({@code queue.retry.timeout.ms}): a run of failures
 * with no store call succeeding in between may last this long; the first failure after that is the
 * one the task fails with, naming the store, the run's length and the last error. Back-pressure (a
 * full queue, a full pending entry list) is not a store failure and is never recorded here.
 *
 * <p>Not thread-safe: the task thread only.
 */
public final class RetryBudget {
  private final String key;
  private final Duration timeout;
  private final Clock clock;
  private long failingSince = -1;
  private int failures;

  /**
   * @param key the config key that set {@code timeout}, for the message
   * @param timeout how long a run of failures may last; null = forever
   */
  public RetryBudget(String key, Duration timeout, Clock clock) {
    this.key = key;
    this.timeout = timeout;
    this.clock = clock;
  }

  /**
   * Whether {@code e} is what the budget is about: a transient store failure ({@link
   * QueueStoreException}), itself or as a cause (a Connect exception wrapping it).
   */
  public static boolean isStoreFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof QueueStoreException) {
        return true;
      }
    }
    return false;
  }

  /** A store call succeeded: the run of failures, if any, is over. */
  public void succeeded() {
    failingSince = -1;
    failures = 0;
  }

  /**
   * Records the transient failure {@code e} of the store described as {@code store}.
   *
   * @return null while the budget lasts (retry after the backoff); else the exception to fail the
   *     task with
   */
  public ConnectException failed(String store, Throwable e) {
    long now = clock.millis();
    if (failingSince < 0) {
      failingSince = now;
    }
    failures++;
    long failingFor = now - failingSince;
    if (timeout == null
        || failingFor < timeout.toMillis()
        || (failures == 1 && !timeout.isZero())) {
      return null;
    }
    return new ConnectException(
        "giving up on the store "
            + store
            + ": "
            + failures
            + " transient failure(s) in a row over "
            + failingFor
            + " ms, past "
            + key
            + "="
            + timeout.toMillis()
            + "; restart the task once the store is reachable again (it resumes where the store"
            + " says, exactly once). Last error: "
            + e.getMessage(),
        e);
  }

  /** Failures in the current run; 0 when none. */
  public int failures() {
    return failures;
  }
}
