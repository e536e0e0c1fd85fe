package io.queuebridge.core;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;

/**
 * Test double around the real memory store: logs every call that writes or reads a queue's
 * configuration, and can be told to claim durable sync, block one queue's appends on a latch, or
 * fail calls for one queue. Thread-safe; also a {@link Storage}.
 */
final class RecordingStore implements DurableQueueStore, Storage {
  private final Storage delegateStorage = QueueStores.memory();
  private final DurableQueueStore delegate = delegateStorage.queues();
  private final List<String> calls = new ArrayList<>();
  private volatile Boolean durableSync;
  private final Map<String, Gate> appendGates = new ConcurrentHashMap<>();
  private final Map<String, Supplier<RuntimeException>> appendFailures = new ConcurrentHashMap<>();
  private final Map<String, Supplier<RuntimeException>> getFailures = new ConcurrentHashMap<>();
  private final Map<String, Gate> getGates = new ConcurrentHashMap<>();
  private volatile Supplier<RuntimeException> findFailure;
  private final Map<String, Runnable> beforeCreate = new ConcurrentHashMap<>();

  /** A latch appends (or reads) wait on, with a count of callers that arrived at it. */
  static final class Gate {
    final CountDownLatch release = new CountDownLatch(1);
    final java.util.concurrent.atomic.AtomicInteger arrived =
        new java.util.concurrent.atomic.AtomicInteger();

    void open() {
      release.countDown();
    }

