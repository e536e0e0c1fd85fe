package io.queuebridge.connect.source;

import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.RetriableQueueException;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;

/**
 * The source's one place that decides what an error means, by type (never by message text), and
 * wraps it once with the resource it concerns.
 *
 * <ul>
 *   <li>{@link Kind#RETRIABLE}: a {@link RetriableQueueException} (a transient store failure, a
 *       full pending entry list): the task backs off {@code queue.retry.backoff.ms} and polls
 *       again; Connect sees a {@link RetriableException}.
 *   <li>{@link Kind#GONE}: the queue was deleted: the task stops reading it (the connector notices
 *       and reconfigures the tasks).
 *   <li>{@link Kind#FATAL}: nothing will change by retrying (corruption, a locked or closed store,
 *       bad configuration, a broken invariant): the task fails with the message.
 * </ul>
 */
final class SourceErrors {
  enum Kind {
    RETRIABLE,
    GONE,
    FATAL
  }

  private SourceErrors() {}

  static Kind classify(Throwable e) {
    if (e instanceof QueueNotFoundException) {
      return Kind.GONE;
    }
    return e instanceof RetriableQueueException ? Kind.RETRIABLE : Kind.FATAL;
  }

  /** The Connect exception for {@code e}: retriable or fatal, naming {@code what} failed. */
  static ConnectException toConnect(String what, Throwable e) {
    if (e instanceof ConnectException c) {
      return c;
    }
    String message = what + ": " + e.getMessage();
    return classify(e) == Kind.RETRIABLE
        ? new RetriableException(message, e)
        : new ConnectException(message, e);
  }
}
