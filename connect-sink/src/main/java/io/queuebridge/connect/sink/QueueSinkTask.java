package io.queuebridge.connect.sink;

import io.queuebridge.core.KafkaCoordinates;
import io.queuebridge.core.PublishRequest;
import io.queuebridge.core.QueueBridgeVersion;
import io.queuebridge.core.QueueConfig;
import io.queuebridge.core.QueueManager;
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
 * Writes each {@link #put} batch into the stream with one durability barrier, exactly once.
 *
 * <p><b>Exactly once.</b> With every batch the task stores, atomically in the stream, the next
 * Kafka offset of each partition the batch took records from (a watermark, as a checkpoint of the
 * store). In {@link #open} it rewinds each assigned partition to its watermark, and it skips
 * records below the watermark, so a crash or a rebalance at any point neither loses nor duplicates
 * a record. {@link #preCommit} reports only offsets whose records are durable (every {@code put} is
 * synchronous, so that is everything put so far). After a failed barrier the watermarks are re-read
 * from the store before the batch is retried, because a failed barrier may still have appended.
 *
 * <p>Not thread-safe; Connect calls a task from one thread.
 */
public class QueueSinkTask extends SinkTask {
  private static final Logger log = LoggerFactory.getLogger(QueueSinkTask.class);

  private QueueSinkConfig config;
  private SharedStores.Lease lease;
  private QueueManager manager;
  private RecordMapper mapper;
  private QueueConfig contract;
  private SinkMetrics metrics;
  private ErrantRecordReporter reporter;

  /** Next offset to accept per assigned partition; absent = accept anything. */
  private final Map<TopicPartition, Long> watermarks = new HashMap<>();

  private boolean resyncNeeded;

  @Override
  public String version() {
    return QueueBridgeVersion.get();
  }

  @Override
  public void start(Map<String, String> props) {
    config = new QueueSinkConfig(props);
    mapper = new RecordMapper(config);
    contract = config.streamContract();
    reporter = config.toleratesErrors() ? errantRecordReporter() : null;
    lease = SharedStores.acquire(config.storeType(), config.storeConfig());
    try {
      manager = lease.manager();
      manager.declareProtectedStream(contract);
    } catch (RuntimeException e) {
      lease.close();
      lease = null;
      throw fatal("cannot declare the stream '" + config.queueName() + "'", e);
    }
    metrics = new SinkMetrics(context.pluginMetrics());
    log.info(
        "Sink task writing into stream '{}' of store {}",
        config.queueName(),
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
    Map<String, String> checkpoints = manager.durableStreamCheckpoints(config.queueName());
    Map<TopicPartition, Long> rewind = new HashMap<>();
    for (TopicPartition tp : partitions) {
      String cp = checkpoints.get(KafkaCoordinates.checkpointKey(tp.topic(), tp.partition()));
      if (cp != null) {
        long next = Long.parseLong(cp);
        watermarks.put(tp, next);
        rewind.put(tp, next);
      } else {
        watermarks.remove(tp);
      }
    }
    if (!rewind.isEmpty()) {
      context.offset(rewind);
      log.info("Rewound {} partition(s) to the stream's watermarks: {}", rewind.size(), rewind);
    }
  }

  @Override
  public void close(Collection<TopicPartition> partitions) {
    partitions.forEach(watermarks::remove);
  }

  @Override
  public void put(Collection<SinkRecord> records) {
    if (records.isEmpty()) {
      return;
    }
    if (resyncNeeded) {
      resyncWatermarks();
    }
    List<PublishRequest> batch = new ArrayList<>(records.size());
    Map<TopicPartition, Long> next = new LinkedHashMap<>();
    List<Future<Void>> reported = new ArrayList<>();
    long bytes = 0;
    for (SinkRecord record : records) {
      TopicPartition tp =
          new TopicPartition(record.originalTopic(), record.originalKafkaPartition());
      long offset = record.originalKafkaOffset();
      Long mark = next.containsKey(tp) ? next.get(tp) : watermarks.get(tp);
      if (mark != null && offset < mark) {
        metrics.skipped();
        continue; // already in the stream
      }
      try {
        PublishRequest request = mapper.toRequest(record);
        if (request.size() > contract.maxMessageSize()) {
          throw new DataException(
              "record of "
                  + request.size()
                  + " bytes (key + value + headers) exceeds queue.max.message.bytes = "
                  + contract.maxMessageSize());
        }
        batch.add(request);
        bytes += request.size();
      } catch (DataException e) {
        reported.add(errant(record, e));
      }
      next.put(tp, offset + 1);
    }
    awaitReported(reported);
    if (batch.isEmpty()) {
      watermarks.putAll(next);
      return;
    }
    Map<String, String> checkpoints = new LinkedHashMap<>();
    next.forEach(
        (tp, off) ->
            checkpoints.put(
                KafkaCoordinates.checkpointKey(tp.topic(), tp.partition()), Long.toString(off)));
    long started = System.nanoTime();
    try {
      manager.publishBatchToDurableStream(config.queueName(), batch, checkpoints);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RetriableException("interrupted before appending to the stream", e);
    } catch (RuntimeException e) {
      throw handle(e);
    }
    metrics.appended(batch.size(), bytes, System.nanoTime() - started);
    watermarks.putAll(next);
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
              + " into stream '"
              + config.queueName()
              + "': "
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

  private RuntimeException handle(RuntimeException e) {
    switch (SinkErrors.classify(e)) {
      case RETRIABLE -> {
        resyncNeeded = true;
        context.timeout(config.retryBackoff().toMillis());
        log.warn(
            "Transient failure writing into stream '{}', retrying in {}: {}",
            config.queueName(),
            config.retryBackoff(),
            e.toString());
        return new RetriableException(
            "transient failure writing into stream '" + config.queueName() + "'", e);
      }
      case RECORD, FATAL -> {
        return fatal("cannot write into stream '" + config.queueName() + "'", e);
      }
      default -> throw new IllegalStateException("unreachable");
    }
  }

  private static ConnectException fatal(String what, Throwable e) {
    return new ConnectException(what + ": " + e.getMessage(), e);
  }

  /** After a failed barrier the batch may be in the stream: trust the stream's watermarks. */
  private void resyncWatermarks() {
    Map<String, String> checkpoints = manager.durableStreamCheckpoints(config.queueName());
    for (TopicPartition tp : context.assignment()) {
      String cp = checkpoints.get(KafkaCoordinates.checkpointKey(tp.topic(), tp.partition()));
      if (cp != null) {
        watermarks.put(tp, Long.parseLong(cp));
      }
    }
    resyncNeeded = false;
  }

  @Override
  public Map<TopicPartition, OffsetAndMetadata> preCommit(
      Map<TopicPartition, OffsetAndMetadata> currentOffsets) {
    Map<TopicPartition, OffsetAndMetadata> durable = new HashMap<>();
    for (TopicPartition tp : currentOffsets.keySet()) {
      Long mark = watermarks.get(tp);
      if (mark != null) {
        durable.put(tp, new OffsetAndMetadata(mark));
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
}
