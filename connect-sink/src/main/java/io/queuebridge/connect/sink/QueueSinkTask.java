package io.queuebridge.connect.sink;

import io.queuebridge.connect.common.StoreSettings;
import io.queuebridge.core.KafkaCoordinates;
import io.queuebridge.core.PublishRequest;
import io.queuebridge.core.QueueBridgeVersion;
import io.queuebridge.core.QueueConfig;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.SharedStores;
import io.queuebridge.core.errors.QueueFullException;
import io.queuebridge.core.errors.QueueNotFoundException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes each {@link #put} batch into its target queues with one durability barrier per queue,
 * exactly once, overlapping each batch's barrier with the fetching of the next.
 *
 * <p><b>Targets.</b> With {@code queue.routing=exact} every record goes to the protected stream
 * {@code queue.name}; with {@code matching} to every queue whose topic filters match the record's
 * topic (a record matching none is consumed and not stored).
 *
 * <p><b>Exactly once.</b> With every batch a queue receives, the task stores in that queue,
 * atomically with the batch, the next Kafka offset of each partition the batch took records from (a
 * watermark, as one of the store's checkpoints). In {@link #open} it rewinds each assigned
 * partition to the lowest watermark any queue holds for it, and it skips, per queue, the records
 * below that queue's watermark, so a crash or a rebalance at any point neither loses nor duplicates
 * a record. {@link #preCommit} reports only offsets whose records are durable in every target.
 *
 * <p><b>Pipelining</b> ({@code queue.write.pipelined=true}, the default). {@code put} maps its
 * records and hands them to a writer thread of its own, which appends them and runs the barrier
 * ({@link QueueManager#publishBatchDurably}), and returns; Connect fetches and converts the next
 * records meanwhile. Records put while the writer is busy are collected (up to {@link
 * #MAX_WAITING_RECORDS} records or {@link #MAX_WAITING_BYTES} bytes, beyond which {@code put}
 * waits) and handed over together when it is free, so a slow barrier makes the batches larger
 * instead of the task slower. One writer, one batch in flight: batches reach the store in order.
 * Every record passes a barrier, atomically with its watermark, before {@link #preCommit} reports
 * its offset; {@code preCommit} and {@link #close} first write what is collected and wait for it.
 * With {@code false}, {@code put} returns only once its own batch is durable.
 *
 * <p><b>Failures and back-pressure.</b> A batch that failed retriably (a failed barrier, a
 * transient store error, a classic queue at its {@code maxDepth}) was already returned from {@code
 * put}, so it is recovered by rewind instead of redelivery: the task asks Connect to rewind each
 * partition of the batch to the batch's first offset ({@code SinkTaskContext.offset}), drops the
 * records of those partitions that Connect fetched meanwhile, re-reads the watermarks from the
 * store (a failed barrier may still have appended) and pauses every assigned partition ({@code
 * SinkTaskContext.pause}). It resumes them on a later {@code put} or {@code preCommit} once {@code
 * queue.retry.backoff.ms} has passed and, when a queue refused the batch as full, once that queue
 * has room for the refused batch again (or is empty). Records redelivered below a watermark are
 * skipped, so nothing is lost or stored twice. A batch into a classic queue never exceeds the
 * queue's {@code maxDepth} (the queue takes a batch whole or not at all, so a larger one would be
 * refused forever): the records beyond it are left out of the batch and rewound the same way.
 * Errors that retrying cannot fix fail the task.
 *
 * <p>Not thread-safe; Connect calls a task from one thread (the writer thread only runs the appends
 * handed to it).
 */
public class QueueSinkTask extends SinkTask {
  private static final Logger log = LoggerFactory.getLogger(QueueSinkTask.class);

  /** Collected records (or bytes) at which put waits for the writer instead of collecting more. */
  static final int MAX_WAITING_RECORDS = 20_000;

  static final long MAX_WAITING_BYTES = 16L << 20;

  /** How long {@link #stop} waits for a batch still being written before leaving the store open. */
  static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

  private final Clock clock;
  private QueueSinkConfig config;
  private SharedStores.Lease lease;
  private QueueManager manager;
  private RecordMapper mapper;
  private SinkMetrics metrics;
  private ErrantRecordReporter reporter;
  private ExecutorService writer;

  /**
   * Next offset each queue accepts from each assigned partition; absent = anything. Includes the
   * batch in flight (re-read from the store if it fails).
   */
  private final Map<String, Map<TopicPartition, Long>> watermarks = new HashMap<>();

  /** Next offset to commit to Kafka per assigned partition: everything below is durable. */
  private final Map<TopicPartition, Long> processed = new HashMap<>();

  /** Records collected while the writer was busy, not yet handed to it; null when none. */
  private Pending waiting;

  /** The batches handed to the writer and not yet resolved; null when none. */
  private Pending inFlight;

  /** Rewinds of records given to put but not written, handed to Connect on the next put. */
  private final Map<TopicPartition, Long> rewinds = new HashMap<>();

  /** Partitions this task paused after a failed or refused batch. */
  private final Set<TopicPartition> paused = new HashSet<>();

  /** Queues that refused a batch as full, with the room that batch needs. */
  private final Map<String, Integer> full = new LinkedHashMap<>();

  /** Epoch millis before which paused partitions are not resumed (the retry backoff). */
  private long resumeNotBefore;

  private boolean resyncNeeded;

  public QueueSinkTask() {
    this(Clock.systemUTC());
  }

  /** With an injected clock for the retry backoff (tests). */
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
    mapper = new RecordMapper(config);
    reporter = config.toleratesErrors() ? errantRecordReporter() : null;
    lease = StoreSettings.acquire(config.storeType(), config.storeConfig());
    try {
      manager = lease.manager();
      manager.declareProtectedStream(config.streamContract());
    } catch (RuntimeException e) {
      lease.close();
      lease = null;
      throw fatal("cannot declare the stream '" + config.queueName() + "'", e);
    }
    metrics = new SinkMetrics(context.pluginMetrics());
    String writerName = "queue-sink-writer-" + config.queueName();
    writer =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, writerName);
              t.setDaemon(true);
              return t;
            });
    log.info(
        "Sink task writing {} into store {}",
        config.routing() == QueueSinkConfig.Routing.EXACT
            ? "into stream '" + config.queueName() + "'"
            : "into every matching queue",
        lease.storage().description());
  }

  private ErrantRecordReporter errantRecordReporter() {
    try {
      return context.errantRecordReporter();
    } catch (NoSuchMethodError | NoClassDefFoundError e) {
      return null; // a worker older than 2.6
    }
  }

  @Override
  public void open(Collection<TopicPartition> partitions) {
    loadWatermarks(partitions);
    Map<TopicPartition, Long> rewind = new HashMap<>();
    for (TopicPartition tp : partitions) {
      Long lowest = null;
      for (Map<TopicPartition, Long> marks : watermarks.values()) {
        Long mark = marks.get(tp);
        if (mark != null && (lowest == null || mark < lowest)) {
          lowest = mark;
        }
      }
      if (lowest != null) {
        rewind.put(tp, lowest);
        processed.put(tp, lowest);
      }
    }
    if (!rewind.isEmpty()) {
      context.offset(rewind);
      log.info("Rewound {} partition(s) to the stored watermarks: {}", rewind.size(), rewind);
    }
    if (!paused.isEmpty()) {
      pause(partitions); // still waiting for a backoff or a full queue: new partitions wait too
    }
  }

  /** Reads the watermarks of {@code partitions} from every queue that can hold them. */
  private void loadWatermarks(Collection<TopicPartition> partitions) {
    List<String> queues =
        config.routing() == QueueSinkConfig.Routing.EXACT
            ? List.of(config.queueName())
            : manager.listQueues().stream().map(QueueConfig::name).toList();
    for (String queue : queues) {
      Map<String, String> checkpoints;
      try {
        checkpoints = manager.durableStreamCheckpoints(queue);
      } catch (QueueNotFoundException deleted) {
        watermarks.remove(queue);
        continue;
      }
      Map<TopicPartition, Long> marks = watermarks.computeIfAbsent(queue, q -> new HashMap<>());
      for (TopicPartition tp : partitions) {
        String cp = checkpoints.get(KafkaCoordinates.checkpointKey(tp.topic(), tp.partition()));
        if (cp != null) {
          marks.put(tp, Long.parseLong(cp));
        } else {
          marks.remove(tp);
        }
      }
    }
  }

  @Override
  public void close(Collection<TopicPartition> partitions) {
    drain();
    for (Map<TopicPartition, Long> marks : watermarks.values()) {
      partitions.forEach(marks::remove);
    }
    partitions.forEach(processed::remove);
    partitions.forEach(rewinds::remove);
    List<TopicPartition> unpause = partitions.stream().filter(paused::remove).toList();
    if (!unpause.isEmpty()) {
      // Connect keeps a partition paused across a rebalance; whoever gets it next decides anew.
      context.resume(unpause.toArray(new TopicPartition[0]));
    }
    if (paused.isEmpty()) {
      full.clear();
    }
  }

  @Override
  public void put(Collection<SinkRecord> records) {
    if (inFlight != null && inFlight.done.isDone()) {
      resolve();
    }
    maybeResume();
    if (!paused.isEmpty()) {
      // Fetched before the pause took effect: not written, so fetched again after the rewind.
      for (SinkRecord record : records) {
        rewinds.merge(partitionOf(record), record.originalKafkaOffset(), Math::min);
      }
      applyRewinds();
      return;
    }
    Map<TopicPartition, Long> rewound = applyRewinds();
    if (!records.isEmpty()) {
      if (resyncNeeded) {
        loadWatermarks(context.assignment()); // nothing is in flight after a failure
        resyncNeeded = false;
      }
      if (waiting == null) {
        waiting = new Pending();
      }
      collect(records, rewound, waiting);
    }
    if (waiting == null) {
      return;
    }
    if (!config.pipelinedWrites()) {
      drain(); // synchronous: this put's batch is durable (or recovered from) on return
      return;
    }
    if (inFlight != null
        && !waiting.capped
        && waiting.records < MAX_WAITING_RECORDS
        && waiting.bytes < MAX_WAITING_BYTES) {
      return; // the writer is busy: keep collecting, the next hand-over takes it all
    }
    resolve();
    handOver();
  }

  /**
   * Maps {@code records} into {@code into}, skipping what every target already holds. A classic
   * queue's batch stops at the queue's {@code maxDepth} (a larger batch could never be admitted,
   * not even into an empty queue): the records of a partition from the first one that does not fit
   * are left out and rewound, and {@code into} is marked capped.
   */
  private void collect(
      Collection<SinkRecord> records, Map<TopicPartition, Long> rewound, Pending into) {
    Map<String, List<QueueBatch>> targetsByTopic = new HashMap<>();
    Set<TopicPartition> cut = new HashSet<>();
    List<Future<Void>> reported = new ArrayList<>();
    List<QueueBatch> wanting = new ArrayList<>(1);
    TopicPartition tp = null;
    for (SinkRecord record : records) {
      tp = samePartition(tp, record) ? tp : partitionOf(record);
      long offset = record.originalKafkaOffset();
      Long rewoundTo = rewound.get(tp);
      if ((rewoundTo != null && offset >= rewoundTo) || (!cut.isEmpty() && cut.contains(tp))) {
        continue; // fetched before the rewind Connect is about to do
      }
      wanting.clear();
      List<QueueBatch> targets =
          targetsByTopic.computeIfAbsent(record.topic(), topic -> batchesFor(topic, into.batches));
      for (QueueBatch batch : targets) {
        if (batch.wants(tp, offset)) {
          wanting.add(batch);
        }
      }
      if (anyAtMaxDepth(wanting)) {
        cut.add(tp); // this record and the rest of its partition: fetched again after the rewind
        rewinds.merge(tp, offset, Math::min);
        into.capped = true;
        continue;
      }
      into.first.putIfAbsent(tp, offset);
      into.seen.put(tp, offset + 1);
      if (wanting.isEmpty()) {
        metrics.skipped();
        continue; // already in every target, or in none
      }
      try {
        PublishRequest request = mapper.toRequest(record);
        for (QueueBatch batch : wanting) {
          if (request.size() > batch.config.maxMessageSize()) {
            throw new DataException(
                "record of "
                    + request.size()
                    + " bytes (key + value + headers) exceeds the maximum message size "
                    + batch.config.maxMessageSize()
                    + " of queue '"
                    + batch.config.name()
                    + "' (queue.max.message.bytes)");
          }
        }
        for (QueueBatch batch : wanting) {
          batch.add(request, tp, offset);
        }
        into.records++;
        into.bytes += request.size();
      } catch (DataException e) {
        reported.add(errant(record, e));
        for (QueueBatch batch : wanting) {
          batch.mark(tp, offset); // handled: the watermark may pass it
        }
      }
    }
    awaitReported(reported);
  }

  /** Whether one of {@code batches} is a classic queue's batch already at its maxDepth. */
  private static boolean anyAtMaxDepth(List<QueueBatch> batches) {
    for (QueueBatch b : batches) {
      if (b.atMaxDepth()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Hands the collected batches to the writer (nothing may be in flight); with nothing to write
   * (only skipped or errant records) they are processed at once.
   */
  private void handOver() {
    Pending next = waiting;
    if (next == null) {
      return;
    }
    waiting = null;
    for (QueueBatch batch : next.batches.values()) {
      // Optimistically: later records are checked against what this batch writes; re-read from
      // the store if it fails.
      batch.marks.putAll(batch.next);
    }
    if (next.records == 0) {
      processed.putAll(next.seen);
      return;
    }
    next.done = writer.submit(() -> writeAll(next));
    inFlight = next;
  }

  /** Everything given to put so far: written, and its outcome resolved. */
  private void drain() {
    resolve();
    handOver();
    resolve();
  }

  private static boolean samePartition(TopicPartition tp, SinkRecord record) {
    return tp != null
        && tp.partition() == record.originalKafkaPartition()
        && tp.topic().equals(record.originalTopic());
  }

  private static TopicPartition partitionOf(SinkRecord record) {
    return new TopicPartition(record.originalTopic(), record.originalKafkaPartition());
  }

  private List<QueueBatch> batchesFor(String topic, Map<String, QueueBatch> batches) {
    List<String> queues =
        config.routing() == QueueSinkConfig.Routing.EXACT
            ? List.of(config.queueName())
            : manager.findMatchingQueues(topic);
    List<QueueBatch> out = new ArrayList<>(queues.size());
    for (String queue : queues) {
      out.add(batches.computeIfAbsent(queue, this::newBatch));
    }
    return out;
  }

  private QueueBatch newBatch(String queue) {
    return new QueueBatch(
        manager.getQueue(queue), watermarks.computeIfAbsent(queue, q -> new HashMap<>()));
  }

  /** On the writer thread: every queue's batch, in order; the first failure stops the rest. */
  private Void writeAll(Pending batch) throws InterruptedException {
    for (QueueBatch b : batch.batches.values()) {
      if (b.requests.isEmpty()) {
        continue; // only errant records: the watermark moves with the next batch
      }
      batch.writing = b;
      Map<String, String> checkpoints = b.checkpoints();
      long started = System.nanoTime();
      manager.publishBatchDurably(b.config.name(), b.requests, checkpoints);
      metrics.appended(b.requests.size(), b.bytes, System.nanoTime() - started);
    }
    return null;
  }

  /**
   * Waits for the batch in flight. Durable: its offsets become processed. Failed: recovered by
   * rewind and pause (retriable), or the task fails (anything else).
   */
  private void resolve() {
    Pending f = inFlight;
    if (f == null) {
      return;
    }
    try {
      f.done.get();
      inFlight = null;
      processed.putAll(f.seen);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // still in flight: the next call waits for it again
      throw new RetriableException("interrupted while waiting for a durability barrier", e);
    } catch (ExecutionException e) {
      inFlight = null;
      recover(f, e.getCause());
    }
  }

  private void recover(Pending f, Throwable cause) {
    if (cause instanceof Error error) {
      throw error;
    }
    String queue = f.writing == null ? config.queueName() : f.writing.config.name();
    RuntimeException e =
        cause instanceof RuntimeException re
            ? re
            : new RetriableException("interrupted writing into '" + queue + "'", cause);
    if (!(e instanceof RetriableException) && SinkErrors.classify(e) != SinkErrors.Kind.RETRIABLE) {
      throw fatal("cannot write into '" + queue + "'", e);
    }
    resyncNeeded = true; // a failed barrier may still have appended
    f.first.forEach((tp, offset) -> rewinds.merge(tp, offset, Math::min));
    if (waiting != null) {
      // Collected after the failed batch: dropped, and fetched again after the rewind.
      waiting.first.forEach((tp, offset) -> rewinds.merge(tp, offset, Math::min));
      waiting = null;
    }
    if (e instanceof QueueFullException && f.writing != null) {
      full.put(queue, f.writing.requests.size());
      log.info(
          "Queue '{}' is over its bound ({}); pausing {} partition(s) until it has room for {}"
              + " record(s)",
          queue,
          e.getMessage(),
          context.assignment().size(),
          f.writing.requests.size());
    } else {
      log.warn(
          "Transient failure writing into '{}'; rewinding {} partition(s) and retrying in {}: {}",
          queue,
          f.first.size(),
          config.retryBackoff(),
          e.toString());
    }
    resumeNotBefore = clock.millis() + config.retryBackoff().toMillis();
    pause(context.assignment());
  }

  private void pause(Collection<TopicPartition> partitions) {
    if (partitions.isEmpty()) {
      return;
    }
    paused.addAll(partitions);
    context.pause(partitions.toArray(new TopicPartition[0]));
    context.timeout(Math.max(1, resumeNotBefore - clock.millis()));
  }

  /** Resumes the paused partitions once the backoff has passed and every full queue has room. */
  private void maybeResume() {
    if (paused.isEmpty()) {
      return;
    }
    long now = clock.millis();
    if (now < resumeNotBefore) {
      context.timeout(resumeNotBefore - now);
      return;
    }
    full.entrySet().removeIf(e -> hasRoom(e.getKey(), e.getValue()));
    if (!full.isEmpty()) {
      resumeNotBefore = now + config.retryBackoff().toMillis();
      context.timeout(Math.max(1, config.retryBackoff().toMillis()));
      return;
    }
    log.info("Resuming {} partition(s)", paused.size());
    context.resume(paused.toArray(new TopicPartition[0]));
    paused.clear();
  }

  /** Whether {@code queue} can take a batch of {@code needed} again (or is empty, or is gone). */
  private boolean hasRoom(String queue, int needed) {
    try {
      long depth = lease.storage().queues().count(queue);
      return depth == 0 || depth + needed <= manager.getQueue(queue).maxDepth();
    } catch (QueueNotFoundException gone) {
      return true; // the next write reports it
    } catch (RuntimeException e) {
      log.warn("Cannot read the depth of queue '{}': {}", queue, e.toString());
      return false;
    }
  }

  /** Hands the pending rewinds of assigned partitions to Connect; returns them. */
  private Map<TopicPartition, Long> applyRewinds() {
    if (rewinds.isEmpty()) {
      return Map.of();
    }
    Map<TopicPartition, Long> apply = new HashMap<>(rewinds);
    rewinds.clear();
    apply.keySet().retainAll(context.assignment());
    if (!apply.isEmpty()) {
      context.offset(apply);
      log.info("Rewinding {} partition(s) to records not yet written: {}", apply.size(), apply);
    }
    return apply;
  }

  private Future<Void> errant(SinkRecord record, DataException e) {
    if (reporter == null) {
      throw new ConnectException(
          "cannot write record "
              + record.originalTopic()
              + "-"
              + record.originalKafkaPartition()
              + "@"
              + record.originalKafkaOffset()
              + ": "
              + e.getMessage()
              + " (set errors.tolerance=all and errors.deadletterqueue.topic.name to route such"
              + " records to a dead-letter topic instead)",
          e);
    }
    metrics.errant();
    return reporter.report(record, e);
  }

  private static void awaitReported(List<Future<Void>> reported) {
    for (Future<Void> f : reported) {
      try {
        f.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new RetriableException("interrupted while reporting an errant record", e);
      } catch (ExecutionException e) {
        throw new ConnectException("could not report an errant record", e.getCause());
      }
    }
  }

  private static ConnectException fatal(String what, Throwable e) {
    return new ConnectException(what + ": " + e.getMessage(), e);
  }

  /** Writes what is still collected, waits for it, then reports the durable offsets. */
  @Override
  public Map<TopicPartition, OffsetAndMetadata> preCommit(
      Map<TopicPartition, OffsetAndMetadata> currentOffsets) {
    drain();
    maybeResume();
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
    boolean quiet = true;
    if (writer != null) {
      writer.shutdown();
      try {
        quiet = writer.awaitTermination(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        quiet = writer.isTerminated();
      }
    }
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
            STOP_TIMEOUT);
      }
      lease = null;
    }
  }

  /** What one queue receives from one {@code put}, and the watermarks that go with it. */
  private static final class QueueBatch {
    final QueueConfig config;
    final Map<TopicPartition, Long> marks;
    final Map<TopicPartition, Long> next = new LinkedHashMap<>();
    final List<PublishRequest> requests = new ArrayList<>();
    long bytes;
    private Map<String, String> checkpoints;

    QueueBatch(QueueConfig config, Map<TopicPartition, Long> marks) {
      this.config = config;
      this.marks = marks;
    }

    /** Whether this is a classic queue's batch as large as the queue may ever hold. */
    boolean atMaxDepth() {
      return !config.isStream() && requests.size() >= config.maxDepth();
    }

    boolean wants(TopicPartition tp, long offset) {
      Long mark = next.containsKey(tp) ? next.get(tp) : marks.get(tp);
      return mark == null || offset >= mark;
    }

    void add(PublishRequest request, TopicPartition tp, long offset) {
      requests.add(request);
      bytes += request.size();
      mark(tp, offset);
    }

    void mark(TopicPartition tp, long offset) {
      next.put(tp, offset + 1);
    }

    Map<String, String> checkpoints() {
      if (checkpoints == null) {
        Map<String, String> out = new LinkedHashMap<>();
        next.forEach(
            (tp, off) ->
                out.put(
                    KafkaCoordinates.checkpointKey(tp.topic(), tp.partition()),
                    Long.toString(off)));
        checkpoints = out;
      }
      return checkpoints;
    }
  }

  /** Records collected from one or more puts, per target queue, written with one barrier each. */
  private static final class Pending {
    final Map<String, QueueBatch> batches = new LinkedHashMap<>();
    final Map<TopicPartition, Long> seen = new LinkedHashMap<>();
    final Map<TopicPartition, Long> first = new HashMap<>();
    int records;
    long bytes;

    /** A batch reached its queue's maxDepth: hand over now, collect nothing more into it. */
    boolean capped;

    Future<Void> done;

    /** The queue's batch being written (read after {@link #done} completed). */
    volatile QueueBatch writing;
  }
}
