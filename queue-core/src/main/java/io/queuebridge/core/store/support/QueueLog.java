package io.queuebridge.core.store.support;

import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.QueueStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Support for store implementers: one queue's log, the per-queue half of {@link DurableQueueStore}
 * that a {@link QueueLogStore} forwards every call to. Each method is the store method of the same
 * name (see there for what it promises) without the queue name.
 *
 * <p><b>Arguments.</b> The store has applied {@link StoreChecks} before it calls: arguments are not
 * null, a batch is a non-empty immutable copy without null elements, a limit is positive, a size
 * budget is not negative, a thread interrupted before a sync append was refused. Implementations
 * need not check again.
 *
 * <p><b>Errors.</b> Once the queue was deleted every method throws {@link
 * io.queuebridge.core.errors.QueueNotFoundException}; once the store was closed, {@link
 * io.queuebridge.core.errors.StoreClosedException}. A failed append leaves nothing in the log,
 * except that after a failed barrier of a sync append the messages may or may not be there (the
 * write must not be acknowledged).
 *
 * <p>Implementations are thread-safe.
 */
public interface QueueLog {

  /** {@link QueueStore#append}: appends {@code message}, returns its offset. */
  long append(Message message);

  /** {@link QueueStore#appendBatch}: appends {@code batch}, returns the first offset. */
  long appendBatch(List<Message> batch);

  /**
   * {@link DurableQueueStore#appendAndSync}: appends {@code message} and returns its offset once it
   * is durable (if the store supports it).
   *
   * @throws InterruptedException if the append was cancelled by an interrupt before it started
   *     (nothing written)
   */
  long appendAndSync(Message message) throws InterruptedException;

  /**
   * {@link DurableQueueStore#appendBatchAndSync}: appends {@code batch}, merges {@code checkpoints}
   * (an immutable copy, possibly empty), returns the first offset once both are durable (if the
   * store supports it).
   *
   * @throws InterruptedException if the append was cancelled by an interrupt before it started
   *     (nothing written)
   */
  long appendBatchAndSync(List<Message> batch, Map<String, String> checkpoints)
      throws InterruptedException;

  /**
   * The log's remembered deduplication ids ({@link QueueStore#appendDeduplicated}): one index for
   * the life of the log object, usually {@code new DedupIndex(this)}. The default has none, and the
   * store's deduplicated appends then throw {@link UnsupportedOperationException}.
   */
  default DedupIndex dedupIndex() {
    throw new UnsupportedOperationException("this log cannot deduplicate appends");
  }

  /** {@link DurableQueueStore#checkpoints}: a copy of the checkpoint map. */
  Map<String, String> checkpoints();

  /** {@link QueueStore#read}: the message at {@code offset}. */
  Message read(long offset);

  /** {@link QueueStore#readBatch}: up to {@code limit} messages from {@code start}; never null. */
  List<Message> readBatch(long start, int limit);

  /** {@link QueueStore#head}. */
  long head();

  /** {@link QueueStore#tail}. */
  long tail();

  /** {@link QueueStore#count}: {@code tail - head}, the two read consistently. */
  long count();

  /** {@link QueueStore#truncate}: removes the messages below {@code minOffset}. */
  void truncate(long minOffset);

  /** {@link QueueStore#timeOffset}, always answered: the first offset appended at or after. */
  long timeOffset(Instant time);

  /** {@link QueueStore#sizeOffset}, always answered. */
  long sizeOffset(long retentionBytes);

  /**
   * {@link QueueStore#bytes}: what the log's retained messages occupy, as stored; empty when the
   * log cannot tell (the default).
   */
  default OptionalLong bytes() {
    return OptionalLong.empty();
  }

  /**
   * {@link QueueStore#awaitAppend}: waits until the tail is beyond {@code offset}, woken by
   * appends.
   *
   * @throws InterruptedException if interrupted while waiting
   */
  boolean awaitAppend(long offset, Duration timeout) throws InterruptedException;
}
