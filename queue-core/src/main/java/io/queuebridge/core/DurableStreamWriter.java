package io.queuebridge.core;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.DurableSyncUnsupportedException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException.FieldMismatch;
import io.queuebridge.core.errors.QueueFullException;
import io.queuebridge.core.errors.QueueNotDurableException;
import io.queuebridge.core.errors.QueueNotProtectedException;
import io.queuebridge.core.errors.QueueNotReservedException;
import io.queuebridge.core.errors.QueueNotStreamException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.AppendResult;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PreparedBatch;
import io.queuebridge.core.store.Storage;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The exact, durable write paths (BEHAVIOUR Q-EXACT): a single message or a batch appended to
 * exactly one queue behind a durability barrier, every precondition checked before anything is
 * written, and the checkpoints stored atomically with a batch. Uses the store's queue log, the
 * {@link ContractRegistry} (a contract is copied out of it, never held across I/O) and the {@link
 * DeliveryHook}.
 *
 * <p>Thread-safe: it holds no state that changes after construction and no lock of its own; the
 * registry's read side is taken only inside {@link ContractRegistry#contractOf}.
 */
final class DurableStreamWriter {
  private final LifecycleState state;
  private final Storage storage;
  private final DurableQueueStore queues;
  private final ContractRegistry registry;
  private final Clock clock;
  private final DeliveryHook deliveryHook;
  private final Deduplication dedup;

  DurableStreamWriter(
      LifecycleState state,
      Storage storage,
      DurableQueueStore queues,
      ContractRegistry registry,
      Clock clock,
      DeliveryHook deliveryHook,
      Deduplication dedup) {
    this.state = state;
    this.dedup = dedup;
    this.storage = storage;
    this.queues = queues;
    this.registry = registry;
    this.clock = clock;
    this.deliveryHook = deliveryHook;
  }

