package io.queuebridge.core.store;

import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.Message;
import java.util.List;
import java.util.Map;

/**
 * A {@link QueueStore} that can append <em>and</em> establish a durability barrier for exactly that
 * write as one operation.
 *
 * <p><b>What "durable" means.</b> When a sync method returns normally and {@link
 * #supportsDurableSync()} is true, the appended messages (and checkpoints) survive a process kill
 * and a machine crash. When {@code supportsDurableSync()} is false the same methods only order the
 * write and promise nothing: anyone acknowledging on behalf of a publisher must consult the flag.
 *
 * <p><b>Interruption.</b> A thread interrupted <em>before</em> the append starts gets {@link
 * InterruptedException} and nothing is written, so the caller can refuse cleanly. Once the append
 * has started the call is not interruptible: it completes (or fails) and the thread's interrupt
 * status is left set.
 *
 * <p><b>Failure.</b> A {@link QueueStoreException} means the write must not be acknowledged: the
 * barrier did not complete (the messages may or may not be in the log). A failed barrier is sticky:
 * later appends to the queue retry the sync first and are refused while it keeps failing.
 */
public interface DurableQueueStore extends QueueStore {

  /**
   * Appends one message and returns its offset once it is durable.
   *
   * @throws InterruptedException if interrupted before the append started (nothing written)
   * @throws QueueNotFoundException if there is no such queue
   * @throws QueueStoreException if the append or the barrier failed (do not acknowledge)
   */
  long appendAndSync(String queue, Message message) throws InterruptedException;

  /**
   * {@link #appendDeduplicated} with the barrier of {@link #appendAndSync}: returns once the stored
   * message is durable; a duplicate answers the first offset without a barrier of its own (its
   * message was stored by an append of its own, acknowledged on its own terms).
   *
   * @throws InterruptedException if interrupted before the append started (nothing written)
   * @throws IllegalArgumentException if the message has no (or an empty) deduplication id
   * @throws QueueNotFoundException if there is no such queue
   * @throws QueueStoreException if the append or the barrier failed (do not acknowledge)
   * @throws UnsupportedOperationException if the store cannot deduplicate (this default)
   */
  default AppendResult appendDeduplicatedAndSync(
      String queue, Message message, java.time.Instant windowStart) throws InterruptedException {
    throw new UnsupportedOperationException("the store " + this + " cannot deduplicate appends");
  }

  /**
   * Appends a batch at contiguous offsets, merges {@code checkpoints} into the queue's checkpoint
   * map, and returns the first offset once messages and checkpoints are durable together: after a
   * crash either both are present or neither is. Concurrent callers share barriers (group commit);
   * each caller still pays at most one.
   *
   * <p>Checkpoints let a writer record, atomically with its data, how far it has read an external
   * source (the sink connector's per-partition Kafka offsets). Keys and values are opaque strings;
   * an empty map writes none.
   *
   * @throws IllegalArgumentException if {@code messages} is empty
   * @throws InterruptedException if interrupted before the append started (nothing written)
   * @throws QueueNotFoundException if there is no such queue
   * @throws QueueStoreException if the append or the barrier failed (do not acknowledge)
   */
  long appendBatchAndSync(String queue, List<Message> messages, Map<String, String> checkpoints)
      throws InterruptedException;

  /**
   * Does, ahead of {@link #appendPreparedAndSync}, the work of an append that needs no stored state
   * (encoding the messages, say), so that a writer can prepare one batch while its previous one is
   * being made durable. Reads and changes nothing stored; the queue need not exist yet. This
   * default prepares nothing.
   *
   * @throws IllegalArgumentException if {@code messages} is empty
   * @throws NullPointerException if {@code queue}, {@code messages} or an element is null
   */
  default PreparedBatch prepareBatch(String queue, List<Message> messages) {
    return PreparedBatch.of(queue, messages);
  }

  /**
   * {@link #appendBatchAndSync} of a prepared batch ({@link #prepareBatch}): the same append, the
   * same barrier, the same checkpoints. A batch prepared by another store, or not prepared at all,
   * is appended like any other. This default calls {@link #appendBatchAndSync}.
   *
   * @throws InterruptedException if interrupted before the append started (nothing written)
   * @throws QueueNotFoundException if there is no such queue
   * @throws QueueStoreException if the append or the barrier failed (do not acknowledge)
   */
  default long appendPreparedAndSync(PreparedBatch batch, Map<String, String> checkpoints)
      throws InterruptedException {
    return appendBatchAndSync(batch.queue(), batch.messages(), checkpoints);
  }

  /**
   * The queue's checkpoint map as of the last successful {@link #appendBatchAndSync}; empty when
   * none was written. Returns a copy.
   *
   * @throws QueueNotFoundException if there is no such queue
   */
  Map<String, String> checkpoints(String queue);

  /**
   * True only if a completed barrier survives a process <em>and</em> a machine crash. Never true
   * for a memory store.
   */
  boolean supportsDurableSync();
}
