package io.queuebridge.connect.sink;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.store.QueueStore;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTaskContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recovers the records that {@code put} accepted but that were not written, by rewind instead of
 * redelivery: a batch that failed retriably or that a full queue refused, the records collected
 * after it, and records left out of a batch at a classic queue's {@code maxDepth}.
 *
 * <p>Each such partition is rewound ({@code SinkTaskContext.offset}) to the first record not
 * written, on the next {@link #applyRewinds}. After a failed or refused batch every assigned
 * partition is also paused ({@code SinkTaskContext.pause}) until {@code queue.retry.backoff.ms} has
 * passed and, when a queue refused the batch as full, that queue has room for the refused batch
 * again (or is empty); {@link #maybeResume} resumes them then.
 *
 * <p>Not thread-safe: the task thread only.
 */
final class Rewinder {
  private static final Logger log = LoggerFactory.getLogger(Rewinder.class);

  private final SinkTaskContext context;
  private final Clock clock;
  private final Duration backoff;
  private final QueueManager manager;
  private final QueueStore queues;

  /** Rewinds of records given to put but not written, handed to Connect on the next put. */
  private final Map<TopicPartition, Long> rewinds = new HashMap<>();

  /** Partitions paused after a failed or refused batch. */
  private final Set<TopicPartition> paused = new HashSet<>();

  /** Queues that refused a batch as full, with the room that batch needs. */
  private final Map<String, Integer> full = new LinkedHashMap<>();

  /** Epoch millis before which paused partitions are not resumed (the retry backoff). */
  private long resumeNotBefore;

  /**
   * @param backoff how long partitions stay paused at least ({@code queue.retry.backoff.ms})
   * @param manager and {@code queues}: the store, to see whether a full queue has room again
   */
  Rewinder(
      SinkTaskContext context,
      Clock clock,
      Duration backoff,
      QueueManager manager,
      QueueStore queues) {
    this.context = context;
    this.clock = clock;
    this.backoff = backoff;
    this.manager = manager;
    this.queues = queues;
  }

  /** Whether the task has paused partitions: put writes nothing then. */
  boolean paused() {
    return !paused.isEmpty();
  }

  /** Rewinds {@code tp} to {@code offset} on the next {@link #applyRewinds} (the lowest wins). */
  void rewind(TopicPartition tp, long offset) {
    rewinds.merge(tp, offset, Math::min);
  }

  /** {@link #rewind}s each partition of {@code offsets} to its offset. */
  void rewind(Map<TopicPartition, Long> offsets) {
    offsets.forEach(this::rewind);
  }

  /** Rewinds to {@code records}, fetched before a pause took effect and not written. */
  void rewindFetched(Collection<SinkRecord> records) {
    for (SinkRecord record : records) {
      rewind(
          new TopicPartition(record.originalTopic(), record.originalKafkaPartition()),
          record.originalKafkaOffset());
    }
  }

  /**
   * Hands the pending rewinds of assigned partitions to Connect and forgets all pending rewinds.
   *
   * @return the rewinds handed over: records fetched at or above them before Connect rewinds are
   *     not to be written
   */
  Map<TopicPartition, Long> applyRewinds() {
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

  /**
   * After {@code queue} refused a batch of {@code needed} records as full ({@code e}): pauses every
   * assigned partition until the backoff has passed and the queue has room for them.
   */
  void pauseUntilRoom(String queue, int needed, RuntimeException e) {
    full.put(queue, needed);
    log.info(
        "Queue '{}' is over its bound ({}); pausing {} partition(s) until it has room for {}"
            + " record(s)",
        queue,
        e.getMessage(),
        context.assignment().size(),
        needed);
    pauseAssigned();
  }

  /**
   * After a transient failure {@code e} writing into {@code queue} a batch of {@code partitions}
   * partitions: pauses every assigned partition until the backoff has passed.
   */
  void pauseForBackoff(String queue, int partitions, RuntimeException e) {
    log.warn(
        "Transient failure writing into '{}'; rewinding {} partition(s) and retrying in {}: {}",
        queue,
        partitions,
        backoff,
        e.toString());
    pauseAssigned();
  }

  /**
   * After a transient failure {@code e} reading the store on the task thread (the watermarks, a
   * queue's configuration) before the records of {@code partitions} partitions were written: pauses
   * every assigned partition until the backoff has passed.
   */
  void pauseAfterReadFailure(int partitions, RuntimeException e) {
    log.warn(
        "Transient failure reading the store before writing; rewinding {} partition(s) and"
            + " retrying in {}: {}",
        partitions,
        backoff,
        e.toString());
    pauseAssigned();
  }

  private void pauseAssigned() {
    resumeNotBefore = clock.millis() + backoff.toMillis();
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

  /** Whether the backoff of the last pause has passed. */
  boolean backoffOver() {
    return clock.millis() >= resumeNotBefore;
  }

  /** Resumes the paused partitions once the backoff has passed and every full queue has room. */
  void maybeResume() {
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
      resumeNotBefore = now + backoff.toMillis();
      context.timeout(Math.max(1, backoff.toMillis()));
      return;
    }
    log.info("Resuming {} partition(s)", paused.size());
    context.resume(paused.toArray(new TopicPartition[0]));
    paused.clear();
  }

  /** Whether {@code queue} can take a batch of {@code needed} again (or is empty, or is gone). */
  private boolean hasRoom(String queue, int needed) {
    try {
      long depth = queues.count(queue);
      return depth == 0 || depth + needed <= manager.getQueue(queue).maxDepth();
    } catch (QueueNotFoundException gone) {
      return true; // the next write reports it
    } catch (RuntimeException e) {
      log.warn("Cannot read the depth of queue '{}': {}", queue, e.toString());
      return false;
    }
  }

  /** Newly assigned {@code partitions} wait too while others are paused. */
  void opened(Collection<TopicPartition> partitions) {
    if (!paused.isEmpty()) {
      pause(partitions);
    }
  }

  /**
   * Forgets the rewinds of {@code partitions} (no longer assigned) and resumes those paused:
   * Connect keeps a partition paused across a rebalance, and whoever gets it next decides anew.
   */
  void closed(Collection<TopicPartition> partitions) {
    partitions.forEach(rewinds::remove);
    Collection<TopicPartition> unpause = partitions.stream().filter(paused::remove).toList();
    if (!unpause.isEmpty()) {
      context.resume(unpause.toArray(new TopicPartition[0]));
    }
    if (paused.isEmpty()) {
      full.clear();
    }
  }
}
