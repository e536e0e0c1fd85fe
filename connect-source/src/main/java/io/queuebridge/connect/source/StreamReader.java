package io.queuebridge.connect.source;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.errors.InvalidOffsetException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a stream by offset, without claims: {@code readBatch} from the position, every message
 * once, in offset order.
 *
 * <p><b>Position.</b> Chosen once at start: Connect's stored offset, else the stream group's
 * committed offset, else the configured start position. A position past the tail is refused (the
 * queue was recreated or the store replaced: silently waiting there would skip new messages); one
 * below the head is raised to it with a warning (retention removed messages before they were
 * delivered).
 *
 * <p><b>Progress.</b> Every offset handed over is registered with an {@link OffsetTracker}; {@code
 * commitRecord} marks it done; the housekeeping thread moves the group's cursor and committed
 * offset to the done prefix every {@code queue.commit.interval.ms} ({@link #flush}), so the group's
 * lag and retention see what Kafka accepted. Connect's own offsets are what a restart resumes from.
 *
 * <p><b>Pause.</b> Reading by offset goes around the group's claims, so the reader honours a paused
 * group itself: the housekeeping thread reads the group's pause flag with every flush, and while it
 * is set {@link #read} takes nothing and the poll waits for the next append or its timeout instead
 * of spinning.
 *
 * <p><b>Threads.</b> {@code next} and {@code pausedTail} belong to the poll thread; the tracker is
 * thread-safe; {@code flushed} belongs to the housekeeping thread, which also writes the volatile
 * {@code paused}.
 */
final class StreamReader extends QueueReader {
  private static final Logger log = LoggerFactory.getLogger(StreamReader.class);

  private final OffsetTracker tracker;
  private long next;

  /** While paused: the tail when the pause was seen, the append to wait for; else -1. */
  private long pausedTail = -1;

  private long flushed;
  private volatile boolean paused;

  private StreamReader(ReaderContext ctx, String queue, long start) {
    super(ctx, queue);
    this.next = start;
    this.tracker = new OffsetTracker(start);
    this.flushed = start;
  }

  /**
   * Picks the start position, joins the stream group there and commits it as the group's offset.
   *
   * @param connectNext the next offset Connect stored for this queue, or null
   * @throws ConnectException if the position is past the queue's tail
   * @throws io.queuebridge.core.errors.QueueException for store failures
   */
  static StreamReader open(
      ReaderContext ctx, String queue, Long connectNext, QueueSourceConfig config) {
    Optional<ConsumerGroupState> existing = ctx.groups().group(queue, ctx.group());
    long position;
    String from;
    if (connectNext != null) {
      position = connectNext;
      from = "Connect's stored offset";
    } else if (existing.isPresent()) {
      position = existing.get().committed();
      from = "the committed offset of group " + ctx.group();
    } else {
      position = configuredStart(ctx, queue, config);
      from = "start.position=" + config.startPosition().name().toLowerCase(java.util.Locale.ROOT);
    }
    long head = ctx.queues().head(queue);
    long tail = ctx.queues().tail(queue);
    if (position > tail) {
      throw new ConnectException(
          "stream '"
              + queue
              + "': the position "
              + position
              + " from "
              + from
              + " is beyond the stream's tail "
              + tail
              + " (was the stream deleted and created again, or the store replaced?). Move the"
              + " connector with the offsets REST API (stop it, PATCH or DELETE"
              + " /connectors/<name>/offsets, resume it)");
    }
    if (position < head) {
      log.warn(
          "Stream '{}': {} message(s) between offset {} ({}) and the head {} were removed by"
              + " retention before this connector delivered them",
          queue,
          head - position,
          position,
          from,
          head);
      position = head;
    }
    ctx.groups()
        .join(
            queue,
            null,
            ctx.group(),
            ctx.consumerId(),
            CursorOption.atOffset(GroupMode.STREAM, position).withAutoCommit(false));
    ctx.groups().commitOffset(queue, ctx.group(), position);
    log.info("Reading stream '{}' from offset {} ({})", queue, position, from);
    StreamReader reader = new StreamReader(ctx, queue, position);
    reader.readPaused();
    if (reader.paused) {
      log.info(
          "Stream '{}': group {} is paused; reading starts when it is resumed", queue, ctx.group());
    }
    return reader;
  }

  @Override
  int read(List<SourceRecord> out, int budget, Instant now) {
    if (paused) {
      pausedTail = Math.max(next, ctx.queues().tail(queue)); // wait for news, not what is there
      return 0;
    }
    pausedTail = -1;
    List<Message> batch = ctx.queues().readBatch(queue, next, budget);
    if (batch.isEmpty()) {
      return 0;
    }
    long first = batch.get(0).offset();
    if (first > next) {
      log.warn(
          "Stream '{}': offsets {} to {} are gone (truncated or lost in recovery); continuing at {}",
          queue,
          next,
          first - 1,
          first);
    }
    long[] offsets = new long[batch.size()];
    for (int i = 0; i < offsets.length; i++) {
      offsets[i] = batch.get(i).offset();
    }
    tracker.emitted(offsets, offsets.length);
    for (Message m : batch) {
      long offset = m.offset();
      next = offset + 1;
      if (m.isExpired(now)) {
        tracker.done(offset);
        ctx.metrics().skipped();
        continue;
      }
      SourceRecord record;
      try {
        record = ctx.factory().toRecord(sourcePartition, queue, m);
      } catch (DataException e) {
        record = poison(m, e);
        if (record == null) {
          continue;
        }
      }
      out.add(record);
    }
    return batch.size();
  }

  /** The dead letter to send instead, or null when the message is skipped. */
  private SourceRecord poison(Message m, DataException e) {
    String reason = e.getMessage();
    if (ctx.factory().hasDeadLetterTopic()) {
      ctx.metrics().dlqMove();
      log.warn(
          "Stream '{}' offset {} is poison, sending it to the Kafka dead-letter topic: {}",
          queue,
          m.offset(),
          reason);
      return ctx.factory().toDeadLetter(sourcePartition, queue, m, 1, reason);
    }
    if (ctx.toleratesErrors()) {
      log.warn(
          "Stream '{}' offset {} is poison and skipped (errors.tolerance=all): {}",
          queue,
          m.offset(),
          reason);
      tracker.done(m.offset());
      ctx.metrics().skipped();
      return null;
    }
    throw new ConnectException(
        "cannot turn offset "
            + m.offset()
            + " of stream '"
            + queue
            + "' into a Kafka record: "
            + reason
            + " (set kafka.dlq.topic to divert such messages, or errors.tolerance=all to skip"
            + " them)",
        e);
  }

  @Override
  long waitPosition() {
    return pausedTail >= 0 ? pausedTail : next;
  }

  @Override
  void committed(SourceRecord record, long nextOffset, boolean accepted) {
    tracker.done(nextOffset - 1);
  }

  @Override
  void flush() {
    boolean wasPaused = paused;
    readPaused();
    if (paused != wasPaused) {
      log.info("Stream '{}': group {} {}", queue, ctx.group(), paused ? "paused" : "resumed");
    }
    long n = tracker.committedNext();
    if (n <= flushed) {
      return;
    }
    ctx.groups().commitCursor(queue, ctx.group(), n);
    try {
      ctx.groups().commitOffset(queue, ctx.group(), n);
    } catch (InvalidOffsetException e) {
      // someone moved the group's cursor back meanwhile: the mark is informational, skip it
      log.debug("Stream '{}': not committing {} for group {}", queue, n, ctx.group(), e);
    }
    flushed = n;
  }

  /** Reads the group's pause flag from the store. */
  private void readPaused() {
    paused = ctx.groups().group(queue, ctx.group()).map(ConsumerGroupState::paused).orElse(false);
  }

  @Override
  long lag() {
    return Math.max(0, ctx.queues().tail(queue) - tracker.committedNext());
  }

  @Override
  void rejoin() {
    long position = tracker.committedNext();
    ctx.groups()
        .join(
            queue,
            null,
            ctx.group(),
            ctx.consumerId(),
            CursorOption.atOffset(GroupMode.STREAM, position).withAutoCommit(false));
  }

  /** The done prefix, for tests. */
  long committedNext() {
    return tracker.committedNext();
  }
}
