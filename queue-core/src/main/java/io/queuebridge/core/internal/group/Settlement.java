package io.queuebridge.core.internal.group;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.MessageNotPendingException;
import io.queuebridge.core.errors.PendingEntryNotFoundException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settling deliveries (BEHAVIOUR Q-SETTLE, Q-ACKN, Q-RETRY, Q-DLQ): ack, batch ack, nack and
 * reject, each fenced to the delivery that created the pending entry (the same consumer and
 * delivery count); in stream mode an ack or reject checkpoints instead.
 *
 * <p>{@link #ack}, {@link #ackAll}, {@link #nack} and {@link #reject} expect the coordinator's lock
 * held, inside the store section of the delivery's group; the static steps of a batch ack run
 * around that section, without the lock. The settle-once state of each handle is {@link
 * ClaimedDelivery}'s. Calls the two stores, {@link Claims} (fence lookup, visibility, removing an
 * entry given up), {@link DeadLetters}, {@link StreamCursors} (checkpoints) and the metrics.
 */
final class Settlement {
  private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);

  private static final ClaimedDelivery[] NONE = new ClaimedDelivery[0];

  /** {@link #ackAll}'s per-delivery states. */
  private static final byte SKIPPED = 0; // its settlement had started or succeeded: not ours

  private static final byte OWNED = 1; // ours to settle, not (yet) acked
  private static final byte GATHERED = 2; // in the holder batch being sent to the store
  private static final byte ACKED = 3;
  private static final byte REFUSED = 4; // no longer held by this delivery: nothing changed

  private final GroupCoordinator owner;
  private final QueueStore queues;
  private final ConsumerGroupStore groups;
  private final EngineClock time;
  private final MetricsRecorder metrics;
  private final Claims claims;
  private final DeadLetters deadLetters;
  private final StreamCursors cursors;

  Settlement(
      GroupCoordinator owner,
      QueueStore queues,
      ConsumerGroupStore groups,
      EngineClock time,
      MetricsRecorder metrics,
      Claims claims,
      DeadLetters deadLetters,
      StreamCursors cursors) {
    this.owner = owner;
    this.queues = queues;
    this.groups = groups;
    this.time = time;
    this.metrics = metrics;
    this.claims = claims;
    this.deadLetters = deadLetters;
    this.cursors = cursors;
  }

  /** Acks one delivery; {@code start} is the {@link System#nanoTime()} taken for the latency. */
  Void ack(ClaimedDelivery d, long start) {
    Instant now = time.at(start);
    if (d.mode() == GroupMode.STREAM) {
      cursors.checkpoint(d.queue(), d.group(), d.offset() + 1, now);
    } else {
      remove(d.queue(), d.group(), d.consumerId(), d.offset(), d.deliveryCount(), now);
      if (!d.orderKey().isEmpty()) {
        claims.keysSettled(d.queue(), d.group(), List.of(d.orderKey()), now); // Q-ORDER
      }
    }
    metrics.acks.increment();
    return null;
  }

  /**
   * Removes the entry a delivery holds, fenced by consumer and delivery count, and advances the
   * committed offset.
   *
   * @throws MessageNotPendingException if the delivery no longer holds it
   */
  private void remove(
      String queue, String group, String consumerId, long offset, int count, Instant now) {
    try {
      groups.acknowledgePending(queue, group, consumerId, offset, count, now);
    } catch (PendingEntryNotFoundException stale) {
      throw new MessageNotPendingException(queue, group, offset);
    }
    metrics.pelChanged(-1);
  }

  // ---------------------------------------------------------------- batch ack

  /**
   * The deliveries of a batch ack, checked: none null, all handed out by the coordinator {@code
   * owner} for one group. Empty when the batch is.
   */
  ClaimedDelivery[] batchOf(Collection<GroupDelivery> deliveries) {
    Objects.requireNonNull(deliveries, "deliveries");
    GroupDelivery[] given = deliveries.toArray(new GroupDelivery[0]);
    if (given.length == 0) {
      return NONE;
    }
    for (int i = 0; i < given.length; i++) {
      if (given[i] == null) {
        throw new NullPointerException("delivery " + i + " of the batch is null");
      }
    }
    String queue = given[0].queue();
    String group = given[0].group();
    ClaimedDelivery[] batch = new ClaimedDelivery[given.length];
    for (int i = 0; i < given.length; i++) {
      GroupDelivery d = given[i];
      boolean ours = d instanceof ClaimedDelivery c && c.coordinator() == owner;
      if (!ours || !d.queue().equals(queue) || !d.group().equals(group)) {
        throw new IllegalArgumentException(
            "ackAll settles deliveries of one group of this coordinator: delivery "
                + i
                + " is "
                + d
                + (!ours ? " of another coordinator" : "")
                + ", expected group "
                + group
                + " of queue "
                + queue);
      }
      batch[i] = (ClaimedDelivery) d;
    }
    return batch;
  }

  /** Begins settling every delivery of the batch it can; the states to pass on. */
  static byte[] beginSettling(ClaimedDelivery[] batch) {
    byte[] state = new byte[batch.length]; // SKIPPED, or OWNED then ACKED or REFUSED
    for (int i = 0; i < batch.length; i++) {
      state[i] = batch[i].beginSettling() ? OWNED : SKIPPED;
    }
    return state;
  }

  /**
   * The batch ack's section: acks the deliveries it owns, one fenced store call per holder, and
   * moves them to {@code ACKED}; {@code start} is the {@link System#nanoTime()} taken for the
   * latency.
   */
  Void ackAll(String queue, String group, ClaimedDelivery[] batch, byte[] state, long start) {
    Instant now = time.at(start);
    long checkpoint = -1;
    int removed = 0;
    int count = 0;
    int[] index = null;
    List<String> settledKeys = null;
    for (int i = 0; i < batch.length; i++) {
      ClaimedDelivery d = batch[i];
      if (state[i] != OWNED) {
        continue;
      }
      if (d.mode() == GroupMode.STREAM) {
        checkpoint = Math.max(checkpoint, d.offset() + 1);
        state[i] = ACKED;
        count++;
        continue;
      }
      // One fenced store call for every delivery of this holder (usually the whole batch).
      String holder = d.consumerId();
      if (index == null) {
        index = new int[batch.length];
      }
      int n = 0;
      for (int j = i; j < batch.length; j++) {
        GroupDelivery e = batch[j];
        if (state[j] == OWNED && e.mode() == GroupMode.QUEUE && e.consumerId().equals(holder)) {
          state[j] = GATHERED;
          index[n++] = j;
        }
      }
      long[] offsets = new long[n];
      int[] counts = new int[n];
      for (int k = 0; k < n; k++) {
        offsets[k] = batch[index[k]].offset();
        counts[k] = batch[index[k]].deliveryCount();
      }
      boolean[] done = new boolean[n];
      groups.acknowledgeAllPending(queue, group, holder, offsets, counts, done, now);
      for (int k = 0; k < n; k++) {
        state[index[k]] = done[k] ? ACKED : REFUSED;
        if (done[k]) {
          removed++;
          count++;
          String key = batch[index[k]].orderKey();
          if (!key.isEmpty()) {
            if (settledKeys == null) {
              settledKeys = new ArrayList<>();
            }
            settledKeys.add(key);
          }
        }
      }
    }
    if (settledKeys != null) {
      claims.keysSettled(queue, group, settledKeys, now); // BEHAVIOUR Q-ORDER, one lookup
    }
    if (checkpoint >= 0) {
      cursors.checkpoint(queue, group, checkpoint, now);
    }
    metrics.pelChanged(-removed);
    metrics.acks.add(count);
    return null;
  }

  /**
   * Ends the settlement {@link #beginSettling} began for one delivery of the batch, if it began
   * one: settled if it was acked and the section applied, else unsettled again.
   */
  static void endSettling(ClaimedDelivery d, byte state, boolean applied) {
    if (state != SKIPPED) {
      d.endSettling(applied && state == ACKED);
    }
  }

  /** The deliveries of the batch that were not acked, in batch order. */
  static List<GroupDelivery> notAcked(ClaimedDelivery[] batch, byte[] state) {
    List<GroupDelivery> notAcked = null;
    for (int i = 0; i < batch.length; i++) {
      if (state[i] != ACKED) {
        if (notAcked == null) {
          notAcked = new ArrayList<>();
        }
        notAcked.add(batch[i]);
      }
    }
    return notAcked == null ? List.of() : notAcked;
  }

  // ---------------------------------------------------------------- nack and reject

  /**
   * Nacks a delivery: in queue mode its entry becomes claimable again after the delay or the retry
   * policy's backoff, or is dead-lettered when its retries are exhausted; a no-op in stream mode.
   */
  Void nack(ClaimedDelivery d, Duration delay) {
    if (d.mode() == GroupMode.QUEUE) {
      Instant now = time.now();
      QueueConfig config = queues.getQueue(d.queue());
      PendingEntry e = heldBy(d);
      String exhausted = deadLetters.exhausted(config, e, now);
      if (exhausted != null) {
        deadLetters.deadLetter(config, d.group(), e, d.message(), "nacked; " + exhausted, now);
        claims.release(d.queue(), d.group(), e, now);
      } else {
        Duration wait = delay != null ? delay : config.retryPolicy().backoff(e.deliveryCount());
        Instant visibleAt = now.plus(wait);
        groups.updatePending(d.queue(), d.group(), e.withVisibleAt(visibleAt));
        claims.redeliveryDue(d.queue(), d.group(), visibleAt);
      }
    }
    metrics.nacks.increment();
    return null;
  }

  /**
   * Rejects a delivery: in queue mode its message is dead-lettered with the reason (dropped when
   * the queue has no DLQ) and its entry removed; in stream mode the cursor and committed offset
   * move past it.
   */
  Void reject(ClaimedDelivery d, String reason) {
    Instant now = time.now();
    if (d.mode() == GroupMode.STREAM) {
      cursors.movePast(d.queue(), d.group(), d.offset(), now);
      LOG.debug(
          "stream group {} on queue {} rejected offset {}: {}",
          d.group(),
          d.queue(),
          d.offset(),
          reason);
    } else {
      PendingEntry e = heldBy(d);
      QueueConfig config = queues.getQueue(d.queue());
      if (config.dlq().enabled()) {
        deadLetters.deadLetter(config, d.group(), e, d.message(), "rejected: " + reason, now);
      } else {
        LOG.debug(
            "group {} on queue {} rejected offset {} ({}); no dead-letter queue, dropped",
            d.group(),
            d.queue(),
            d.offset(),
            reason);
        metrics.discarded.increment();
      }
      claims.release(d.queue(), d.group(), e, now);
    }
    metrics.rejects.increment();
    return null;
  }

  /** The group's entry for the delivery, if this very delivery still holds it. */
  private PendingEntry heldBy(ClaimedDelivery d) {
    return claims
        .heldEntry(d)
        .orElseThrow(() -> new MessageNotPendingException(d.queue(), d.group(), d.offset()));
  }
}
