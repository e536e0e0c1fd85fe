package io.queuebridge.connect.sink;

import io.queuebridge.connect.common.StoreSettings;
import io.queuebridge.core.KafkaCoordinates;
import io.queuebridge.core.PublishRequest;
import io.queuebridge.core.QueueBridgeVersion;
import io.queuebridge.core.QueueConfig;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueNotFoundException;
import io.queuebridge.core.SharedStores;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
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
 * exactly once.
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
 * a record. {@link #preCommit} reports only offsets whose records are durable in every target
 * (every {@code put} is synchronous, so that is everything put so far). After a failed barrier the
 * watermarks are re-read from the store before the batch is retried, because a failed barrier may
 * still have appended.
 *
 * <p>Not thread-safe; Connect calls a task from one thread.
 */
public class QueueSinkTask extends SinkTask {
  private static final Logger log = LoggerFactory.getLogger(QueueSinkTask.class);

  private QueueSinkConfig config;
  private SharedStores.Lease lease;
  private QueueManager manager;
  private RecordMapper mapper;
  private SinkMetrics metrics;
  private ErrantRecordReporter reporter;

  /** Next offset each queue accepts from each assigned partition; absent = anything. */
  private final Map<String, Map<TopicPartition, Long>> watermarks = new HashMap<>();

  /** Next offset to commit to Kafka per assigned partition: everything below is durable. */
  private final Map<TopicPartition, Long> processed = new HashMap<>();

  private boolean resyncNeeded;

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
    for (Map<TopicPartition, Long> marks : watermarks.values()) {
      partitions.forEach(marks::remove);
    }
    partitions.forEach(processed::remove);
  }

  @Override
  public void put(Collection<SinkRecord> records) {
    if (records.isEmpty()) {
      return;
    }
    if (resyncNeeded) {
      loadWatermarks(context.assignment());
      resyncNeeded = false;
    }
    Map<String, QueueBatch> batches = new LinkedHashMap<>();
    Map<String, List<String>> targetsByTopic = new HashMap<>();
    Map<TopicPartition, Long> seen = new LinkedHashMap<>();
    List<Future<Void>> reported = new ArrayList<>();
    for (SinkRecord record : records) {
      TopicPartition tp =
          new TopicPartition(record.originalTopic(), record.originalKafkaPartition());
      long offset = record.originalKafkaOffset();
      seen.put(tp, offset + 1);
      List<QueueBatch> wanting = new ArrayList<>(1);
      for (String queue : targetsByTopic.computeIfAbsent(record.topic(), this::targets)) {
        QueueBatch batch = batches.computeIfAbsent(queue, this::newBatch);
        if (batch.wants(tp, offset)) {
          wanting.add(batch);
        }
      }
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
      } catch (DataException e) {
        reported.add(errant(record, e));
        for (QueueBatch batch : wanting) {
          batch.mark(tp, offset); // handled: the watermark may pass it
        }
      }
    }
    awaitReported(reported);
    for (QueueBatch batch : batches.values()) {
      if (!batch.requests.isEmpty()) {
        write(batch);
      }
    }
    processed.putAll(seen);
  }

  private List<String> targets(String topic) {
    return config.routing() == QueueSinkConfig.Routing.EXACT
        ? List.of(config.queueName())
        : manager.findMatchingQueues(topic);
  }

  private QueueBatch newBatch(String queue) {
    return new QueueBatch(
        manager.getQueue(queue), watermarks.computeIfAbsent(queue, q -> new HashMap<>()));
  }

  private void write(QueueBatch batch) {
    String queue = batch.config.name();
    long started = System.nanoTime();
    try {
      manager.publishBatchDurably(queue, batch.requests, batch.checkpoints());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RetriableException("interrupted before appending to '" + queue + "'", e);
    } catch (RuntimeException e) {
      throw handle(queue, e);
    }
    metrics.appended(batch.requests.size(), batch.bytes, System.nanoTime() - started);
    batch.marks.putAll(batch.next);
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

  private RuntimeException handle(String queue, RuntimeException e) {
    switch (SinkErrors.classify(e)) {
      case RETRIABLE -> {
        resyncNeeded = true;
        context.timeout(config.retryBackoff().toMillis());
        log.warn(
            "Transient failure writing into '{}', retrying in {}: {}",
            queue,
            config.retryBackoff(),
            e.toString());
        return new RetriableException("transient failure writing into '" + queue + "'", e);
      }
      case RECORD, FATAL -> {
        return fatal("cannot write into '" + queue + "'", e);
      }
      default -> throw new IllegalStateException("unreachable");
    }
  }

  private static ConnectException fatal(String what, Throwable e) {
    return new ConnectException(what + ": " + e.getMessage(), e);
  }

  @Override
  public Map<TopicPartition, OffsetAndMetadata> preCommit(
      Map<TopicPartition, OffsetAndMetadata> currentOffsets) {
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
    if (metrics != null) {
      metrics.close();
    }
    if (lease != null) {
      lease.close();
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

    QueueBatch(QueueConfig config, Map<TopicPartition, Long> marks) {
      this.config = config;
      this.marks = marks;
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
      Map<String, String> out = new LinkedHashMap<>();
      next.forEach(
          (tp, off) ->
              out.put(
                  KafkaCoordinates.checkpointKey(tp.topic(), tp.partition()), Long.toString(off)));
      return out;
    }
  }
}
