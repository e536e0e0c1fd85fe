package io.queuebridge.connect.sink;

import io.queuebridge.core.InvalidConfigException;
import io.queuebridge.core.ProtectedQueueContractDriftException;
import io.queuebridge.core.QueueException;
import io.queuebridge.core.QueueFullException;
import io.queuebridge.core.QueueMessageTooLargeException;
import io.queuebridge.core.QueueStoreException;
import io.queuebridge.core.RetriableStoreException;
import io.queuebridge.core.StoreClosedException;
import io.queuebridge.core.StoreCorruptedException;
import io.queuebridge.core.StoreLockedException;
import org.apache.kafka.connect.errors.DataException;

/**
 * The sink's one place that decides what an error means, by type (never by message text).
 *
 * <ul>
 *   <li>{@link Kind#RETRIABLE}: the same batch may pass later (a transient store failure, a full
 *       queue, a failed durability barrier): back off, then Connect redelivers it.
 *   <li>{@link Kind#RECORD}: this record cannot be written (too large, unconvertible): report it to
 *       the dead-letter topic under {@code errors.tolerance=all}, otherwise fail.
 *   <li>{@link Kind#FATAL}: nothing will change by retrying (contract drift, corruption, a locked
 *       or closed store, bad configuration): fail the task with the message.
 * </ul>
 */
final class SinkErrors {
  enum Kind {
    RETRIABLE,
    RECORD,
    FATAL
  }

  private SinkErrors() {}

  static Kind classify(Throwable e) {
    if (e instanceof QueueMessageTooLargeException || e instanceof DataException) {
      return Kind.RECORD;
    }
    if (e instanceof ProtectedQueueContractDriftException
        || e instanceof StoreCorruptedException
        || e instanceof StoreLockedException
        || e instanceof StoreClosedException
        || e instanceof InvalidConfigException) {
      return Kind.FATAL;
    }
    if (e instanceof RetriableStoreException || e instanceof QueueFullException) {
      return Kind.RETRIABLE;
    }
    if (e instanceof QueueStoreException) {
      // An I/O failure or a failed durability barrier: the store refuses further appends until a
      // sync passes again, so retrying the batch is the way to find out.
      return Kind.RETRIABLE;
    }
    if (e instanceof QueueException) {
      return Kind.FATAL;
    }
    return Kind.FATAL;
  }
}
