package io.queuebridge.core.store.support;

import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.AppendResult;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Support for store implementers: a {@link DurableQueueStore} that keeps one {@link QueueLog} per
 * queue in this process. Every per-queue method applies the shared argument checks ({@link
 * StoreChecks}) first, so they throw before anything is looked up or changed, then finds the
 * queue's log ({@link #log}) and forwards the call; subclasses implement the queue administration
 * ({@code createQueue}, {@code getQueue}, {@code updateQueue}, {@code deleteQueue}, {@code
 * listQueues}, {@code findMatchingQueues}), {@link #supportsDurableSync} and the lookup. The memory
 * and the file store are built this way; a store without per-queue objects in the process (the
 * PostgreSQL store: every call is SQL on shared rows) applies {@link StoreChecks} itself.
 *
 * <p>Thread-safe if {@link #log} and the logs are.
 */
public abstract class QueueLogStore implements DurableQueueStore {
  private final Storage storage;

  /**
   * A store whose {@link #close} closes {@code storage} (both halves) and whose {@code toString} is
   * its description.
   *
   * @param storage the open store this is the queue half of; must not be null
   */
  protected QueueLogStore(Storage storage) {
    this.storage = Objects.requireNonNull(storage, "storage");
  }

  /**
   * The log of the queue named {@code queue}.
   *
   * @throws NullPointerException or {@link io.queuebridge.core.errors.QueueNotFoundException} if
   *     {@code queue} is null (the store's choice)
   * @throws io.queuebridge.core.errors.StoreClosedException if the store was closed
   * @throws io.queuebridge.core.errors.QueueNotFoundException if there is no such queue
   */
  protected abstract QueueLog log(String queue);

  @Override
  public final long append(String queue, Message message) {
    Objects.requireNonNull(message, "message");
    return log(queue).append(message);
  }

  @Override
  public final long appendBatch(String queue, List<Message> messages) {
    List<Message> batch = StoreChecks.checkBatch(queue, messages);
    return log(queue).appendBatch(batch);
  }

  @Override
  public final long appendAndSync(String queue, Message message) throws InterruptedException {
    Objects.requireNonNull(message, "message");
    StoreChecks.checkNotInterrupted(queue);
    return log(queue).appendAndSync(message);
  }

  @Override
  public final long appendBatchAndSync(
      String queue, List<Message> messages, Map<String, String> checkpoints)
      throws InterruptedException {
    List<Message> batch = StoreChecks.checkBatch(queue, messages);
    Map<String, String> cp = StoreChecks.checkCheckpoints(checkpoints);
    StoreChecks.checkNotInterrupted(queue);
    return log(queue).appendBatchAndSync(batch, cp);
  }

  /** Through the log's {@link QueueLog#dedupIndex()}, then its {@code append}. */
  @Override
  public final AppendResult appendDeduplicated(String queue, Message message, Instant windowStart) {
    String id = StoreChecks.checkDeduplicationId(queue, message);
    Objects.requireNonNull(windowStart, "windowStart");
    QueueLog log = log(queue);
    try {
      return log.dedupIndex().append(id, message, windowStart, log::append);
    } catch (InterruptedException e) {
      throw new IllegalStateException("a plain append cannot be interrupted", e); // not reached
    }
  }

  /** From the log's {@link QueueLog#dedupIndex()}; empty for a log that cannot deduplicate. */
  @Override
  public final OptionalLong deduplicatedOffset(String queue, String id, Instant windowStart) {
    StoreChecks.checkDeduplicationId(queue, id);
    Objects.requireNonNull(windowStart, "windowStart");
    QueueLog log = log(queue);
    try {
      return log.dedupIndex().lookup(id, windowStart);
    } catch (UnsupportedOperationException cannot) {
      return OptionalLong.empty();
    }
  }

  /** Through the log's {@link QueueLog#dedupIndex()}, then its {@code appendAndSync}. */
  @Override
  public final AppendResult appendDeduplicatedAndSync(
      String queue, Message message, Instant windowStart) throws InterruptedException {
    String id = StoreChecks.checkDeduplicationId(queue, message);
    Objects.requireNonNull(windowStart, "windowStart");
    StoreChecks.checkNotInterrupted(queue);
    QueueLog log = log(queue);
    return log.dedupIndex().append(id, message, windowStart, log::appendAndSync);
  }

  @Override
  public final Map<String, String> checkpoints(String queue) {
    return log(queue).checkpoints();
  }

  @Override
  public final Message read(String queue, long offset) {
    return log(queue).read(offset);
  }

  @Override
  public final List<Message> readBatch(String queue, long start, int limit) {
    StoreChecks.checkReadLimit(queue, limit);
    return log(queue).readBatch(start, limit);
  }

  @Override
  public final long head(String queue) {
    return log(queue).head();
  }

  @Override
  public final long tail(String queue) {
    return log(queue).tail();
  }

  @Override
  public final long count(String queue) {
    return log(queue).count();
  }

  @Override
  public final void truncate(String queue, long minOffset) {
    log(queue).truncate(minOffset);
  }

  /** Always answered; how exactly is the log's (see its {@code timeOffset}). */
  @Override
  public final OptionalLong timeOffset(String queue, Instant time) {
    Objects.requireNonNull(time, "time");
    return OptionalLong.of(log(queue).timeOffset(time));
  }

  /**
   * Always answered; how exactly is the log's (see its {@code sizeOffset}).
   *
   * @throws IllegalArgumentException if {@code retentionBytes} is negative
   */
  @Override
  public final OptionalLong sizeOffset(String queue, long retentionBytes) {
    StoreChecks.checkRetentionBytes(queue, retentionBytes);
    return OptionalLong.of(log(queue).sizeOffset(retentionBytes));
  }

  /** As the log answers (see its {@code bytes}). */
  @Override
  public final OptionalLong bytes(String queue) {
    return log(queue).bytes();
  }

  /**
   * Woken by appends (no polling); a deleted queue or a closed store ends the wait with an error.
   */
  @Override
  public final boolean awaitAppend(String queue, long offset, Duration timeout)
      throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    return log(queue).awaitAppend(offset, timeout);
  }

  /** Closes the whole store (both halves). Idempotent. */
  @Override
  public final void close() {
    storage.close();
  }

  @Override
  public final String toString() {
    return storage.description();
  }
}
