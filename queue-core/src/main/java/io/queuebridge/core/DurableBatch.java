package io.queuebridge.core;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.store.PreparedBatch;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A batch checked, stamped and prepared by {@link QueueManager#prepareBatchDurably}, to be written
 * once by {@link QueueManager#publishPrepared} of the same manager. Nothing of it is stored until
 * then. Splitting the two lets a writer prepare its next batch (the messages checked, stamped and,
 * on the {@code postgres} store, encoded) while the one before is being made durable.
 *
 * <p>Thread-safe: immutable but for the flag that makes it one-shot.
 */
public final class DurableBatch {
  final DurableStreamWriter writer;
  final QueueConfig stored;
  final PreparedBatch prepared;
  final Map<String, String> checkpoints;
  final boolean checkDepth;
  private final AtomicBoolean written = new AtomicBoolean();

  DurableBatch(
      DurableStreamWriter writer,
      QueueConfig stored,
      PreparedBatch prepared,
      Map<String, String> checkpoints,
      boolean checkDepth) {
    this.writer = writer;
    this.stored = stored;
    this.prepared = prepared;
    this.checkpoints = checkpoints;
    this.checkDepth = checkDepth;
  }

  /** The queue the batch is for. */
  public String queue() {
    return prepared.queue();
  }

  /** The number of messages. */
  public int size() {
    return prepared.messages().size();
  }

  /**
   * Marks the batch as handed to the store.
   *
   * @throws IllegalStateException if it was handed over before
   */
  void claim() {
    if (!written.compareAndSet(false, true)) {
      throw new IllegalStateException(
          "the batch of "
              + size()
              + " messages for queue "
              + queue()
              + " was published before; prepare it again to append it again");
    }
  }

  @Override
  public String toString() {
    return "DurableBatch[" + queue() + ", " + size() + " messages]";
  }
}
