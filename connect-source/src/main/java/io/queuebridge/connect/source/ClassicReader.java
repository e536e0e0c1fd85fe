package io.queuebridge.connect.source;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.ConsumerNotFoundException;
import io.queuebridge.core.errors.DeliveryAlreadySettledException;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.MessageNotPendingException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.Message;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a classic queue through claims: the task joins the consumer group in queue mode and claims
 * batches ({@code claimBatch}), within the task's in-flight budget. Every claimed message stays
 * pending in the group until Kafka accepted its record; then {@code commitRecord} hands the
 * delivery to the housekeeping thread, which acknowledges it ({@link #settle}). Until then the
 * housekeeping thread renews the claim ({@link #renew}) well inside the visibility timeout, so a
 * slow Kafka never makes the group redeliver a message that is on its way.
 *
 * <p><b>Poison.</b> A delivery whose count exceeds {@code max.deliveries}, or whose message cannot
 * become a record, is rejected into the queue's dead-letter queue with the reason — after Kafka
 * accepted its copy in the Kafka dead-letter topic when one is configured, at once otherwise.
 *
 * <p><b>Start.</b> The group's own state (cursor, claims) is the truth for a classic queue: an
 * existing group resumes. Only a new group is positioned: at Connect's stored offset if there is
 * one (e.g. after {@code alterOffsets}), else at the configured start position.
 *
 * <p><b>Threads.</b> The pending map is concurrent; {@link #read} (poll thread) adds, {@link
 * #committed} (Connect's commit thread) removes, {@link #renew} and {@link #settle} (housekeeping
 * thread) work on entries they own.
 */
final class ClassicReader extends QueueReader {
  private static final Logger log = LoggerFactory.getLogger(ClassicReader.class);

  /** Serialises "is there a group? then position it" among the tasks of this JVM. */
  private static final Object JOIN_LOCK = new Object();

  /** A claimed message handed to Connect and not yet acknowledged. */
  static final class Pending {
    final GroupDelivery delivery;
    final long bytes;
    final String poisonReason; // non-null: this is the Kafka dead-letter copy of a poison message
    volatile long renewedAtNanos;

    Pending(GroupDelivery delivery, long bytes, String poisonReason, long nowNanos) {
      this.delivery = delivery;
      this.bytes = bytes;
      this.poisonReason = poisonReason;
      this.renewedAtNanos = nowNanos;
    }
  }

  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  private final Duration visibility;
  private final Housekeeper.Settler settler;
  private long waitPosition = -1;
  private boolean blockedOnRoom;

  private ClassicReader(
      ReaderContext ctx, String queue, Duration visibility, Housekeeper.Settler settler) {
    super(ctx, queue);
    this.visibility = visibility;
    this.settler = settler;
  }

  /**
   * Joins the queue-mode group, positioning it only when it is new.
   *
   * @param connectNext the next offset Connect stored for this queue, or null
   * @param settler where acknowledgements are handed for the housekeeping thread
   * @throws io.queuebridge.core.errors.QueueException for store failures
   */
  static ClassicReader open(
      ReaderContext ctx,
      String queue,
      Long connectNext,
      QueueSourceConfig config,
      Housekeeper.Settler settler) {
    QueueConfig qc = ctx.manager().getQueue(queue);
    Duration v = ctx.groups().settings().visibilityTimeout();
    Duration visibility = v.isZero() ? qc.deliveryTimeout() : v;
    synchronized (JOIN_LOCK) {
      if (ctx.groups().group(queue, ctx.group()).isPresent()) {
        ctx.groups()
            .join(queue, null, ctx.group(), ctx.consumerId(), CursorOption.resume(GroupMode.QUEUE));
        log.info("Claiming from queue '{}' in group {} (resumed)", queue, ctx.group());
      } else {
        long position =
            connectNext != null
                ? Math.max(
                    ctx.queues().head(queue), Math.min(connectNext, ctx.queues().tail(queue)))
                : configuredStart(ctx, queue, config);
        ctx.groups()
            .join(
                queue,
                null,
                ctx.group(),
                ctx.consumerId(),
                CursorOption.atOffset(GroupMode.QUEUE, position));
        log.info(
            "Claiming from queue '{}' in new group {} from offset {} ({})",
            queue,
            ctx.group(),
            position,
            connectNext != null ? "Connect's stored offset" : "start.position");
      }
    }
    return new ClassicReader(ctx, queue, visibility, settler);
  }

  /** The visibility timeout of this queue's claims. */
  Duration visibility() {
    return visibility;
  }

  @Override
  int read(List<SourceRecord> out, int budget, Instant now) {
    int room = ctx.inFlight().room();
    int limit = Math.min(budget, room);
    blockedOnRoom = limit <= 0 && room <= 0;
    if (limit <= 0) {
      waitPosition = -1;
      return 0;
    }
    long tail = ctx.queues().tail(queue);
    List<GroupDelivery> claimed = claim(limit);
    long nowNanos = System.nanoTime();
    for (GroupDelivery d : claimed) {
      Message m = d.message();
      if (d.deliveryCount() > ctx.maxDeliveries()) {
        poison(
            d,
            "delivered "
                + d.deliveryCount()
                + " times, more than max.deliveries="
                + ctx.maxDeliveries(),
            out,
            nowNanos);
        continue;
      }
      SourceRecord record;
      try {
        record = ctx.factory().toRecord(sourcePartition, queue, m);
      } catch (DataException e) {
        poison(d, e.getMessage(), out, nowNanos);
        continue;
      }
      track(d, null, nowNanos);
      out.add(record);
    }
    waitPosition = claimed.size() < limit ? tail : -1;
    return claimed.size();
  }

  private List<GroupDelivery> claim(int limit) {
    try {
      return ctx.groups().claimBatch(queue, ctx.group(), ctx.consumerId(), limit);
    } catch (ConsumerNotFoundException | GroupNotFoundException e) {
      log.info(
          "Member {} of group {} on queue {} was removed ({}); joining again",
          ctx.consumerId(),
          ctx.group(),
          queue,
          e.getMessage());
      rejoin();
      return ctx.groups().claimBatch(queue, ctx.group(), ctx.consumerId(), limit);
    }
  }

  private void track(GroupDelivery d, String poisonReason, long nowNanos) {
    Pending p = new Pending(d, d.message().size(), poisonReason, nowNanos);
    pending.put(d.offset(), p);
    ctx.inFlight().added(p.bytes);
  }

  private void poison(GroupDelivery d, String reason, List<SourceRecord> out, long nowNanos) {
    if (ctx.factory().hasDeadLetterTopic()) {
      log.warn(
          "Queue '{}' offset {} is poison, sending it to the Kafka dead-letter topic first: {}",
          queue,
          d.offset(),
          reason);
      track(d, reason, nowNanos);
      out.add(
          ctx.factory()
              .toDeadLetter(sourcePartition, queue, d.message(), d.deliveryCount(), reason));
    } else {
      log.warn("Queue '{}' offset {} is poison, dead-lettering it: {}", queue, d.offset(), reason);
      d.reject(reason);
      ctx.metrics().dlqMove();
    }
  }

  @Override
  long waitPosition() {
    return waitPosition;
  }

  @Override
  boolean blockedOnRoom() {
    return blockedOnRoom;
  }

  @Override
  void committed(SourceRecord record, long next, boolean accepted) {
    Pending p = pending.remove(next - 1);
    if (p == null) {
      return; // already settled (a duplicate callback)
    }
    settler.settle(this, p);
  }

  /**
   * Acknowledges a delivery Kafka accepted, or rejects the poison message whose dead-letter copy it
   * accepted. Housekeeping thread.
   */
  void settle(Pending p) {
    try {
      if (p.poisonReason != null) {
        p.delivery.reject(p.poisonReason);
        ctx.metrics().dlqMove();
      } else {
        p.delivery.ack();
      }
    } catch (MessageNotPendingException | DeliveryAlreadySettledException e) {
      claimLost(p.delivery);
    } finally {
      ctx.inFlight().removed(p.bytes);
    }
  }

  /**
   * Acknowledges deliveries Kafka accepted (none of them poison) with one {@link
   * io.queuebridge.core.group.ConsumerGroups#ackAll}: one locked section for the batch the
   * housekeeper drained, with the same outcome per delivery as {@link #settle}. Housekeeping
   * thread.
   */
  void acknowledgeAll(List<Pending> accepted) {
    List<GroupDelivery> deliveries = new ArrayList<>(accepted.size());
    for (Pending p : accepted) {
      deliveries.add(p.delivery);
    }
    try {
      for (GroupDelivery lost : ctx.groups().ackAll(deliveries)) {
        claimLost(lost);
      }
    } finally {
      for (Pending p : accepted) {
        ctx.inFlight().removed(p.bytes);
      }
    }
  }

  private void claimLost(GroupDelivery d) {
    ctx.metrics().claimsLost(1);
    log.warn(
        "Queue '{}' offset {}: the claim was lost before Kafka accepted the record (it was"
            + " redelivered after the visibility timeout of {}), so it may appear twice in Kafka",
        queue,
        d.offset(),
        visibility);
  }

  /** Gives up a pending entry without acknowledging it (the task stops). */
  void release(Pending p) {
    ctx.inFlight().removed(p.bytes);
  }

  @Override
  void renew(long nowNanos, long olderThanNanos) {
    List<Pending> due = new ArrayList<>();
    for (Pending p : pending.values()) {
      if (nowNanos - p.renewedAtNanos >= olderThanNanos) {
        due.add(p);
      }
    }
    if (due.isEmpty()) {
      return;
    }
    long[] offsets = new long[due.size()];
    for (int i = 0; i < offsets.length; i++) {
      offsets[i] = due.get(i).delivery.offset();
    }
    int renewed = ctx.groups().renew(queue, ctx.group(), ctx.consumerId(), offsets);
    for (Pending p : due) {
      p.renewedAtNanos = nowNanos;
    }
    ctx.metrics().renewed(renewed);
    if (renewed < offsets.length) {
      ctx.metrics().claimsLost(offsets.length - renewed);
      log.warn(
          "Queue '{}': {} of {} in-flight claims could not be renewed (already acknowledged, or"
              + " taken over after the visibility timeout of {})",
          queue,
          offsets.length - renewed,
          offsets.length,
          visibility);
    }
  }

  /** In-flight entries, for shutdown. */
  List<Pending> drainPending() {
    List<Pending> all = new ArrayList<>(pending.values());
    pending.clear();
    return all;
  }

  @Override
  long lag() {
    return ctx.groups().lag(queue, ctx.group());
  }

  @Override
  void rejoin() {
    ctx.groups()
        .join(queue, null, ctx.group(), ctx.consumerId(), CursorOption.resume(GroupMode.QUEUE));
  }
}
