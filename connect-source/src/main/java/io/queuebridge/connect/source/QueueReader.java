package io.queuebridge.connect.source;

import io.queuebridge.connect.source.QueueSourceConfig.StartPosition;
import io.queuebridge.core.errors.ConsumerNotFoundException;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.QueueException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one queue for one task: {@link StreamReader} by offset, {@link ClassicReader} by claims.
 *
 * <p><b>Threads.</b> {@link #read} and {@link #waitPosition} are called by the poll thread only;
 * {@link #committed} by whichever thread Connect calls {@code commitRecord} on; {@link #heartbeat},
 * {@link #flush} and {@link #renew} by the task's housekeeping thread. Subclasses say how they keep
 * that safe.
 */
abstract class QueueReader {
  private static final Logger log = LoggerFactory.getLogger(QueueReader.class);

  final ReaderContext ctx;
  final String queue;
  final Map<String, String> sourcePartition;

  QueueReader(ReaderContext ctx, String queue) {
    this.ctx = ctx;
    this.queue = queue;
    this.sourcePartition = SourceOffsets.partition(queue, ctx.group());
  }

  /**
   * Appends up to {@code budget} records to {@code out}; poison messages are handled here.
   *
   * @return how many messages were taken from the queue (records and handled poison)
   * @throws io.queuebridge.core.errors.QueueException for store failures (nothing taken)
   */
  abstract int read(List<SourceRecord> out, int budget, Instant now);

  /**
   * The offset whose arrival means this reader has something new, for {@code awaitAppend}; -1 when
   * it may have more already.
   */
  abstract long waitPosition();

  /** Whether reading is held back by the task's in-flight budget. */
  boolean blockedOnRoom() {
    return false;
  }

  /**
   * Kafka accepted {@code record} (or Connect dropped it: {@code accepted} false), whose source
   * offset says reading continues at {@code next}.
   */
  abstract void committed(SourceRecord record, long next, boolean accepted);

  /** Writes progress that is kept in memory to the group (streams). */
  void flush() {}

  /** Renews claims held longer than {@code olderThanNanos} (classic queues). */
  void renew(long nowNanos, long olderThanNanos) {}

  /** Messages not yet acknowledged. */
  abstract long lag();

  /** Joins the group again after the member or the group disappeared. */
  abstract void rejoin();

  /** Refreshes this task's membership, joining again if it was removed. */
  void heartbeat() {
    try {
      ctx.groups().heartbeat(queue, ctx.group(), ctx.consumerId());
    } catch (ConsumerNotFoundException | GroupNotFoundException e) {
      log.info(
          "Member {} of group {} on queue {} was removed ({}); joining again",
          ctx.consumerId(),
          ctx.group(),
          queue,
          e.getMessage());
      rejoin();
    }
  }

  /** Leaves the group; pending claims stay, to be redelivered after their visibility timeout. */
  void leave() {
    try {
      ctx.groups().leave(queue, null, ctx.group(), ctx.consumerId());
    } catch (QueueException | IllegalStateException e) {
      log.debug("Leaving group {} of queue {} failed", ctx.group(), queue, e);
    }
  }

  /**
   * The configured start position of {@code queue}, clamped to its retained range.
   *
   * @throws QueueException for store failures
   */
  static long configuredStart(ReaderContext ctx, String queue, QueueSourceConfig config) {
    long head = ctx.queues().head(queue);
    long tail = ctx.queues().tail(queue);
    StartPosition p = config.startPosition();
    long target =
        switch (p) {
          case EARLIEST -> head;
          case LATEST -> tail;
          case OFFSET -> config.startOffset();
          case TIMESTAMP -> ctx.queues().timeOffset(queue, config.startTimestamp()).orElse(head);
        };
    return Math.max(head, Math.min(target, tail));
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "{" + queue + "}";
  }
}
