package io.queuebridge.connect.sink;

import io.queuebridge.connect.common.RetryBudget;
import io.queuebridge.connect.common.metrics.TaskMetrics;
import io.queuebridge.core.QueueBridgeVersion;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.SharedStores;
import io.queuebridge.core.errors.QueueFullException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;
import org.apache.kafka.connect.sink.SinkTaskContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes each {@link #put} batch into its target queues with one durability barrier per queue,
 * exactly once, overlapping each batch's barrier with the fetching of the next. The task
 * coordinates; each job is a class of its own.
 *
 * <p><b>Targets.</b> With {@code queue.routing=exact} every record goes to the protected stream
 * {@code queue.name}; with {@code matching} to every queue whose topic filters match the record's
 * topic (a record matching none is consumed and not stored).
 *
 * <p><b>Exactly once.</b> With every batch a queue receives, the task stores in that queue,
 * atomically with the batch, the next Kafka offset of each partition the batch took records from (a
 * watermark, as one of the store's checkpoints: {@link Watermarks}). In {@link #open} it rewinds
 * each assigned partition to the lowest watermark any queue holds for it, and it skips, per queue,
 * the records below that queue's watermark ({@link BatchCollector}), so a crash or a rebalance at
 * any point neither loses nor duplicates a record. {@link #preCommit} reports only offsets whose
 * records are durable in every target.
 *
 * <p><b>Pipelining</b> ({@code queue.write.pipelined=true}, the default). {@code put} maps its
 * records and hands them to a writer thread of its own ({@link BatchWriter}), which appends them
 * and runs the barrier, and returns; Connect fetches and converts the next records meanwhile.
 * Records put while the writer is busy are collected (up to {@link
 * BatchCollector#MAX_WAITING_RECORDS} records or {@link BatchCollector#MAX_WAITING_BYTES} bytes,
 * beyond which {@code put} waits) and handed over together when it is free, so a slow barrier makes
 * the batches larger instead of the task slower. One writer, one batch in flight: batches reach the
 * store in order. Every record passes a barrier, atomically with its watermark, before {@link
 * #preCommit} reports its offset; {@code preCommit} and {@link #close} first write what is
 * collected and wait for it. With {@code false}, {@code put} returns only once its own batch is
 * durable.
 *
 * <p><b>Failures and back-pressure.</b> A batch that failed retriably (a failed barrier, a
 * transient store error, a classic queue at its {@code maxDepth}) was already returned from {@code
 * put}, so it is recovered by rewind instead of redelivery ({@link Rewinder}): the task asks
 * Connect to rewind each partition of the batch to the batch's first offset, drops the records of
 * those partitions that Connect fetched meanwhile, re-reads the watermarks from the store (a failed
 * barrier may still have appended) and pauses every assigned partition. It resumes them on a later
 * {@code put} or {@code preCommit} once {@code queue.retry.backoff.ms} has passed and, when a queue
 * refused the batch as full, once that queue has room for the refused batch again (or is empty).
 * Records redelivered below a watermark are skipped, so nothing is lost or stored twice. A batch a
 * queue refused for a record's due time, although the record passed that queue's limits when it was
 * mapped (its {@code maxDelay} or {@code messageTtl} was lowered in between), is recovered the same
 * way; mapped again, that record is errant and the rest is written ({@link SinkErrors}). A batch
 * into a classic queue never exceeds the queue's {@code maxDepth} (the queue takes a batch whole or
 * not at all, so a larger one would be refused forever): the records beyond it are left out of the
 * batch and rewound the same way. A transient store error while reading on the task thread before a
 * batch is handed over (re-reading the watermarks, a queue's configuration) is recovered the same
 * way: the records of the put and those collected are rewound and every partition paused. So is a
 * failure to read the watermarks in {@link #open} (partitions assigned while the store is
 * unreachable): the partitions stay paused until their watermarks are read, after the backoff.
 *
 * <p><b>Retry budget.</b> Transient store errors ({@code QueueStoreException}; not a full queue) in
 * a row, with no durable batch between them, are retried for {@code queue.retry.timeout.ms}; the
 * first one after that fails the task, naming the store and the last error ({@link RetryBudget}).
 * Errors that retrying cannot fix fail the task at once. Either failure is sticky: one that
 * surfaces in {@code preCommit}, whose exceptions Connect only logs, fails the next {@code put}.
 *
 * <p>Not thread-safe; Connect calls a task from one thread (the writer thread only runs the appends
 * handed to it).
 */
public class QueueSinkTask extends SinkTask {
  private static final Logger log = LoggerFactory.getLogger(QueueSinkTask.class);

  private final Clock clock;
  private QueueSinkConfig config;
  private SharedStores.Lease lease;
  private SinkMetrics metrics;
  private Watermarks watermarks;
  private Rewinder rewinder;
  private BatchCollector collector;
  private BatchWriter writer;
  private RetryBudget budget;

  /** The failure the task fails with, once one was fatal: thrown by every later put. */
  private ConnectException failedWith;

  /** Next offset to commit to Kafka per assigned partition: everything below is durable. */
  private final Map<TopicPartition, Long> processed = new HashMap<>();

  /** Assigned partitions whose watermarks could not be read yet (the store was unreachable). */
  private final Set<TopicPartition> unopened = new HashSet<>();

  public QueueSinkTask() {
    this(Clock.systemUTC());
  }

  /** With an injected clock for the retry backoff and the delay headers' "now" (tests). */
  QueueSinkTask(Clock clock) {
    this.clock = clock;
  }

  @Override
  public String version() {
    return QueueBridgeVersion.get();
  }

  @Override
  public void start(Map<String, String> props) {
    config = new QueueSinkConfig(props);
    RecordMapper mapper = new RecordMapper(config, clock);
    ErrantRecordReporter reporter = ErrantRecords.reporter(context, config.toleratesErrors());
    lease = config.acquireStore();
    QueueManager manager;
    try {
      manager = lease.manager();
      manager.declareProtectedStream(config.streamContract());
    } catch (RuntimeException e) {
      lease.close();
      lease = null;
      throw fatal("cannot declare the stream '" + config.queueName() + "'", e);
    }
    metrics =
        new SinkMetrics(
            TaskMetrics.forTask(
                context, SinkTaskContext.class, config.connectorName(), config.taskIndex()));
    writer = new BatchWriter(config.queueName(), manager, metrics);
    budget = config.retryBudget(clock);
    watermarks = new Watermarks(config, manager);
    rewinder =
        new Rewinder(context, clock, config.retryBackoff(), manager, lease.storage().queues());
    collector =
        new BatchCollector(
            config,
            manager,
            watermarks,
            mapper,
            new ErrantRecords(reporter, metrics),
            rewinder,
            metrics);
    log.info(
        "Sink task writing {} into store {}",
        config.routing() == QueueSinkConfig.Routing.EXACT
            ? "into stream '" + config.queueName() + "'"
            : "into every matching queue",
        lease.storage().description());
  }

  @Override
  public void open(Collection<TopicPartition> partitions) {
    try {
      watermarks.load(partitions);
    } catch (RuntimeException e) {
      if (SinkErrors.classify(e) != SinkErrors.Kind.RETRIABLE) {
        throw e;
      }
      // Assigned while the store is unreachable: the partitions wait, paused, for their watermarks.
      unopened.addAll(partitions);
      spendRetryBudget(e);
      rewinder.pauseAfterReadFailure(partitions.size(), e);
      return;
    }
    Map<TopicPartition, Long> rewind = watermarks.lowest(partitions);
    processed.putAll(rewind);
    if (!rewind.isEmpty()) {
      context.offset(rewind);
      log.info("Rewound {} partition(s) to the stored watermarks: {}", rewind.size(), rewind);
    }
    rewinder.opened(partitions); // still waiting for a backoff or a full queue: new ones wait too
  }

  /**
   * Once the backoff has passed, reads the watermarks of the partitions {@link #open} could not
   * read them for, and rewinds them there; paused again (and the retry budget spent) if it fails
   * again. Until then those partitions stay paused, so nothing of them is written.
   */
  private void openDeferred() {
    if (unopened.isEmpty() || !rewinder.backoffOver()) {
      return;
    }
    unopened.retainAll(context.assignment());
    try {
      watermarks.load(unopened);
    } catch (RuntimeException e) {
      if (SinkErrors.classify(e) != SinkErrors.Kind.RETRIABLE) {
        throw e;
      }
      spendRetryBudget(e);
      rewinder.pauseAfterReadFailure(unopened.size(), e);
      return;
    }
    Map<TopicPartition, Long> rewind = watermarks.lowest(unopened);
    processed.putAll(rewind);
    rewinder.rewind(rewind);
    log.info("Read the watermarks of {} partition(s) at last: {}", unopened.size(), rewind);
    unopened.clear();
  }

  @Override
  public void close(Collection<TopicPartition> partitions) {
    drain();
    watermarks.forget(partitions);
    partitions.forEach(processed::remove);
    unopened.removeAll(partitions);
    rewinder.closed(partitions);
  }

  @Override
  public void put(Collection<SinkRecord> records) {
    if (failedWith != null) {
      throw failedWith;
    }
    while (writer.finished()) {
      settle();
    }
    openDeferred();
    rewinder.maybeResume();
    if (rewinder.paused()) {
      // Fetched before the pause took effect: not written, so fetched again after the rewind.
      rewinder.rewindFetched(records);
      rewinder.applyRewinds();
      return;
    }
    Map<TopicPartition, Long> rewound = rewinder.applyRewinds();
    if (!records.isEmpty()) {
      try {
        watermarks.reloadIfStale(context.assignment()); // nothing is in flight after a failure
        collector.collect(records, rewound);
      } catch (RuntimeException e) {
        if (e instanceof ConnectException || SinkErrors.classify(e) != SinkErrors.Kind.RETRIABLE) {
          throw e;
        }
        recoverFromReadFailure(records, rewound, e);
        return;
      }
    }
    if (collector.isEmpty()) {
      return;
    }
    if (!config.pipelinedWrites()) {
      drain(); // synchronous: this put's batch is durable (or recovered from) on return
      return;
    }
    if (writer.busy()) {
      if (!collector.full()) {
        return; // the writer is busy: keep collecting, the next hand-over takes it all
      }
      settle(); // full: wait for the oldest batch
    }
    handOver();
  }

  /**
   * After the transient failure {@code e} reading the store while collecting {@code records}: waits
   * for the batch in flight, drops and rewinds what is collected and every record of this put not
   * already rewound ({@code rewound}), marks the watermarks stale and pauses for the backoff (or
   * fails the task when the retry budget is spent).
   */
  private void recoverFromReadFailure(
      Collection<SinkRecord> records, Map<TopicPartition, Long> rewound, RuntimeException e) {
    settleAll(); // nothing may be in flight when the watermarks are re-read
    watermarks.markStale();
    rewinder.rewind(collector.drop());
    Set<TopicPartition> partitions = new HashSet<>();
    for (SinkRecord record : records) {
      TopicPartition tp =
          new TopicPartition(record.originalTopic(), record.originalKafkaPartition());
      Long rewoundTo = rewound.get(tp);
      if (rewoundTo == null || record.originalKafkaOffset() < rewoundTo) {
        rewinder.rewind(tp, record.originalKafkaOffset());
        partitions.add(tp);
      }
    }
    spendRetryBudget(e);
    rewinder.pauseAfterReadFailure(partitions.size(), e);
  }

  /**
   * Records a transient failure against the retry budget (store failures only; back-pressure is not
   * one).
   *
   * @throws ConnectException, sticky, once the budget is spent
   */
  private void spendRetryBudget(RuntimeException e) {
    if (!RetryBudget.isStoreFailure(e)) {
      return;
    }
    ConnectException spent = budget.failed(lease.storage().description(), e);
    if (spent != null) {
      failedWith = spent;
      throw spent;
    }
  }

  /**
   * Hands the collected batch to the writer (which must not be {@link BatchWriter#busy}); with
   * nothing to write (only skipped or errant records) it is processed once the batches before it
   * are settled (their offsets come first).
   */
  private void handOver() {
    if (collector.nothingToWrite() && writer.pending()) {
      settleAll(); // a failure among them drops what is collected, to be fetched again
    }
    Batch next = collector.take();
    if (next == null) {
      return;
    }
    next.advanceWatermarks(); // re-read from the store if the batch fails
    if (next.records == 0) {
      processed.putAll(next.seen);
      return;
    }
    writer.submit(next);
  }

  /** Everything given to put so far: written, and its outcome settled. */
  private void drain() {
    settleAll();
    handOver();
    settleAll();
  }

  /** Waits for every batch in flight: {@link #settle} until none is left. */
  private void settleAll() {
    while (writer.pending()) {
      settle();
    }
  }

  /**
   * Waits for the oldest batch in flight. Durable: its offsets become processed. Failed: recovered
   * by rewind and pause (retriable), or the task fails (anything else); the batches after it were
   * not written and are rewound too.
   */
  private void settle() {
    BatchWriter.Outcome outcome = writer.await();
    if (outcome == null) {
      return;
    }
    if (outcome.failure() == null) {
      processed.putAll(outcome.batch().seen);
      budget.succeeded();
      return;
    }
    // Submitted after the failed batch: not written (the writer skips them), so rewound with it.
    List<Batch> skipped = new ArrayList<>();
    while (writer.pending()) {
      skipped.add(writer.await().batch());
    }
    RuntimeException e = outcome.failure();
    if (!(e instanceof RetriableException) && SinkErrors.classify(e) != SinkErrors.Kind.RETRIABLE) {
      failedWith = fatal("cannot write into '" + outcome.queue() + "'", e);
      throw failedWith;
    }
    watermarks.markStale(); // a failed barrier may still have appended
    Batch failed = outcome.batch();
    rewinder.rewind(failed.first);
    for (Batch later : skipped) {
      rewinder.rewind(later.first);
    }
    // Collected after the failed batch: dropped, and fetched again after the rewind.
    rewinder.rewind(collector.drop());
    if (e instanceof QueueFullException && outcome.failedOn() != null) {
      rewinder.pauseUntilRoom(outcome.queue(), outcome.failedOn().requests.size(), e);
    } else {
      spendRetryBudget(e);
      rewinder.pauseForBackoff(outcome.queue(), failed.first.size(), e);
    }
  }

  private static ConnectException fatal(String what, Throwable e) {
    return new ConnectException(what + ": " + e.getMessage(), e);
  }

  /** Writes what is still collected, waits for it, then reports the durable offsets. */
  @Override
  public Map<TopicPartition, OffsetAndMetadata> preCommit(
      Map<TopicPartition, OffsetAndMetadata> currentOffsets) {
    if (failedWith != null) {
      throw failedWith;
    }
    drain();
    openDeferred();
    rewinder.maybeResume();
    Map<TopicPartition, OffsetAndMetadata> durable = new HashMap<>();
    for (TopicPartition tp : currentOffsets.keySet()) {
      Long next = processed.get(tp);
      if (next != null) {
        durable.put(tp, new OffsetAndMetadata(next));
      }
    }
    return durable;
  }

  @Override
  public void stop() {
    boolean quiet = writer == null || writer.stop();
    if (metrics != null) {
      metrics.close();
    }
    if (lease != null) {
      if (quiet) {
        lease.close();
      } else {
        log.error(
            "A batch into '{}' was still being written after {}; leaving the store open",
            config.queueName(),
            BatchWriter.STOP_TIMEOUT);
      }
      lease = null;
    }
  }
}
