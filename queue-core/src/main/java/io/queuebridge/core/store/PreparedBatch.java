package io.queuebridge.core.store;

import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.support.StoreChecks;
import java.util.List;
import java.util.Objects;

/**
 * A batch made ready for {@link DurableQueueStore#appendPreparedAndSync}: the messages to append to
 * one queue, and whatever a store did with them ahead of the write ({@link
 * DurableQueueStore#prepareBatch}; the {@code postgres} store encodes them and packs its rows).
 * Preparing touches no stored state, so a writer can prepare its next batch while the one before is
 * being written and made durable.
 *
 * <p>A store extends this class to carry its work; it is immutable, and a store accepts a prepared
 * batch of another store (or of this base class) by preparing it again.
 */
public class PreparedBatch {
  private final String queue;
  private final List<Message> messages;

  /**
   * @throws NullPointerException if {@code queue}, {@code messages} or an element is null
   * @throws IllegalArgumentException if {@code messages} is empty
   */
  protected PreparedBatch(String queue, List<Message> messages) {
    this.queue = Objects.requireNonNull(queue, "queue");
    this.messages = StoreChecks.checkBatch(queue, messages);
  }

  /**
   * A batch with nothing prepared: {@link DurableQueueStore#appendPreparedAndSync} appends its
   * messages as {@link DurableQueueStore#appendBatchAndSync} does.
   *
   * @throws NullPointerException if {@code queue}, {@code messages} or an element is null
   * @throws IllegalArgumentException if {@code messages} is empty
   */
  public static PreparedBatch of(String queue, List<Message> messages) {
    return new PreparedBatch(queue, messages);
  }

  /** The queue the batch is for. */
  public final String queue() {
    return queue;
  }

  /** The messages, in append order; unmodifiable, never empty. */
  public final List<Message> messages() {
    return messages;
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + queue + ", " + messages.size() + " messages]";
  }
}