  /** {@link QueueManager#publishToDurableStream}. */
  long publish(String queue, PublishRequest request) throws InterruptedException {
    state.ensureUsable();
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(request, "request");
    QueueConfig stored = checkExactTarget(queue);
    Message base = MessageStamping.normalise(request, clock);
    MessageStamping.checkSize(stored, base.size());
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before the append to " + queue);
    }
    Instant now = clock.instant();
    Message message = MessageStamping.stamp(base, stored, now);
    long offset;
    try {
      if (Deduplication.applies(stored, message)) {
        AppendResult result = dedup.append(queues, stored, message, now, true);
        if (result.duplicate()) {
          return result.offset();
        }
        offset = result.offset();
      } else {
        offset = queues.appendAndSync(queue, message);
      }
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(queue, "durable append to queue " + queue, e);
    }
    deliveryHook.schedule(queue);
    return offset;
  }

  /** {@link QueueManager#publishBatchToDurableStream}. */
  long publishBatch(String queue, List<PublishRequest> batch, Map<String, String> checkpoints)
      throws InterruptedException {
    return write(prepareExact(queue, batch, checkpoints));
  }

  /** {@link QueueManager#publishBatchDurably}. */
  long publishBatchDurably(
      String queue, List<PublishRequest> batch, Map<String, String> checkpoints)
      throws InterruptedException {
    return write(prepareBatchDurably(queue, batch, checkpoints));
  }

  /** {@link QueueManager#prepareBatchDurably}. */
  DurableBatch prepareBatchDurably(
      String queue, List<PublishRequest> batch, Map<String, String> checkpoints) {
    return prepareForQueue(queue, batch, checkpoints, true);
  }

  /**
   * {@link #publishBatchDurably} on a store that may not make appends durable (the memory store):
   * there the batch and its checkpoints are still appended together, only not made durable. The
   * dead-letter redrive uses it so that it runs on every store.
   */
  long publishBatchOrdered(
      String queue, List<PublishRequest> batch, Map<String, String> checkpoints)
      throws InterruptedException {
    return write(prepareForQueue(queue, batch, checkpoints, false));
  }

  /** A batch for the protected stream {@code queue}: BEHAVIOUR Q-EXACT's checks, then prepared. */
  private DurableBatch prepareExact(
      String queue, List<PublishRequest> batch, Map<String, String> checkpoints) {
    state.ensureUsable();
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(batch, "batch");
    Map<String, String> marks = Map.copyOf(Objects.requireNonNull(checkpoints, "checkpoints"));
    if (batch.isEmpty()) {
      throw new IllegalArgumentException("empty batch for durable stream " + queue);
    }
    QueueConfig stored = checkExactTarget(queue);
    return prepare(queue, stored, batch, marks, false);
  }

  private DurableBatch prepareForQueue(
      String queue,
      List<PublishRequest> batch,
      Map<String, String> checkpoints,
      boolean requireDurable) {
    state.ensureUsable();
    Objects.requireNonNull(queue, "queue");
    if (registry.contractOf(queue) != null) {
      return prepareExact(queue, batch, checkpoints);
    }
    Objects.requireNonNull(batch, "batch");
    Map<String, String> marks = Map.copyOf(Objects.requireNonNull(checkpoints, "checkpoints"));
    if (batch.isEmpty()) {
      throw new IllegalArgumentException("empty batch for queue " + queue);
    }
    QueueConfig stored;
    try {
      stored = queues.getQueue(queue);
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(queue, "get queue " + queue, e);
    }
    if (requireDurable && !queues.supportsDurableSync()) {
      throw new DurableSyncUnsupportedException(queue, storage.description());
    }
    return prepare(queue, stored, batch, marks, !stored.isStream());
  }

  /**
   * The common part of every batch: normalises and size-checks every message, stamps them (one
   * instant for the batch) and has the store prepare them. Nothing is written.
   *
   * @param checkDepth whether {@link #write} checks a classic queue's depth before appending
   */
  private DurableBatch prepare(
      String queue,
      QueueConfig stored,
      List<PublishRequest> batch,
      Map<String, String> marks,
      boolean checkDepth) {
    List<Message> bases = new ArrayList<>(batch.size());
    for (PublishRequest request : batch) {
      Objects.requireNonNull(request, "batch element");
      if (!request.deduplicationId().isEmpty()) {
        throw new IllegalArgumentException(
            "batch publish to queue "
                + queue
                + ": request "
                + bases.size()
                + " has deduplicationId '"
                + request.deduplicationId()
                + "'; expected none (deduplication applies to single publishes only,"
                + " BEHAVIOUR Q-DEDUP)");
      }
      Message base = MessageStamping.normalise(request, clock);
      MessageStamping.checkSize(stored, base.size());
      bases.add(base);
    }
    Instant now = clock.instant();
    List<Message> messages = new ArrayList<>(bases.size());
    for (Message base : bases) {
      messages.add(MessageStamping.stamp(base, stored, now));
    }
    PreparedBatch prepared;
    try {
      prepared = queues.prepareBatch(queue, messages);
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(queue, "prepare a batch for queue " + queue, e);
    }
    return new DurableBatch(this, stored, prepared, marks, checkDepth);
  }

  /**
   * {@link QueueManager#publishPrepared}: a classic queue's depth must leave room for the batch,
   * then the batch and its checkpoints are appended with one barrier.
   */
  long write(DurableBatch batch) throws InterruptedException {
    state.ensureUsable();
    Objects.requireNonNull(batch, "batch");
    if (batch.writer != this) {
      throw new IllegalArgumentException(
          "batch for queue " + batch.queue() + " was prepared by another queue manager");
    }
    batch.claim();
    String queue = batch.queue();
    if (batch.checkDepth) {
      long depth;
      try {
        depth = queues.count(queue);
      } catch (RuntimeException e) {
        throw StoreErrors.wrap(queue, "count queue " + queue, e);
      }
      if (depth + batch.size() > batch.stored.maxDepth()) {
        throw new QueueFullException(queue, depth, batch.stored.maxDepth());
      }
    }
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before the append to " + queue);
    }
    long first;
    try {
      first = queues.appendPreparedAndSync(batch.prepared, batch.checkpoints);
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(queue, "durable batch append to queue " + queue, e);
    }
    deliveryHook.schedule(queue);
    return first;
  }

  /** {@link QueueManager#durableStreamCheckpoints}. */
  Map<String, String> checkpoints(String queue) {
    state.ensureUsable();
    try {
      return queues.checkpoints(Objects.requireNonNull(queue, "queue"));
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(queue, "read checkpoints of queue " + queue, e);
    }
  }

  /** Steps 1–5 of BEHAVIOUR Q-EXACT; returns the stored configuration. */
  private QueueConfig checkExactTarget(String queue) {
    QueueConfig contract = registry.contractOf(queue);
    if (contract == null) {
      throw new QueueNotProtectedException(queue);
    }
    QueueConfig stored;
    try {
      stored = queues.getQueue(queue);
    } catch (RuntimeException e) {
      throw StoreErrors.wrap(queue, "get exact stream " + queue, e);
    }
    List<FieldMismatch> drift = ProtectedContracts.mismatches(contract, stored);
    if (!drift.isEmpty()) {
      throw new ProtectedQueueContractDriftException(queue, drift);
    }
    checkExactShape(stored);
    if (!queues.supportsDurableSync()) {
      throw new DurableSyncUnsupportedException(queue, storage.description());
    }
    return stored;
  }

  /**
   * Step 4 of BEHAVIOUR Q-EXACT, defence in depth behind the contract comparison: the stored
   * configuration is reserved, a stream and durable.
   */
  static void checkExactShape(QueueConfig stored) {
    if (!stored.reserved()) {
      throw new QueueNotReservedException(stored.name());
    }
    if (!stored.isStream()) {
      throw new QueueNotStreamException(stored.name());
    }
    if (!stored.durable()) {
      throw new QueueNotDurableException(stored.name());
    }
  }
}
