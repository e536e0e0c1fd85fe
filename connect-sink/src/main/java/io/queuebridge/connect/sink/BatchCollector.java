package io.queuebridge.connect.sink;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.PublishRequest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.sink.SinkRecord;

/**
 * Collects the records of one or more puts into the next {@link Batch}: maps each record into a
 * request for every target queue that does not hold it yet (below its {@link Watermarks watermark}
 * it is skipped), reports errant records (unconvertible, too large for a target, or asking for a
 * due time a target does not accept: checked here, against the queue's configuration when the batch
 * was started, so that no such record fails a batch when it is written), and keeps a classic
 * queue's batch within the queue's {@code maxDepth}. Collecting goes on while the writer is busy,
 * up to {@link #MAX_WAITING_RECORDS} records or {@link #MAX_WAITING_BYTES} bytes.
 *
 * <p>Targets: with {@code queue.routing=exact} the stream {@code queue.name}; with {@code matching}
 * every queue whose topic filters match the record's topic (a record matching none is consumed and
 * not stored).
 *
 * <p>Not thread-safe: the task thread only.
 */
final class BatchCollector {
  /** Collected records (or bytes) at which put waits for the writer instead of collecting more. */
  static final int MAX_WAITING_RECORDS = 20_000;

  static final long MAX_WAITING_BYTES = 16L << 20;

  private final QueueSinkConfig config;
  private final QueueManager manager;
  private final Watermarks watermarks;
  private final RecordMapper mapper;
  private final ErrantRecords errant;
  private final Rewinder rewinder;
  private final SinkMetrics metrics;

  /** The records collected and not yet taken; null when none. */
  private Batch collected;

  BatchCollector(
      QueueSinkConfig config,
      QueueManager manager,
      Watermarks watermarks,
      RecordMapper mapper,
      ErrantRecords errant,
      Rewinder rewinder,
      SinkMetrics metrics) {
    this.config = config;
    this.manager = manager;
    this.watermarks = watermarks;
    this.mapper = mapper;
    this.errant = errant;
    this.rewinder = rewinder;
    this.metrics = metrics;
  }

  /** Whether nothing is collected. */
  boolean isEmpty() {
    return collected == null;
  }

  /**
   * Whether the collected batch must be handed over now rather than grow: capped at a classic
   * queue's maxDepth, or at {@link #MAX_WAITING_RECORDS} records or {@link #MAX_WAITING_BYTES}
   * bytes. False when nothing is collected.
   */
  boolean full() {
    return collected != null
        && (collected.capped
            || collected.records >= MAX_WAITING_RECORDS
            || collected.bytes >= MAX_WAITING_BYTES);
  }

  /** Whether something is collected and none of it is to be written (skipped or errant only). */
  boolean nothingToWrite() {
    return collected != null && collected.records == 0;
  }

  /** The collected batch, which this collector forgets; null when nothing is collected. */
  Batch take() {
    Batch out = collected;
    collected = null;
    return out;
  }

  /**
   * Drops what is collected (it is to be fetched again).
   *
   * @return the first offset of each partition dropped; empty when nothing was collected
   */
  Map<TopicPartition, Long> drop() {
    Batch dropped = take();
    return dropped == null ? Map.of() : dropped.first;
  }