    void pass() {
      arrived.incrementAndGet();
      boolean interrupted = false;
      for (; ; ) {
        try {
          release.await();
          break;
        } catch (InterruptedException e) {
          interrupted = true; // an append in flight cannot be interrupted (SPI contract)
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Claim (true) or deny (false) durable sync; null = ask the memory store (false). */
  RecordingStore durableSync(Boolean claim) {
    this.durableSync = claim;
    return this;
  }

  /** Appends to {@code queue} wait until the returned gate is opened. */
  Gate blockAppends(String queue) {
    Gate g = new Gate();
    appendGates.put(queue, g);
    return g;
  }

  /** Reads of {@code queue}'s config wait until the returned gate is opened. */
  Gate blockGetQueue(String queue) {
    Gate g = new Gate();
    getGates.put(queue, g);
    return g;
  }

  void unblockAll() {
    appendGates.values().forEach(Gate::open);
    getGates.values().forEach(Gate::open);
  }

  void failAppends(String queue, Supplier<RuntimeException> failure) {
    appendFailures.put(queue, failure);
  }

  void failGetQueue(String queue, Supplier<RuntimeException> failure) {
    getFailures.put(queue, failure);
  }

  /** Runs {@code action} once, just before the next create of {@code queue} reaches the store. */
  void beforeCreate(String queue, Runnable action) {
    beforeCreate.put(queue, action);
  }

  /** The underlying memory store, bypassing recording and failures. */
  DurableQueueStore delegate() {
    return delegate;
  }

  void failFindMatching(Supplier<RuntimeException> failure) {
    this.findFailure = failure;
  }

  /** Every recorded call, {@code op:queue}, in call order. */
  List<String> calls() {
    synchronized (calls) {
      return List.copyOf(calls);
    }
  }

  /** Recorded calls whose operation is one of {@code ops}. */
  List<String> calls(String... ops) {
    List<String> wanted = List.of(ops);
    return calls().stream().filter(c -> wanted.contains(c.substring(0, c.indexOf(':')))).toList();
  }

  /** Recorded append-family calls: append, appendBatch, appendAndSync, appendBatchAndSync. */
  List<String> appends() {
    return calls("append", "appendBatch", "appendAndSync", "appendBatchAndSync");
  }

  void clearCalls() {
    synchronized (calls) {
      calls.clear();
    }
  }

  private void record(String op, String queue) {
    synchronized (calls) {
      calls.add(op + ":" + queue);
    }
  }

  private void beforeAppend(String queue) {
    Supplier<RuntimeException> f = appendFailures.get(queue);
    if (f != null) {
      throw f.get();
    }
    Gate g = appendGates.get(queue);
    if (g != null) {
      g.pass();
    }
  }

  // --- Storage -----------------------------------------------------------------------------

  @Override
  public DurableQueueStore queues() {
    return this;
  }

  @Override
  public ConsumerGroupStore groups() {
    return delegateStorage.groups();
  }

  @Override
  public String description() {
    return "recording:" + delegateStorage.description();
  }

  @Override
  public void close() {
    unblockAll();
    delegateStorage.close();
  }

  // --- DurableQueueStore ------------------------------------------------------------------

  @Override
  public void createQueue(QueueConfig config) {
    record("createQueue", config.name());
    Runnable action = beforeCreate.remove(config.name());
    if (action != null) {
      action.run();
    }
    delegate.createQueue(config);
  }

  @Override
  public QueueConfig getQueue(String name) {
    record("getQueue", name);
    Supplier<RuntimeException> f = getFailures.get(name);
    if (f != null) {
      throw f.get();
    }
    Gate g = getGates.get(name);
    if (g != null) {
      g.pass();
    }
    return delegate.getQueue(name);
  }

  @Override
  public void updateQueue(QueueConfig config) {
    record("updateQueue", config.name());
    delegate.updateQueue(config);
  }

  @Override
  public void deleteQueue(String name) {
    record("deleteQueue", name);
    delegate.deleteQueue(name);
  }

  @Override
  public List<QueueConfig> listQueues() {
    return delegate.listQueues();
  }

  @Override
  public List<String> findMatchingQueues(String topic) {
    Supplier<RuntimeException> f = findFailure;
    if (f != null) {
      throw f.get();
    }
    return delegate.findMatchingQueues(topic);
  }

  @Override
  public long append(String queue, Message message) {
    record("append", queue);
    beforeAppend(queue);
    return delegate.append(queue, message);
  }

  @Override
  public long appendBatch(String queue, List<Message> messages) {
    record("appendBatch", queue);
    beforeAppend(queue);
    return delegate.appendBatch(queue, messages);
  }

  @Override
  public long appendAndSync(String queue, Message message) throws InterruptedException {
    record("appendAndSync", queue);
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before append to " + queue);
    }
    beforeAppend(queue);
    return delegate.appendAndSync(queue, message);
  }

  @Override
  public long appendBatchAndSync(
      String queue, List<Message> messages, Map<String, String> checkpoints)
      throws InterruptedException {
    record("appendBatchAndSync", queue);
    if (Thread.interrupted()) {
      throw new InterruptedException("interrupted before append to " + queue);
    }
    beforeAppend(queue);
    return delegate.appendBatchAndSync(queue, messages, checkpoints);
  }

  @Override
  public Map<String, String> checkpoints(String queue) {
    return delegate.checkpoints(queue);
  }

  @Override
  public boolean supportsDurableSync() {
    Boolean claim = durableSync;
    return claim != null ? claim : delegate.supportsDurableSync();
  }

  @Override
  public Message read(String queue, long offset) {
    return delegate.read(queue, offset);
  }

  @Override
  public List<Message> readBatch(String queue, long start, int limit) {
    return delegate.readBatch(queue, start, limit);
  }

  @Override
  public long head(String queue) {
    return delegate.head(queue);
  }

  @Override
  public long tail(String queue) {
    return delegate.tail(queue);
  }

  @Override
  public long count(String queue) {
    return delegate.count(queue);
  }

  @Override
  public java.util.OptionalLong bytes(String queue) {
    return delegate.bytes(queue);
  }

  @Override
  public void truncate(String queue, long minOffset) {
    delegate.truncate(queue, minOffset);
  }

  @Override
  public OptionalLong timeOffset(String queue, Instant time) {
    return delegate.timeOffset(queue, time);
  }

  @Override
  public OptionalLong sizeOffset(String queue, long retentionBytes) {
    return delegate.sizeOffset(queue, retentionBytes);
  }

  @Override
  public boolean awaitAppend(String queue, long offset, Duration timeout)
      throws InterruptedException {
    return delegate.awaitAppend(queue, offset, timeout);
  }

  /** All messages of {@code queue} from the head. */
  List<Message> messages(String queue) {
    long head = delegate.head(queue);
    long n = delegate.tail(queue) - head;
    return n == 0 ? List.of() : delegate.readBatch(queue, head, (int) n);
  }
}
