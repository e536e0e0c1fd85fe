package io.queuebridge.core.store.support;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.ReadOnlyStoreException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PreparedBatch;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Support for store implementers: the queue half of a store opened read-only ({@link
 * io.queuebridge.core.store.QueueStoreProvider#openReadOnly}). Every call that would change the
 * store ({@code createQueue}, {@code updateQueue}, {@code deleteQueue}, the six appends, {@code
 * truncate}) throws {@link ReadOnlyStoreException} before it looks anything up, so it changes
 * nothing whatever its arguments; after {@link #close} they throw {@link
 * io.queuebridge.core.errors.StoreClosedException} like every other call. Every per-queue read
 * applies the shared argument checks ({@link StoreChecks}), then forwards to the queue's {@link
 * QueueLog} ({@link #log}), as {@link QueueLogStore} does; subclasses implement the lookup, the
 * queue listing calls and {@link #supportsDurableSync}. The logs' mutators are never called.
 *
 * <p>Thread-safe if {@link #log} and the logs are.
 */
public abstract class ReadOnlyQueueLogStore implements DurableQueueStore {
  private final Storage storage;

  /**
   * A store whose {@link #close} closes {@code storage} (both halves), whose refusals name its
   * description, and whose {@code toString} is its description.
   *
   * @param storage the read-only store this is the queue half of; must not be null
   */
  protected ReadOnlyQueueLogStore(Storage storage) {
    this.storage = Objects.requireNonNull(storage, "storage");
  }

  /**
   * The log of the queue named {@code queue}, brought up to date with what the writer committed if
   * the store follows one.
   *
   * @throws io.queuebridge.core.errors.StoreClosedException if the store was closed
   * @throws io.queuebridge.core.errors.QueueNotFoundException if there is no such queue
   */
  protected abstract QueueLog log(String queue);

  /**
   * Throws {@link io.queuebridge.core.errors.StoreClosedException} once the store was closed; the
   * refusals call it first.
   */
  protected abstract void checkOpen();

  private ReadOnlyStoreException refused(String operation) {
    checkOpen();
    return new ReadOnlyStoreException(storage.description(), operation);
  }

  private static String name(QueueConfig config) {
    return config == null ? "null" : "'" + config.name() + "'";
  }

  @Override
  public final void createQueue(QueueConfig config) {
    throw refused("createQueue of queue " + name(config));
  }

  @Override
  public final void updateQueue(QueueConfig config) {
    throw refused("updateQueue of queue " + name(config));
  }

  @Override
  public final void deleteQueue(String name) {
    throw refused("deleteQueue of queue '" + name + "'");
  }

  @Override
  public final long append(String queue, Message message) {
    throw refused("append to queue '" + queue + "'");
  }

  @Override
  public final long appendBatch(String queue, List<Message> messages) {
    throw refused("appendBatch to queue '" + queue + "'");
  }

  @Override
  public final io.queuebridge.core.store.AppendResult appendDeduplicated(
      String queue, Message message, Instant windowStart) {
    throw refused("appendDeduplicated to queue '" + queue + "'");
  }

  @Override
  public final io.queuebridge.core.store.AppendResult appendDeduplicatedAndSync(
      String queue, Message message, Instant windowStart) {
    throw refused("appendDeduplicatedAndSync to queue '" + queue + "'");
  }

  @Override
  public final long appendAndSync(String queue, Message message) {
    throw refused("appendAndSync to queue '" + queue + "'");
  }

  @Override
  public final long appendBatchAndSync(
      String queue, List<Message> messages, Map<String, String> checkpoints) {
    throw refused("appendBatchAndSync to queue '" + queue + "'");
  }

  /** Refused as the append it prepares for would be. */
  @Override
  public final PreparedBatch prepareBatch(String queue, List<Message> messages) {
    throw refused("prepareBatch for queue '" + queue + "'");
  }

  @Override
  public final long appendPreparedAndSync(PreparedBatch batch, Map<String, String> checkpoints) {
    throw refused("appendPreparedAndSync to queue '" + batch.queue() + "'");
  }

  @Override
  public final void truncate(String queue, long minOffset) {
    throw refused("truncate of queue '" + queue + "' to offset " + minOffset);
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

  /** As the log waits (see its {@code awaitAppend}). */
  @Override
  public final boolean awaitAppend(String queue, long offset, Duration timeout)
      throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    return log(queue).awaitAppend(offset, timeout);
  }

  /** Closes the whole read-only store (both halves). Idempotent. */
  @Override
  public final void close() {
    storage.close();
  }

  @Override
  public final String toString() {
    return storage.description();
  }
}