  /**
   * Maps {@code records} into the collected batch (started if none), skipping what every target
   * already holds and the records at or above {@code rewound} (fetched before the rewind Connect is
   * about to do). A classic queue's batch stops at the queue's {@code maxDepth} (a larger batch
   * could never be admitted, not even into an empty queue): the records of a partition from the
   * first one that does not fit are left out and rewound, and the batch is capped.
   *
   * @throws org.apache.kafka.connect.errors.ConnectException for an errant record without {@code
   *     errors.tolerance=all}, or one that could not be reported; the records before it stay
   *     collected
   */
  void collect(Collection<SinkRecord> records, Map<TopicPartition, Long> rewound) {
    if (collected == null) {
      collected = new Batch();
    }
    Batch into = collected;
    Map<String, List<QueueBatch>> targetsByTopic = new HashMap<>();
    Set<TopicPartition> cut = new HashSet<>();
    List<Future<Void>> reported = new ArrayList<>();
    List<QueueBatch> wanting = new ArrayList<>(1);
    List<QueueConfig> wantingConfigs = new ArrayList<>(1);
    TopicPartition tp = null;
    String topic = null; // the topic of `targets`: records come in runs of one topic
    List<QueueBatch> targets = null;
    for (SinkRecord record : records) {
      tp = samePartition(tp, record) ? tp : partitionOf(record);
      long offset = record.originalKafkaOffset();
      Long rewoundTo = rewound.get(tp);
      if ((rewoundTo != null && offset >= rewoundTo) || (!cut.isEmpty() && cut.contains(tp))) {
        continue; // fetched before the rewind Connect is about to do
      }
      wanting.clear();
      if (targets == null || !record.topic().equals(topic)) {
        topic = record.topic();
        targets = targetsByTopic.computeIfAbsent(topic, t -> batchesFor(t, into));
      }
      for (int i = 0; i < targets.size(); i++) {
        QueueBatch batch = targets.get(i);
        if (batch.wants(tp, offset)) {
          wanting.add(batch);
        }
      }
      if (anyAtMaxDepth(wanting)) {
        cut.add(tp); // this record and the rest of its partition: fetched again after the rewind
        rewinder.rewind(tp, offset);
        into.capped = true;
        continue;
      }
      if (into.seen.put(tp, offset + 1) == null) {
        into.first.put(tp, offset); // the two maps change together: tp is new to both
      }
      if (wanting.isEmpty()) {
        metrics.skipped();
        continue; // already in every target, or in none
      }
      try {
        wantingConfigs.clear();
        for (int i = 0; i < wanting.size(); i++) {
          wantingConfigs.add(wanting.get(i).config);
        }
        PublishRequest request = mapper.toRequest(record, wantingConfigs);
        long size = request.size();
        for (int i = 0; i < wanting.size(); i++) {
          QueueBatch batch = wanting.get(i);
          if (size > batch.config.maxMessageSize()) {
            throw new DataException(
                "record of "
                    + size
                    + " bytes (key + value + headers) exceeds the maximum message size "
                    + batch.config.maxMessageSize()
                    + " of queue '"
                    + batch.config.name()
                    + "' (queue.max.message.bytes)");
          }
        }
        for (int i = 0; i < wanting.size(); i++) {
          wanting.get(i).add(request, tp, offset);
        }
        into.records++;
        into.bytes += size;
      } catch (DataException e) {
        reported.add(errant.report(record, e));
        for (QueueBatch batch : wanting) {
          batch.mark(tp, offset); // handled: the watermark may pass it
        }
      }
    }
    ErrantRecords.awaitAll(reported);
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

  private static boolean samePartition(TopicPartition tp, SinkRecord record) {
    return tp != null
        && tp.partition() == record.originalKafkaPartition()
        && tp.topic().equals(record.originalTopic());
  }

  private static TopicPartition partitionOf(SinkRecord record) {
    return new TopicPartition(record.originalTopic(), record.originalKafkaPartition());
  }

  /** The batches of the queues {@code topic} goes to, started in {@code into} where new. */
  private List<QueueBatch> batchesFor(String topic, Batch into) {
    List<String> queues =
        config.routing() == QueueSinkConfig.Routing.EXACT
            ? List.of(config.queueName())
            : manager.findMatchingQueues(topic);
    List<QueueBatch> out = new ArrayList<>(queues.size());
    for (String queue : queues) {
      out.add(
          into.queues.computeIfAbsent(
              queue, q -> new QueueBatch(manager.getQueue(q), watermarks.of(q))));
    }
    return out;
  }
}
