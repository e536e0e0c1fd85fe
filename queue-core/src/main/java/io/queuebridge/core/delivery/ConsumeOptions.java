package io.queuebridge.core.delivery;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import java.util.Objects;

/**
 * How {@link io.queuebridge.core.QueueManager#consume} subscribes. Immutable; start from {@link
 * #defaults()} and change values with the {@code with*} methods.
 *
 * @param pattern the group's routing-key filter (BEHAVIOUR Q-ROUTE); empty = every message.
 *     Different patterns are different groups ({@code group@pattern}).
 * @param cursor where and how to read: the mode (queue or stream), the position applied to the
 *     group's shared cursor, auto-commit for a new group; null = resume in queue mode
 * @param batchSize messages claimed or read per delivery pass; {@code <= 0} = the queue's {@code
 *     batchSize}, or the manager's {@code deliveryBatchSize} when the queue sets none (read at the
 *     subscription's first pass)
 * @param createQueue true ({@code subscribe}): a missing queue is created as an ephemeral queue,
 *     and a classic queue is converted to a stream for a stream-mode cursor; false ({@code
 *     subscribeExisting}): the queue must exist, and a stream-mode cursor needs a stream
 */
public record ConsumeOptions(
    String pattern, CursorOption cursor, int batchSize, boolean createQueue) {

  /**
   * Every message, resume in queue mode, the queue's batch size (else the manager's), create the
   * queue if absent.
   */
  public static ConsumeOptions defaults() {
    return new ConsumeOptions("", null, 0, true);
  }

  public ConsumeOptions {
    pattern = Objects.requireNonNullElse(pattern, "");
  }

  /** The effective mode: the cursor's, else queue mode. */
  public GroupMode mode() {
    return cursor == null ? GroupMode.QUEUE : cursor.effectiveMode();
  }

  public ConsumeOptions withPattern(String value) {
    return new ConsumeOptions(value, cursor, batchSize, createQueue);
  }

  public ConsumeOptions withCursor(CursorOption value) {
    return new ConsumeOptions(pattern, value, batchSize, createQueue);
  }

  public ConsumeOptions withBatchSize(int value) {
    return new ConsumeOptions(pattern, cursor, value, createQueue);
  }

  public ConsumeOptions withCreateQueue(boolean value) {
    return new ConsumeOptions(pattern, cursor, batchSize, value);
  }
}
