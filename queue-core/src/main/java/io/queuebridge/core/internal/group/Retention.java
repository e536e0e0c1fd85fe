package io.queuebridge.core.internal.group;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.RetentionPolicy;
import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.QueueStore;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The retention pass (BEHAVIOUR Q-RET): truncates every queue as far as its queue-mode groups and
 * its retention policy allow (the rules are on {@link GroupCoordinator#retentionPass}), and
 * re-counts the PEL gauge on the way.
 *
 * <p>Holds no state. Expects the coordinator's lock held, outside any store section (the pass reads
 * many groups; committed offsets only rise, so a stale floor only truncates less). Calls the two
 * stores and the metrics.
 */
final class Retention {
  private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);

  private final QueueStore queues;
  private final ConsumerGroupStore groups;
  private final MetricsRecorder metrics;

  Retention(QueueStore queues, ConsumerGroupStore groups, MetricsRecorder metrics) {
    this.queues = queues;
    this.groups = groups;
    this.metrics = metrics;
  }

  /**
   * One pass over every queue; failures on one queue are logged and do not stop it.
   *
   * @return the new head of every queue that was truncated
   */
  Map<String, Long> pass(Instant now) {
    Map<String, Long> truncated = new LinkedHashMap<>();
    long pending = 0;
    for (QueueConfig config : queues.listQueues()) {
      String queue = config.name();
      try {
        List<ConsumerGroupState> gs = groups.listGroups(queue);
        long floor = Long.MAX_VALUE;
        boolean queueGroups = false;
        for (ConsumerGroupState g : gs) {
          pending += g.pending().size();
          if (g.mode() == GroupMode.QUEUE) {
            queueGroups = true;
            floor = Math.min(floor, g.committed());
          }
        }
        RetentionPolicy policy = config.retention();
        long point;
        if (config.isStream()) {
          if (!policy.isSet()) {
            continue;
          }
          point = Math.min(floor, retentionOffset(config, now));
        } else {
          if (!queueGroups) {
            continue;
          }
          point = policy.isSet() ? Math.min(floor, retentionOffset(config, now)) : floor;
        }
        long head = queues.head(queue);
        if (point > head) {
          queues.truncate(queue, point);
          truncated.put(queue, queues.head(queue));
        }
      } catch (QueueException e) {
        LOG.debug("retention of queue {} failed", queue, e);
      }
    }
    metrics.setPelSize(pending);
    return truncated;
  }

  /**
   * The largest of the time policy's store lookup, the bytes policy's store lookup and {@code tail
   * - retentionMessages}; the head where no policy removes anything.
   */
  private long retentionOffset(QueueConfig config, Instant now) {
    String queue = config.name();
    RetentionPolicy p = config.retention();
    long head = queues.head(queue);
    long tail = queues.tail(queue);
    long offset = head;
    if (p.retentionTime().compareTo(Duration.ZERO) > 0) {
      offset =
          Math.max(offset, queues.timeOffset(queue, now.minus(p.retentionTime())).orElse(head));
    }
    if (p.retentionBytes() > 0) {
      offset = Math.max(offset, queues.sizeOffset(queue, p.retentionBytes()).orElse(head));
    }
    if (p.retentionMessages() > 0 && tail - head > p.retentionMessages()) {
      offset = Math.max(offset, tail - p.retentionMessages());
    }
    return offset;
  }
}
