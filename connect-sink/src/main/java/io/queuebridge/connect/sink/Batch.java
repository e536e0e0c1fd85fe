package io.queuebridge.connect.sink;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * The records collected from one or more puts, per target queue, written with one durability
 * barrier per queue. Filled by the {@link BatchCollector} on the task thread; once handed to the
 * {@link BatchWriter} only read. Not thread-safe.
 */
final class Batch {
  /** Per target queue, in the order the queues were first targeted. */
  final Map<String, QueueBatch> queues = new LinkedHashMap<>();

  /** The next offset per partition once this batch is durable: what may be committed to Kafka. */
  final Map<TopicPartition, Long> seen = new LinkedHashMap<>();

  /** The first offset per partition: where to rewind to if this batch fails. */
  final Map<TopicPartition, Long> first = new HashMap<>();

  /** Records (excluding skipped and errant ones) and their bytes. */
  int records;

  long bytes;

  /** A batch reached its queue's maxDepth: hand over now, collect nothing more into it. */
  boolean capped;

  /**
   * Advances each queue's watermarks to what this batch writes, optimistically: later records are
   * checked against them. If the batch fails, {@link Watermarks#markStale} has them re-read.
   */
  void advanceWatermarks() {
    for (QueueBatch batch : queues.values()) {
      batch.marks.putAll(batch.next);
    }
  }
}
