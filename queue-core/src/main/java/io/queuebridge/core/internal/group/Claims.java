package io.queuebridge.core.internal.group;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.OffsetOutOfRangeException;
import io.queuebridge.core.errors.PendingEntryNotFoundException;
import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.group.GroupSettings;
import io.queuebridge.core.group.RedeliveryListener;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.GroupOverview;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claims of queue-mode groups and the pending entry list (PEL) they fill (BEHAVIOUR Q-CLAIM,
 * Q-RETRY, Q-ACKN, L-LIMITS): claims from the cursor, work stealing of entries whose visibility
 * passed (giving up on poison, truncated and expired ones), renewals, the visibility timeout, the
 * fence lookup of a delivery's entry, removing an entry the engine gives up on, and the redelivery
 * listener.
 *
 * <p>Every method but {@link #nextRedelivery} (lock-free) expects the coordinator's lock held and
 * to run inside the store section of the group it works on; the redelivery listener is called under
 * them. Calls the two stores, {@link Members#touch} (a claim counts as a heartbeat), {@link
 * DeadLetters} and the metrics; hands out {@link ClaimedDelivery} handles of the coordinator.
 */
final class Claims {
  private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);

  private final GroupCoordinator owner;
  private final QueueStore queues;
  private final ConsumerGroupStore groups;
  private final boolean concurrent; // groups.concurrentClaims(), asked once
  private final EngineClock time;
  private final GroupSettings settings;
  private final MetricsRecorder metrics;
  private final Members members;
  private final DeadLetters deadLetters;
  private final RedeliveryListener redelivery;
  // Blocked entries made visible so far (BEHAVIOUR Q-ORDER); under the coordinator's lock.
  private final AtomicLong releasedKeys = new AtomicLong(); // keys released, ever

  Claims(
      GroupCoordinator owner,
      QueueStore queues,
      ConsumerGroupStore groups,
      boolean concurrent,
      EngineClock time,
      GroupSettings settings,
      MetricsRecorder metrics,
      Members members,
      DeadLetters deadLetters,
      RedeliveryListener redelivery) {
    this.owner = owner;
    this.queues = queues;
    this.groups = groups;
    this.concurrent = concurrent;
    this.time = time;
    this.settings = settings;
    this.metrics = metrics;
    this.members = members;
    this.deadLetters = deadLetters;
    this.redelivery = redelivery;
  }

  /**
   * Claims up to {@code n} messages into {@code out}: from the cursor, then by stealing; {@code
   * start} is the {@link System#nanoTime()} the caller took for the latency.
   *
   * @return the PEL size when the PEL cap stopped cursor claims, else -1
   */
  int claim(
      String queue, String group, String consumerId, int n, long start, List<GroupDelivery> out) {
    if (concurrent) {
      return claimConcurrently(queue, group, consumerId, n, start, out);
    }
    // The group without its pending entries: a claim's cost does not grow with the PEL (scheduled
    // messages can make it large, BEHAVIOUR Q-DELAY); stealing reads the due ones from the index.
    // A store may read the queue's configuration with it (one query fewer on a database), and the
    // claim's first read from the cursor (one round trip fewer).
    GroupOverview overview = groups.overview(queue, group, n);
    QueueConfig config =
        overview.queueConfig() != null ? overview.queueConfig() : queues.getQueue(queue);
    ConsumerGroupState g = overview.group();
    GroupCoordinator.requireMode(g, GroupMode.QUEUE);
    Instant now = time.at(start);
    members.touch(g, consumerId, now);
    if (g.paused()) {
      return -1; // a paused group hands out nothing; what its members hold stays theirs
    }
    Duration visibility = visibility(config);
    if (!config.ordering().isNone() && overview.waiting() > 0) {
      // An ordered queue (BEHAVIOUR Q-ORDER) hands out released keys first: they are older than
      // anything the cursor would read, and a released entry left waiting keeps its key busy, so
      // the cursor would block ever more messages behind it.
      int firsts = steal(config, g, g.cursor(), consumerId, n, now, visibility, out);
      if (out.size() >= n) {
        return -1;
      }
      return claimFromCursor(
              config,
              overview,
              overview.held() + firsts,
              consumerId,
              n,
              now,
              visibility,
              out,
              false)
          .pelFull();
    }
    CursorPass pass =
        claimFromCursor(
            config, overview, overview.held(), consumerId, n, now, visibility, out, false);
    if (out.size() < n) {
      steal(config, g, pass.cursor(), consumerId, n, now, visibility, out);
    }
    return pass.pelFull();
  }

  /**
   * A claim on a store whose claims are atomic by themselves ({@link
   * ConsumerGroupStore#concurrentClaims}), outside the group's section: the claimable entries first
   * ({@link ConsumerGroupStore#claimDue}); when they do not fill the claim, a read ahead from the
   * cursor in the section ({@link #readAhead}) and a second {@code claimDue}. Stealing, first
   * deliveries of scheduled messages and of read-ahead entries are all one path here.
   *
   * @return the PEL size when the PEL cap stopped the read ahead and nothing was claimed, else -1
   */
  private int claimConcurrently(
      String queue, String group, String consumerId, int n, long start, List<GroupDelivery> out) {
    GroupOverview overview = groups.overview(queue, group);
    QueueConfig config =
        overview.queueConfig() != null ? overview.queueConfig() : queues.getQueue(queue);
    ConsumerGroupState g = overview.group();
    GroupCoordinator.requireMode(g, GroupMode.QUEUE);
    Instant now = time.at(start);
    members.touch(g, consumerId, now);
    if (g.paused()) {
      return -1; // a paused group hands out nothing; what its members hold stays theirs
    }
    Duration visibility = visibility(config);
    if (overview.pending() > 0) { // else nothing is claimable: straight to the read ahead
      takeClaimable(config, g, consumerId, n, now, visibility, out);
      if (out.size() >= n) {
        return -1;
      }
    }
    int[] pelFull = {-1};
    boolean read =
        owner.lazySection(
            queue,
            group,
            () -> {
              GroupOverview fresh = groups.overview(queue, group);
              if (fresh.group().cursor() != g.cursor()) {
                return true; // another member read ahead while this one waited: take from that
              }
              CursorPass pass = readAhead(config, fresh, consumerId, n - out.size(), now);
              pelFull[0] = pass.pelFull();
              return pass.cursor() != g.cursor();
            });
    if (read) {
      takeClaimable(config, g, consumerId, n, now, visibility, out);
    }
    metrics.claimed(0, out.size() < n);
    return out.isEmpty() ? pelFull[0] : -1;
  }

  /**
   * Claims the claimable entries ({@link ConsumerGroupStore#claimDue}) into {@code out} until it
   * holds {@code n} or none is left, and checks each as a steal does ({@link #takeClaimed}).
   */
  private void takeClaimable(
      QueueConfig config,
      ConsumerGroupState g,
      String consumerId,
      int n,
      Instant now,
      Duration visibility,
      List<GroupDelivery> out) {
    long start = System.nanoTime();
    try {
      while (out.size() < n) {
        int want = n - out.size();
        long released = releasedKeys.get();
        List<PendingEntry> claimed =
            groups.claimDue(g.queue(), g.id(), consumerId, now, visibility, want);
        Map<Long, Message> messages = messagesOf(g.queue(), claimed);
        for (PendingEntry before : claimed) {
          PendingEntry after = before.claimedBy(consumerId, now, visibility);
          takeClaimed(config, g, before, after, messages.get(before.offset()), now, out);
        }
        if (claimed.size() < want && releasedKeys.get() == released) {
          return; // nothing more is claimable (an entry dropped on the way may release a key)
        }
      }
    } finally {
      metrics.stealLatencyNanos.add(System.nanoTime() - start);
    }
  }

  /**
   * The messages of {@code entries} by offset: one {@link QueueStore#readBatch} over their span
   * when they lie close together (entries read ahead usually are contiguous), else one read each. A
   * truncated offset has no mapping ({@link #takeClaimed} reads it again to tell).
   */
  private Map<Long, Message> messagesOf(String queue, List<PendingEntry> entries) {
    Map<Long, Message> out = new HashMap<>(entries.size() * 2);
    if (entries.isEmpty()) {
      return out;
    }
    long low = Long.MAX_VALUE;
    long high = Long.MIN_VALUE;
    for (PendingEntry e : entries) {
      low = Math.min(low, e.offset());
      high = Math.max(high, e.offset());
    }
    long span = high - low + 1;
    if (span <= 2L * entries.size() + 8) {
      for (Message m : queues.readBatch(queue, low, (int) span)) {
        out.put(m.offset(), m);
      }
    }
    return out;
  }

  /** What a claimable entry turns out to be once its message is read ({@link #judge}). */
  private enum Verdict {
    /** Its offset was truncated: drop the entry. */
    TRUNCATED,
    /** Delivered too often or for too long: dead-letter it. */
    POISON,
    /** Its message expired: drop the entry. */
    EXPIRED,
    /** The group's filter rejects its routing key: leave it. */
    FILTERED,
    /** A keyed scheduled message released before its own due time: schedule it for then. */
    EARLY,
    /** Hand it out. */
    DELIVER
  }

  /** An entry's {@link Verdict}, with its message (null when truncated) and the reason or time. */
  private record Judged(Verdict verdict, Message message, String poison, Instant due) {}

  /**
   * Reads the message of a claimable entry ({@code read} when the caller read it already) and
   * judges it; {@code filter} applies the group's routing-key filter (entries the read ahead
   * recorded matched it already).
   */
  private Judged judge(
      QueueConfig config,
      ConsumerGroupState g,
      PendingEntry e,
      Message read,
      Instant now,
      boolean filter) {
    Message m;
    try {
      m = read != null ? read : queues.read(g.queue(), e.offset());
    } catch (OffsetOutOfRangeException gone) {
      LOG.warn(
          "pending offset {} of group {} on queue {} was truncated; dropping the entry",
          e.offset(),
          g.id(),
          g.queue());
      return new Judged(Verdict.TRUNCATED, null, null, null);
    }
    boolean scheduled = e.isScheduled();
    String poison = scheduled ? null : deadLetters.exhausted(config, e, now);
    if (poison != null) {
      return new Judged(Verdict.POISON, m, poison, null);
    }
    if (m.isExpired(now)) {
      return new Judged(Verdict.EXPIRED, m, null, null);
    }
    if (filter && !RoutingKeys.matches(g.pattern(), g.queue(), m.topic())) {
      return new Judged(Verdict.FILTERED, m, null, null);
    }
    if (scheduled) {
      // Only a keyed entry can be here before its due time: a key's release makes its blocked
      // entry visible at once. Any other scheduled entry is indexed at its due time, so it is due;
      // reading the due time again would parse the message's property for nothing.
      Instant due = e.hasOrderKey() ? m.deliverAt() : null;
      if (due != null && due.isAfter(now)) {
        return new Judged(Verdict.EARLY, m, null, due); // released by its key (BEHAVIOUR Q-ORDER)
      }
    }
    return new Judged(Verdict.DELIVER, m, null, null);
  }

  /**
   * One entry {@link ConsumerGroupStore#claimDue} moved to the claimer ({@code before} as it was,
   * {@code after} as it is now), outside the group's section: handed out unless {@link #judge} says
   * otherwise; a poison entry is dead-lettered and an early one scheduled again in the section,
   * each only while the claimer still holds it.
   */
  private void takeClaimed(
      QueueConfig config,
      ConsumerGroupState g,
      PendingEntry before,
      PendingEntry after,
      Message read,
      Instant now,
      List<GroupDelivery> out) {
    String queue = g.queue();
    boolean scheduled = before.isScheduled();
    Judged j = judge(config, g, before, read, now, false);
    switch (j.verdict()) {
      case TRUNCATED -> {
        dropClaimed(queue, g.id(), after, now);
        metrics.discarded.increment();
      }
      case POISON -> {
        try {
          owner.section(
              queue,
              g.id(),
              () -> {
                if (heldNow(queue, g.id(), after)) {
                  deadLetters.deadLetter(config, g.id(), before, j.message(), j.poison(), now);
                  release(queue, g.id(), after, now);
                }
                return null;
              });
        } catch (QueueException failed) {
          LOG.warn(
              "cannot dead-letter poison offset {} of group {} on queue {}; it stays pending",
              before.offset(),
              g.id(),
              queue,
              failed);
        }
        metrics.stealAttempt(false);
      }
      case EXPIRED -> {
        dropClaimed(queue, g.id(), after, now);
        metrics.discarded.increment();
        if (!scheduled) {
          metrics.stealAttempt(false);
        }
      }
      case EARLY -> {
        owner.section(
            queue,
            g.id(),
            () -> {
              if (heldNow(queue, g.id(), after)) {
                groups.updatePending(queue, g.id(), before.withVisibleAt(j.due()));
              }
              return null;
            });
        redeliveryDue(queue, g.id(), j.due());
      }
      case FILTERED, DELIVER -> {
        if (scheduled) {
          metrics.claimed(1, false);
        } else {
          metrics.stealAttempt(true);
        }
        out.add(delivery(g, after, j.message()));
        redeliveryDue(queue, g.id(), after.visibleAt());
      }
    }
  }

  /** Whether {@code e} is still stored as it is: the same holder and delivery count. */
  private boolean heldNow(String queue, String group, PendingEntry e) {
    return held(queue, group, e.offset(), e.consumerId(), e.deliveryCount()).isPresent();
  }

  /** The group's entry at {@code offset} if {@code consumerId} holds it at {@code deliveries}. */
  private Optional<PendingEntry> held(
      String queue, String group, long offset, String consumerId, int deliveries) {
    return groups
        .findPending(queue, group, offset)
        .filter(p -> p.consumerId().equals(consumerId) && p.deliveryCount() == deliveries);
  }

  /** {@link #release}, ignoring an entry that no longer is the claimer's (a steal took it). */
  /**
   * {@link #releaseQuietly} for an entry a claim took outside the section: a keyed entry in the
   * section, since releasing its key's next entry must not interleave with a read ahead that blocks
   * a new message behind the key (as keyed acks settle).
   */
  private void dropClaimed(String queue, String group, PendingEntry e, Instant now) {
    if (e.hasOrderKey()) {
      owner.section(
          queue,
          group,
          () -> {
            releaseQuietly(queue, group, e, now);
            return null;
          });
    } else {
      releaseQuietly(queue, group, e, now);
    }
  }

  private void releaseQuietly(String queue, String group, PendingEntry e, Instant now) {
    try {
      release(queue, group, e, now);
    } catch (PendingEntryNotFoundException stolen) {
      LOG.debug(
          "offset {} of group {} on queue {} moved on before it was dropped",
          e.offset(),
          group,
          queue);
    }
  }

  /**
   * Reads up to a chunk of messages from the cursor into the PEL as ready entries (claimable at
   * once, no holder yet), blocked and scheduled ones as a claim from the cursor records them, and
   * moves the cursor past them: one {@link ConsumerGroupStore#claimPending} call. Runs in the
   * group's section. The chunk is {@code max(4 × wanted, 512)} messages, so the section is entered
   * once per several claims.
   */
  private CursorPass readAhead(
      QueueConfig config, GroupOverview overview, String consumerId, int wanted, Instant now) {
    int chunk = Math.min(GroupCoordinator.SCAN_LIMIT, Math.max(4 * wanted, READ_AHEAD));
    List<GroupDelivery> none = new ArrayList<>(0);
    return claimFromCursor(
        config, overview, overview.held(), consumerId, chunk, now, Duration.ZERO, none, true);
  }

  /** The least a read ahead takes from the cursor. */
  static final int READ_AHEAD = 512;

  /**
   * What a claim from the cursor did: the PEL size when the cap stopped it (else -1), and the
   * group's cursor afterwards.
   */
  private record CursorPass(int pelFull, long cursor) {}

  private CursorPass claimFromCursor(
      QueueConfig config,
      GroupOverview overview,
      int heldBefore,
      String consumerId,
      int n,
      Instant now,
      Duration visibility,
      List<GroupDelivery> out,
      boolean ahead) {
    ConsumerGroupState g = overview.group();
    String queue = g.queue();
    int max = settings.maxPelSize();
    // Scheduled entries (not due when read, BEHAVIOUR Q-DELAY) do not count against the cap.
    int pelSize = heldBefore;
    // No head() or tail() call: readBatch raises a start below the head and ends at the tail, and
    // the messages carry their offsets (two store calls fewer per claim; two queries on a
    // database).
    long cursor = g.cursor();
    // After a rewind the cursor can be below offsets the group holds: never claim those twice.
    Set<Long> held = null;
    if (overview.highestPendingOffset() >= cursor) {
      held = new HashSet<>();
      for (PendingEntry e : groups.getAllPending(queue, g.id())) {
        if (e.offset() >= cursor) {
          held.add(e.offset());
        }
      }
    }
    int claimed = 0;
    int wanted = n - out.size(); // a steal before may have filled part of the claim
    int examined = 0;
    int scheduled = 0;
    int blocked = 0;
    Instant firstDue = null;
    // An ordered queue (BEHAVIOUR Q-ORDER): the keys with an entry, in the store or taken by this
    // pass; a message of such a key waits, blocked, for the entries of its key before it.
    OrderingKey ordering = config.ordering();
    Set<String> busy = ordering.isNone() ? null : new HashSet<>();
    boolean full = false;
    Instant visibleAt = now.plus(visibility);
    List<PendingEntry> entries = new ArrayList<>(Math.min(n, 64));
    List<Message> fromCursor = overview.fromCursor();
    scan:
    while (claimed < wanted && examined < GroupCoordinator.SCAN_LIMIT) {
      if (max > 0 && pelSize >= max) {
        full = true;
        break;
      }
      int limit = Math.min(wanted - claimed, GroupCoordinator.SCAN_LIMIT);
      List<Message> chunk =
          fromCursor != null && cursor == g.cursor() && limit == overview.fromCursorLimit()
              ? fromCursor // read with the overview: the same call's answer
              : queues.readBatch(queue, cursor, limit);
      fromCursor = null;
      if (chunk.isEmpty()) {
        if (examined == 0) {
          cursor = Math.max(cursor, queues.head(queue)); // nothing to read: skip what was truncated
        }
        break;
      }
      String[] keys = busy == null ? null : keysOf(ordering, chunk, g, busy);
      for (int i = 0; i < chunk.size(); i++) {
        Message m = chunk.get(i);
        examined++;
        cursor = m.offset() + 1;
        if ((held != null && held.contains(m.offset()))
            || m.isExpired(now)
            || !RoutingKeys.matches(g.pattern(), queue, m.topic())) {
          continue;
        }
        String key = keys == null || keys[i] == null ? "" : keys[i];
        if (!key.isEmpty() && !busy.add(key)) {
          // An earlier message of its key is pending: made visible when that one is settled.
          entries.add(PendingEntry.blocked(m.offset(), now, key));
          blocked++;
          continue;
        }
        Instant due = m.deliverAt();
        if (due != null && due.isAfter(now)) {
          // Not due: the group has read it, no member holds it; a claim at its due time takes it
          // from the due index (BEHAVIOUR Q-DELAY).
          entries.add(PendingEntry.scheduled(m.offset(), now, due).withOrderKey(key));
          scheduled++;
          if (firstDue == null || due.isBefore(firstDue)) {
            firstDue = due;
          }
          continue;
        }
        if (ahead) {
          // read ahead: claimable at once by any member (ConsumerGroupStore#claimDue)
          entries.add(PendingEntry.scheduled(m.offset(), now, now).withOrderKey(key));
        } else {
          PendingEntry e = new PendingEntry(m.offset(), consumerId, now, 1, now, visibleAt, key);
          entries.add(e);
          out.add(delivery(g, e, m));
        }
        pelSize++;
        claimed++;
        if (claimed >= wanted) {
          break scan;
        }
        if (max > 0 && pelSize >= max) {
          full = true;
          break scan;
        }
      }
    }
    if (!entries.isEmpty() || cursor != g.cursor()) {
      // one store call for the whole batch: the entries and the cursor
      groups.claimPending(queue, g.id(), entries, cursor, now);
      metrics.pelChanged(claimed + scheduled + blocked);
    }
    if (claimed > 0 && !ahead) {
      redeliveryDue(queue, g.id(), visibleAt);
    }
    metrics.blocked.add(blocked);
    if (firstDue != null) {
      metrics.scheduled(scheduled);
      redeliveryDue(queue, g.id(), firstDue); // wake a consumer when the first one is due
    }
    if (!ahead) {
      metrics.claimed(claimed, claimed < wanted);
    }
    return new CursorPass(full ? pelSize : -1, cursor);
  }

  /**
   * The ordering keys of {@code chunk}'s messages (null where a message has none), and adds to
   * {@code busy} those the group has an entry of: one store call per chunk.
   */
  private String[] keysOf(
      OrderingKey ordering, List<Message> chunk, ConsumerGroupState g, Set<String> busy) {
    String[] keys = new String[chunk.size()];
    // A list, duplicates and all: the store looks each up in its index; a set here would hash
    // every key once more (a key taken by an earlier chunk of the pass is asked again, harmlessly).
    List<String> lookup = new ArrayList<>(keys.length);
    for (int i = 0; i < keys.length; i++) {
      String k = ordering.keyOf(chunk.get(i));
      keys[i] = k;
      if (k != null) {
        lookup.add(k);
      }
    }
    if (!lookup.isEmpty()) {
      busy.addAll(groups.firstPendingByKey(g.queue(), g.id(), lookup).keySet());
    }
    return keys;
  }

  /**
   * Work stealing and due scheduled messages: the entries claimable now, earliest first, from the
   * store's due index ({@link ConsumerGroupStore#duePending}), page by page past the ones it skips.
   *
   * @return the scheduled entries that became first deliveries
   */
  private int steal(
      QueueConfig config,
      ConsumerGroupState g,
      long cursor,
      String consumerId,
      int n,
      Instant now,
      Duration visibility,
      List<GroupDelivery> out) {
    long start = System.nanoTime();
    String queue = g.queue();
    try {
      // Scheduled entries now due become first deliveries, all recorded in one store call at the
      // end (as a claim from the cursor records its batch); stolen entries move one by one.
      List<PendingEntry> firsts = new ArrayList<>();
      PendingEntry after = null;
      long released = releasedKeys.get();
      pages:
      while (out.size() < n) {
        int page = Math.max(STEAL_PAGE, n - out.size());
        List<PendingEntry> due = groups.duePending(queue, g.id(), now, after, page);
        for (PendingEntry e : due) {
          if (out.size() >= n) {
            break pages;
          }
          after = e;
          takeDue(config, g, consumerId, e, now, visibility, firsts, out);
        }
        if (due.size() < page) {
          if (releasedKeys.get() == released) {
            break; // nothing more is due
          }
          released = releasedKeys.get(); // an entry dropped on the way released its key's next one
        }
      }
      if (!firsts.isEmpty()) {
        groups.claimPending(queue, g.id(), firsts, cursor, now);
        metrics.claimed(firsts.size(), false);
        redeliveryDue(queue, g.id(), now.plus(visibility));
      }
      return firsts.size();
    } finally {
      metrics.stealLatencyNanos.add(System.nanoTime() - start);
    }
  }

  /** Entries read per {@link ConsumerGroupStore#duePending} call of a steal. */
  private static final int STEAL_PAGE = 64;

  /**
   * One entry claimable at {@code now}, in the group's section: a scheduled message becomes a first
   * delivery (added to {@code firsts} for the caller to record); a held entry is stolen, unless
   * {@link #judge} says otherwise.
   */
  private void takeDue(
      QueueConfig config,
      ConsumerGroupState g,
      String consumerId,
      PendingEntry e,
      Instant now,
      Duration visibility,
      List<PendingEntry> firsts,
      List<GroupDelivery> out) {
    String queue = g.queue();
    boolean scheduled = e.isScheduled();
    Judged j = judge(config, g, e, null, now, true);
    switch (j.verdict()) {
      case TRUNCATED -> {
        release(queue, g.id(), e, now);
        metrics.discarded.increment();
        metrics.stealAttempt(false);
      }
      case POISON -> {
        boolean deadLettered = false;
        try {
          deadLetters.deadLetter(config, g.id(), e, j.message(), j.poison(), now);
          deadLettered = true;
        } catch (QueueException failed) {
          LOG.warn(
              "cannot dead-letter poison offset {} of group {} on queue {}; it stays pending",
              e.offset(),
              g.id(),
              queue,
              failed);
        }
        if (deadLettered) {
          release(queue, g.id(), e, now);
        }
        metrics.stealAttempt(false);
      }
      case EXPIRED, FILTERED -> {
        if (j.verdict() == Verdict.EXPIRED) {
          release(queue, g.id(), e, now);
          metrics.discarded.increment();
        }
        if (!scheduled) {
          metrics.stealAttempt(false);
        }
      }
      case EARLY -> {
        groups.updatePending(queue, g.id(), e.withVisibleAt(j.due()));
        redeliveryDue(queue, g.id(), j.due());
      }
      case DELIVER -> {
        if (scheduled) {
          // due now: its first delivery, as a claim from the cursor would have made it
          PendingEntry first =
              new PendingEntry(
                  e.offset(), consumerId, now, 1, now, now.plus(visibility), e.orderKey());
          firsts.add(first); // recorded by the caller, with the others, in one store call
          out.add(delivery(g, first, j.message()));
        } else {
          PendingEntry moved =
              groups.transferPending(
                  queue, g.id(), e.offset(), e.consumerId(), consumerId, now, visibility);
          out.add(delivery(g, moved, j.message()));
          metrics.stealAttempt(true);
          redeliveryDue(queue, g.id(), moved.visibleAt());
        }
      }
    }
  }

  private GroupDelivery delivery(ConsumerGroupState g, PendingEntry e, Message m) {
    return new ClaimedDelivery(
        owner,
        g.queue(),
        g.id(),
        e.consumerId(),
        GroupMode.QUEUE,
        e.deliveryCount(),
        m,
        e.claimedAt(),
        e.firstClaimedAt(),
        null,
        0,
        e.orderKey());
  }

  /** Extends the visibility of the entries at {@code offsets} the consumer holds. */
  int renew(String queue, String group, String consumerId, long[] offsets) {
    QueueConfig config = queues.getQueue(queue);
    ConsumerGroupState g = groups.getGroup(queue, group);
    GroupCoordinator.requireMode(g, GroupMode.QUEUE);
    Instant now = time.now();
    Instant visibleAt = now.plus(visibility(config));
    int renewed = 0;
    for (long offset : offsets) {
      Optional<PendingEntry> e = g.pendingAt(offset);
      if (e.isPresent() && e.get().consumerId().equals(consumerId)) {
        groups.updatePending(queue, group, e.get().withVisibleAt(visibleAt));
        renewed++;
      }
    }
    if (renewed > 0) {
      redeliveryDue(queue, group, visibleAt);
    }
    return renewed;
  }

  /**
   * {@link GroupDelivery#renew()}: extends the visibility of the entry the delivery holds; false if
   * a settlement of it started or succeeded, or it no longer holds the entry.
   */
  boolean renewDelivery(ClaimedDelivery d) {
    if (!d.isUnsettled()) {
      return false; // a settlement started (it has set its own visibility) or succeeded
    }
    Optional<PendingEntry> held = heldEntry(d);
    if (held.isEmpty()) {
      return false;
    }
    Instant visibleAt = time.now().plus(visibility(queues.getQueue(d.queue())));
    groups.updatePending(d.queue(), d.group(), held.get().withVisibleAt(visibleAt));
    redeliveryDue(d.queue(), d.group(), visibleAt);
    return true;
  }

  /**
   * The group's entry for the delivery, if this very delivery still holds it: the same consumer and
   * delivery count (BEHAVIOUR Q-SETTLE).
   */
  Optional<PendingEntry> heldEntry(ClaimedDelivery d) {
    return held(d.queue(), d.group(), d.offset(), d.consumerId(), d.deliveryCount());
  }

  /**
   * Removes an entry the engine gives up on (dead-lettered, dropped, truncated, expired) and
   * advances the committed offset (BEHAVIOUR Q-ACKN), in one store call.
   */
  void release(String queue, String group, PendingEntry e, Instant now) {
    groups.acknowledgePending(queue, group, e.consumerId(), e.offset(), e.deliveryCount(), now);
    metrics.pelChanged(-1);
    if (e.hasOrderKey() && !e.isBlocked()) {
      keysSettled(queue, group, List.of(e.orderKey()), now);
    }
  }

  /**
   * After an entry of each of {@code keys} that was not blocked left the group (acked, rejected,
   * dead-lettered, dropped): makes each key's next entry visible at {@code now} if it is blocked
   * (BEHAVIOUR Q-ORDER), in one store call for them all ({@link
   * ConsumerGroupStore#releaseBlocked}). A claim then takes them from the due index as first
   * deliveries.
   */
  void keysSettled(String queue, String group, Collection<String> keys, Instant now) {
    int released = groups.releaseBlocked(queue, group, keys, now).size();
    if (released > 0) {
      releasedKeys.addAndGet(released);
      redeliveryDue(queue, group, now);
    }
  }

  /**
   * The visibility timeout: {@link GroupSettings#visibilityTimeout()} or, when that is zero, the
   * queue's {@code deliveryTimeout} (BEHAVIOUR L-LIMITS).
   */
  Duration visibility(QueueConfig config) {
    Duration v = settings.visibilityTimeout();
    return v.isZero() ? config.deliveryTimeout() : v;
  }

  /** Tells the redelivery listener; a failure of the listener is logged and ignored. */
  void redeliveryDue(String queue, String group, Instant visibleAt) {
    try {
      redelivery.redeliveryDue(queue, group, visibleAt);
    } catch (RuntimeException e) {
      LOG.warn("redelivery listener failed for group {} on {}", group, queue, e);
    }
  }

  /**
   * The earliest time after {@code after} at which a pending entry of a queue-mode group of {@code
   * queue} becomes claimable again, or empty when none will ({@link
   * ConsumerGroupStore#nextVisible}: from the stores' due indexes, not a scan of every entry).
   * Lock-free.
   */
  Optional<Instant> nextRedelivery(String queue, Instant after) {
    return groups.nextVisible(queue, after);
  }
}
