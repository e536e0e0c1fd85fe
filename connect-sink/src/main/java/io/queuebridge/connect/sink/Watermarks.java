package io.queuebridge.connect.sink;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.message.KafkaCoordinates;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * The next Kafka offset each queue accepts from each assigned partition: the watermark the task
 * stores in the queue with every batch (one checkpoint per partition), so the records below it are
 * already there and are skipped. Absent means the queue holds nothing of that partition: anything
 * is accepted. Includes the batch in flight ({@link Batch#advanceWatermarks}); re-read from the
 * store after that batch failed.
 *
 * <p>Not thread-safe: the task thread only.
 */
final class Watermarks {
  private final QueueSinkConfig config;
  private final QueueManager manager;
  private final Map<String, Map<TopicPartition, Long>> byQueue = new HashMap<>();
  private boolean stale;

  Watermarks(QueueSinkConfig config, QueueManager manager) {
    this.config = config;
    this.manager = manager;
  }

  /**
   * Reads the watermarks of {@code partitions} from every queue that can hold them: {@code
   * queue.name}, or with {@code matching} routing every queue. A queue deleted meanwhile is
   * forgotten.
   *
   * @throws io.queuebridge.core.errors.QueueException if the store cannot be read; the watermarks
   *     read before the failure are kept
   */
  void load(Collection<TopicPartition> partitions) {
    List<String> queues =
        config.routing() == QueueSinkConfig.Routing.EXACT
            ? List.of(config.queueName())
            : manager.listQueues().stream().map(QueueConfig::name).toList();
    for (String queue : queues) {
      Map<String, String> checkpoints;
      try {
        checkpoints = manager.durableStreamCheckpoints(queue);
      } catch (QueueNotFoundException deleted) {
        byQueue.remove(queue);
        continue;
      }
      Map<TopicPartition, Long> marks = of(queue);
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

  /**
   * Marks the watermarks as possibly behind the store: a failed barrier may still have appended.
   */
  void markStale() {
    stale = true;
  }

  /** {@link #load}s {@code partitions} if {@link #markStale} was called since the last reload. */
  void reloadIfStale(Collection<TopicPartition> partitions) {
    if (stale) {
      load(partitions);
      stale = false;
    }
  }

  /**
   * The lowest watermark any queue holds for each of {@code partitions}, where one does: where the
   * partition must be read from so that no queue misses a record.
   */
  Map<TopicPartition, Long> lowest(Collection<TopicPartition> partitions) {
    Map<TopicPartition, Long> out = new HashMap<>();
    for (TopicPartition tp : partitions) {
      Long lowest = null;
      for (Map<TopicPartition, Long> marks : byQueue.values()) {
        Long mark = marks.get(tp);
        if (mark != null && (lowest == null || mark < lowest)) {
          lowest = mark;
        }
      }
      if (lowest != null) {
        out.put(tp, lowest);
      }
    }
    return out;
  }

  /** The watermarks of {@code queue}, live and mutable; created empty if none are known. */
  Map<TopicPartition, Long> of(String queue) {
    return byQueue.computeIfAbsent(queue, q -> new HashMap<>());
  }

  /** Forgets the watermarks of {@code partitions} (no longer assigned) in every queue. */
  void forget(Collection<TopicPartition> partitions) {
    for (Map<TopicPartition, Long> marks : byQueue.values()) {
      partitions.forEach(marks::remove);
    }
  }
}
