package io.queuebridge.connect.sink;

import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueMessageTooLargeException;
import io.queuebridge.core.errors.RetriableQueueException;
import org.apache.kafka.connect.errors.DataException;

/**
 * The sink's one place that decides what an error means, by type (never by message text): a
 * record-level failure is this record's fault; otherwise the core's {@link RetriableQueueException}
 * branch is retriable and everything else is fatal.
 *
 * <ul>
 *   <li>{@link Kind#RETRIABLE}: the same batch may pass later (a transient store failure, a full
 *       queue, a failed durability barrier): back off, then Connect redelivers it. So does a batch
 *       a queue refused for a record's due time ({@link #isRefusedDueTime}): the records were
 *       checked against the queue's configuration when they were mapped, so the queue's {@code
 *       maxDelay} or {@code messageTtl} was lowered since (or the clock stepped back); mapped again
 *       against the queue as it is now, that record is errant and the others are written.
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
    return e instanceof RetriableQueueException || isRefusedDueTime(e)
        ? Kind.RETRIABLE
        : Kind.FATAL;
  }

  /**
   * Whether {@code e} is a queue refusing a message's due time when the batch was written
   * (BEHAVIOUR Q-DELAY: an {@link InvalidConfigException} on the field {@code deliverAt}).
   */
  static boolean isRefusedDueTime(Throwable e) {
    return e instanceof InvalidConfigException ice && "deliverAt".equals(ice.field());
  }
}
