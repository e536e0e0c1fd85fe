package io.queuebridge.connect.sink;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.PublishRequest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * What one queue receives from the puts collected into one {@link Batch}, and the watermarks that
 * go with it: the next offset of each partition it took records from, stored in the queue as
 * checkpoints atomically with the records. Not thread-safe: filled on the task thread, then only
 * read by the writer thread once handed over.
 */
final class QueueBatch {
  /** The queue's configuration when the batch was started. */
  final QueueConfig config;

  /** The queue's watermarks ({@link Watermarks#of}), advanced to {@link #next} on hand-over. */
  final Map<TopicPartition, Long> marks;

  /** The next offset per partition once this batch is written: its watermarks. */
  final Map<TopicPartition, Long> next = new LinkedHashMap<>();

  final List<PublishRequest> requests = new ArrayList<>();

  /** Key + value + headers of {@link #requests}. */
  long bytes;

  /** How many of {@link #requests} ask for a due time ({@link PublishRequest#isDelayed}). */
  int delayed;

  private Map<String, String> checkpoints;

  QueueBatch(QueueConfig config, Map<TopicPartition, Long> marks) {
    this.config = config;
    this.marks = marks;
  }

  /** Whether this is a classic queue's batch as large as the queue may ever hold. */
  boolean atMaxDepth() {
    return !config.isStream() && requests.size() >= config.maxDepth();
  }

  /** Whether the queue lacks {@code offset} of {@code tp}: neither stored nor in this batch. */
  boolean wants(TopicPartition tp, long offset) {
    Long mark = next.get(tp); // never a null value: mark puts offset + 1
    if (mark == null) {
      mark = marks.get(tp);
    }
    return mark == null || offset >= mark;
  }

  void add(PublishRequest request, TopicPartition tp, long offset) {
    requests.add(request);
    bytes += request.size();
    if (request.isDelayed()) {
      delayed++;
    }
    mark(tp, offset);
  }

  /** Lets the watermark of {@code tp} pass {@code offset} without writing it (an errant record). */
  void mark(TopicPartition tp, long offset) {
    next.put(tp, offset + 1);
  }

  /** The watermarks as the store keeps them: checkpoint key to next offset; built once. */
  Map<String, String> checkpoints() {
    if (checkpoints == null) {
      Map<String, String> out = new LinkedHashMap<>();
      next.forEach(
          (tp, off) ->
              out.put(
                  KafkaCoordinates.checkpointKey(tp.topic(), tp.partition()), Long.toString(off)));
      checkpoints = out;
    }
    return checkpoints;
  }
}
