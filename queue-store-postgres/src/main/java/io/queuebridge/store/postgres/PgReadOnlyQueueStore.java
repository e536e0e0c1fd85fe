package io.queuebridge.store.postgres;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.ReadOnlyStoreException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PreparedBatch;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The queue-log half of a read-only {@link PostgresStorage}: every read goes to the {@link
 * PgQueueStore} of a read-only pool (autocommit statements in read-only sessions, each seeing what
 * was committed before it); every change throws {@link ReadOnlyStoreException} before it reaches
 * the database. Every method of the interface is declared here, none inherited, so that a method
 * added to the SPI must be sorted into reads and changes ({@code ReadOnlyOpenTest} checks it).
 *
 * <p>{@link #awaitAppend} sleeps on the read-only storage's own {@link AppendListener} ({@code
 * LISTEN}, which a read-only session may run), re-checking the tail at least every {@code
 * poll.interval.ms}. {@link #supportsDurableSync()} is false: this view completes no barrier.
 *
 * <p>Thread-safe.
 */
final class PgReadOnlyQueueStore implements DurableQueueStore {
  private final PgQueueStore reads;
  private final Db db;
  private final String description;

  PgReadOnlyQueueStore(PgQueueStore reads, Db db, String description) {
    this.reads = reads;
    this.db = db;
    this.description = description;
  }

  private ReadOnlyStoreException refused(String operation, String queue) {
    return ReadOnlyViews.refusal(db, operation, queue, null);
  }

  // ---- changes: refused ----------------------------------------------------------------------

  @Override
  public void createQueue(QueueConfig config) {
    throw refused("createQueue", config == null ? null : config.name());
  }

  @Override
  public void updateQueue(QueueConfig config) {
    throw refused("updateQueue", config == null ? null : config.name());
  }

  @Override
  public void deleteQueue(String name) {
    throw refused("deleteQueue", name);
  }

  @Override
  public long append(String queue, Message message) {
    throw refused("append", queue);
  }

  @Override
  public long appendBatch(String queue, List<Message> messages) {
    throw refused("appendBatch", queue);
  }

  /**
   * Empty, without a query: the lookup only guards a publish to a full queue (BEHAVIOUR Q-DEDUP),
   * and this view publishes nothing; a schema of version 1, which it also reads, has no ids.
   */
  @Override
  public java.util.OptionalLong deduplicatedOffset(
      String queue, String id, java.time.Instant windowStart) {
    db.checkOpen();
    java.util.Objects.requireNonNull(queue, "queue");
    io.queuebridge.core.store.support.StoreChecks.checkDeduplicationId(queue, id);
    java.util.Objects.requireNonNull(windowStart, "windowStart");
    return java.util.OptionalLong.empty();
  }

  @Override
  public io.queuebridge.core.store.AppendResult appendDeduplicated(
      String queue, Message message, java.time.Instant windowStart) {
    throw refused("appendDeduplicated", queue);
  }

  @Override
  public io.queuebridge.core.store.AppendResult appendDeduplicatedAndSync(
      String queue, Message message, java.time.Instant windowStart) {
    throw refused("appendDeduplicatedAndSync", queue);
  }

  @Override
  public long appendAndSync(String queue, Message message) {
    throw refused("appendAndSync", queue);
  }

  @Override
  public long appendBatchAndSync(
      String queue, List<Message> messages, Map<String, String> checkpoints) {
    throw refused("appendBatchAndSync", queue);
  }

  /** Refused as the append it prepares for would be. */
  @Override
  public PreparedBatch prepareBatch(String queue, List<Message> messages) {
    throw refused("prepareBatch", queue);
  }

  @Override
  public long appendPreparedAndSync(PreparedBatch batch, Map<String, String> checkpoints) {
    throw refused("appendPreparedAndSync", batch.queue());
  }

  @Override
  public void truncate(String queue, long minOffset) {
    throw refused("truncate", queue);
  }

  // ---- reads ---------------------------------------------------------------------------------

  @Override
  public QueueConfig getQueue(String name) {
    return reads.getQueue(name);
  }

  @Override
  public List<QueueConfig> listQueues() {
    return reads.listQueues();
  }

  @Override
  public List<String> findMatchingQueues(String topic) {
    return reads.findMatchingQueues(topic);
  }

  @Override
  public Message read(String queue, long offset) {
    return reads.read(queue, offset);
  }

  @Override
  public List<Message> readBatch(String queue, long start, int limit) {
    return reads.readBatch(queue, start, limit);
  }

  @Override
  public long head(String queue) {
    return reads.head(queue);
  }

  @Override
  public long tail(String queue) {
    return reads.tail(queue);
  }

  @Override
  public long count(String queue) {
    return reads.count(queue);
  }

  @Override
  public OptionalLong timeOffset(String queue, Instant time) {
    return reads.timeOffset(queue, time);
  }

  @Override
  public OptionalLong sizeOffset(String queue, long retentionBytes) {
    return reads.sizeOffset(queue, retentionBytes);
  }

  @Override
  public OptionalLong bytes(String queue) {
    return reads.bytes(queue);
  }

  @Override
  public boolean awaitAppend(String queue, long offset, Duration timeout)
      throws InterruptedException {
    return reads.awaitAppend(queue, offset, timeout);
  }

  @Override
  public Map<String, String> checkpoints(String queue) {
    return reads.checkpoints(queue);
  }

  /** False: a read-only store completes no durability barrier. */
  @Override
  public boolean supportsDurableSync() {
    return false;
  }

  /** Closes the whole read-only {@link PostgresStorage}. Idempotent. */
  @Override
  public void close() {
    reads.close();
  }

  @Override
  public String toString() {
    return description;
  }
}
