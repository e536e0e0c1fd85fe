package io.queuebridge.core.internal.group;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.Names;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.GroupModeMismatchException;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.PelFullException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.group.ConsumerRemovedListener;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.group.GroupMetrics;
import io.queuebridge.core.group.GroupSettings;
import io.queuebridge.core.group.OffsetReset;
import io.queuebridge.core.group.RedeliveryListener;
import io.queuebridge.core.group.RemovedConsumers;
import io.queuebridge.core.group.StreamBatch;
import io.queuebridge.core.message.MessageState;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.QueueStore;
import io.queuebridge.core.store.Storage;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The consumer-group engine: membership, cursors, claims with a pending entry list (PEL), work
 * stealing, retries, dead letters, stream checkpoints, retention and ephemeral-queue expiry, built
 * on the store SPI only ({@link QueueStore}, {@link ConsumerGroupStore}) and a {@link Clock}
 * (BEHAVIOUR Q-GROUP, Q-CURSOR, Q-SUB to Q-DLQ, Q-RET, Q-EPHEMERAL, Q-HEARTBEAT, Q-METRICS).
 *
 * <h2>Structure</h2>
 *
 * This class owns the lock, opens the store sections ({@link ConsumerGroupStore#atomically}), and
 * owns the clock and the metrics; it checks arguments and delegates the work, one job per class,
 * each run under the lock (and, for one group, inside that group's section) opened here: {@link
 * Members} (joins, leaves, heartbeats, the stale-member sweep, group deletion), {@link Claims}
 * (claims, stealing, renewals, the PEL and visibility), {@link Settlement} (ack, batch ack, nack,
 * reject, fencing), {@link DeadLetters} (giving up on a message, the DLQ moves), {@link
 * StreamCursors} (peeks, commits, checkpoints, the auto-commit throttle), {@link Retention} and
 * {@link EphemeralExpiry}. No job class takes the lock or opens a section itself, but for {@link
 * Claims} on the concurrent path below, which enters it through {@link #section}.
 *
 * <h2>Concurrency</h2>
 *
 * Thread-safe. Every operation that reads or changes group state runs under one lock (BEHAVIOUR
 * Q-CLAIM), so the store's read-modify-write conveniences never race on a group; store I/O (reads
 * of messages, dead-letter appends, truncation) happens under it too. The exception is a store
 * whose {@link ConsumerGroupStore#concurrentClaims()} is true (the memory store): there a
 * queue-mode claim and an ack of deliveries without an ordering key take neither the lock nor the
 * section, because each store call they make is atomic by itself; only a claim's read ahead from
 * the cursor, and the dead letter or keyed drop it may meet, enter the section. Members of one
 * group then claim and settle in parallel, in a process as across processes. {@link #lag}, {@link
 * #group}, {@link #groups} and {@link #metrics} are lock-free reads. The consumer-removed listener
 * is called after the lock is released; the {@link RedeliveryListener} under it (it must not
 * block). A heartbeat index (consumer id → group memberships, BEHAVIOUR Q-HEARTBEAT) lets {@link
 * #heartbeat(String)} refresh a client's memberships without scanning the groups.
 *
 * <p>Across processes: every operation that changes a group (join, leave, heartbeat, the stale
 * member sweep, delete, claim, renew, ack, nack, reject, peek, cursor and offset commits) also runs
 * inside {@link ConsumerGroupStore#atomically} for that group, so a store shared by several
 * processes (PostgreSQL) serialises them across all of them; with a one-process store it just runs.
 * The coordinator keeps no group state between calls — every operation re-reads the group from the
 * store inside that section — so changes made by other processes are always seen. The only
 * cross-call memory is the auto-commit throttle (per process: another process may commit on its own
 * schedule) and the metrics. The retention pass and ephemeral-queue expiry are not wrapped:
 * committed offsets only rise, so a stale floor only truncates less; expiry of an ephemeral queue
 * can race with a join in another process.
 *
 * <h2>Queue mode (competing consumers)</h2>
 *
 * <ul>
 *   <li><b>Claim</b>: from the group's cursor, skipping truncated offsets, expired messages,
 *       messages whose routing key the group's filter rejects, and offsets the group already holds
 *       (after a rewind); each claimed message gets a pending entry {@code {consumer, now, count 1,
 *       visibleAt = now + visibility}}, and the entries and the new cursor are recorded by one
 *       {@link ConsumerGroupStore#claimPending} call per claim. The PEL cap ({@code maxPelSize})
 *       stops cursor claims. A claim also counts as the member's heartbeat.
 *   <li><b>Steal</b> (topping up a batch): entries whose {@code visibleAt} has passed, oldest
 *       offset first, <em>including the claimer's own</em> (BEHAVIOUR Q-RETRY). An entry whose
 *       message is poison — {@code deliveryCount >= maxDeliveryCount}, or its retries would exceed
 *       the queue's {@code retryPolicy.maxRetries}, or {@code retryPolicy.totalTimeout} passed
 *       since its first claim — is dead-lettered (BEHAVIOUR Q-DLQ) and removed; an expired or
 *       truncated one is removed; otherwise it moves to the claimer with {@code deliveryCount + 1}.
 *       Stealing ignores the PEL cap.
 *   <li><b>Visibility</b> is {@link GroupSettings#visibilityTimeout()} or, when that is zero, the
 *       queue's {@code deliveryTimeout} (BEHAVIOUR L-LIMITS). {@link #renew} extends it for entries
 *       a member holds.
 *   <li><b>Committed offset</b> after any removal: the cursor when nothing is pending, else {@code
 *       max(committed, lowest pending offset)} (BEHAVIOUR Q-ACKN); every removal (ack, reject,
 *       poison, expiry) is one fenced {@link ConsumerGroupStore#acknowledgePending} call.
 * </ul>
 *
 * <h2>Stream mode (cursor readers)</h2>
 *
 * {@link #peek} reads from the cursor without moving it; {@link #commitCursor} moves it (and, when
 * the group auto-commits, the committed offset, at most once per {@code autoCommitInterval} per
 * group); acks checkpoint; {@link #commitOffset} sets the committed offset by hand.
 *
 * <h2>Deliberate choices</h2>
 *
 * Each item names a behaviour a simpler engine might have, and what this one does instead.
 *
 * <ol>
 *   <li><i>Nack never redelivers to the same consumer</i>: not so (BEHAVIOUR Q-RETRY). A nacked
 *       message is claimable again by every member, the nacking one included, after {@code
 *       retryPolicy.backoff(deliveryCount)} or the explicit delay; its retries are counted and
 *       exhausted retries dead-letter it at the nack. A nack does not bump the delivery count (only
 *       a new delivery does): the count is the number of deliveries.
 *   <li><i>Queue-mode reject discards</i>: not so (BEHAVIOUR Q-DLQ). Reject dead-letters with the
 *       reason when the queue's DLQ is enabled; with it disabled the message is dropped and counted
 *       as discarded.
 *   <li><i>Truncation to the tail when a queue has no queue-mode group and no policy</i>: not so
 *       (BEHAVIOUR Q-RET). A classic queue is truncated only when it has at least one queue-mode
 *       group, and then only below every such group's committed offset; its retention policy can
 *       only keep more. A stream is truncated only by its policy; stream groups never hold
 *       retention back (a stream reader that falls behind the policy loses what the policy removed,
 *       as in Kafka); queue-mode groups on a stream still do.
 *   <li><i>Unenforced config fields</i> (BEHAVIOUR Q-CONFIG): the engine enforces {@code
 *       retryPolicy} (backoff, {@code maxRetries}, {@code totalTimeout}), {@code deliveryTimeout}
 *       (as visibility), the DLQ settings, {@code batchSize} (the limit of a claim or read that
 *       asks for the default, instead of {@code claimBatchSize}) and {@code heartbeatTimeout} (the
 *       stale-member cutoff of the queue's groups, instead of {@code consumerTimeout}); zero in
 *       either defers to the engine's setting. {@code maxDepth} and {@code maxMessageSize} are the
 *       manager's; compaction is not implemented.
 *   <li><i>Unsubscribe's default group differs from stream subscribe's</i>: not so (BEHAVIOUR
 *       Q-SUB). {@link #leave} without a group id leaves whichever default group — the queue-mode
 *       prefix or the stream-mode full id — the consumer is a member of.
 *   <li><i>Ack without group id is order-dependent on mixed queues; any member may settle any
 *       offset</i>: not so; {@link GroupDelivery} handles (BEHAVIOUR Q-SETTLE) that know their
 *       group and are fenced to the delivery that created them.
 *   <li><i>Routing-key filters never match captured ordinary topics</i>: not so; such a topic is
 *       its own routing key (see {@link RoutingKeys}, BEHAVIOUR Q-ROUTE).
 *   <li><i>Explicit cursor positioning moves the whole group's cursor</i>: yes (BEHAVIOUR Q-CURSOR)
 *       — the cursor is the group's, a seek is a group seek (use another group id to read
 *       independently). Claims skip offsets the group already holds, so a rewind never hands one
 *       message to two members.
 *   <li><i>{@code a/#} group filters do not match {@code a}</i>: they do (BEHAVIOUR Q-ROUTE).
 *   <li><i>DLQ, claim and steal metrics never increment</i>: every counter counts (BEHAVIOUR
 *       Q-METRICS).
 *   <li>Store-side rules (re-indexing on update, validation, refusing to delete reserved queues,
 *       reporting missing pending entries, encoding names) and the manager's {@code stop} are not
 *       this class's; it relies only on the SPI contracts.
 * </ol>
 *
 * <p>Further deviations, each to avoid losing a message: a pending entry whose message was
 * truncated is removed (and counted discarded) instead of being skipped forever; when the dead
 * letter cannot be written the entry stays pending (a reject throws, a poison entry is retried at
 * the next steal) instead of being dropped; unregistering a member keeps its entries for stealing.
 *
 * <h2>Dead letters</h2>
 *
 * The DLQ of queue {@code q} is the queue's configured {@code dlq.topic}, else {@code
 * dlqTopicPrefix + q}; it is created on first use as a durable classic queue with filter {@code
 * <dlq>/#}, its own DLQ disabled (no chains) and no TTL. A dead letter keeps the key, value,
 * headers, timestamp and properties of the original and adds {@code x-dlq-original-queue}, {@code
 * x-dlq-original-topic}, {@code x-dlq-group}, {@code x-dlq-delivery-count}, {@code x-dlq-reason},
 * {@code x-dlq-moved-at} (UTC ISO-8601), {@code x-dlq-original-id} (when the original had an id)
 * and {@code x-dlq-original-offset}, stamped after the copied properties so they cannot be forged;
 * its topic is the DLQ name and its state {@link MessageState#DLQ}. Dead letters bypass the DLQ's
 * {@code maxDepth}: refusing one would leave the poison message in the source queue.
 */
public final class GroupCoordinator implements ConsumerGroups {
  /** Most messages one claim or peek examines, so one call never holds the lock for a long scan. */
  static final int SCAN_LIMIT = 4096;

  private final QueueStore queues;
  private final ConsumerGroupStore groups;
  private final EngineClock time;
  private final GroupSettings settings;
  private final ReentrantLock lock = new ReentrantLock();
  private final MetricsRecorder metrics;

  /** {@link ConsumerGroupStore#concurrentClaims()}, asked once. */
  private final boolean concurrent;

  private final Members members;
  private final StreamCursors cursors;
  private final DeadLetters deadLetters;
  private final Claims claims;
  private final Settlement settlement;
  private final Retention retention;
  private final EphemeralExpiry expiry;
  private final Resets resets;

  private GroupCoordinator(Builder b) {
    this.queues = b.queues;
    this.groups = b.groups;
    this.time = new EngineClock(b.clock);
    this.settings = b.settings;
    this.concurrent = groups.concurrentClaims();
    this.metrics = new MetricsRecorder(concurrent); // updated outside the lock when concurrent
    this.members = new Members(queues, groups, time, settings, metrics, b.listener);
    this.cursors =
        new StreamCursors(
            this, queues, groups, time, settings.autoCommitInterval(), metrics, members);
    this.deadLetters = new DeadLetters(queues, settings, metrics);
    this.claims =
        new Claims(
            this,
            queues,
            groups,
            concurrent,
            time,
            settings,
            metrics,
            members,
            deadLetters,
            b.redelivery);
    this.settlement =
        new Settlement(this, queues, groups, time, metrics, claims, deadLetters, cursors);
    this.retention = new Retention(queues, groups, metrics);
    this.expiry = new EphemeralExpiry(queues, groups, members, cursors);
    this.resets = new Resets(queues, groups, metrics);
    metrics.setPelSize(countPending());
    members.indexStoredMemberships();
  }

  /** A builder over a store's two halves. */
  public static Builder builder(Storage storage) {
    return new Builder(storage.queues(), storage.groups());
  }

  /** A builder over a queue store and a group store (usually the two halves of one store). */
  public static Builder builder(QueueStore queues, ConsumerGroupStore groups) {
    return new Builder(queues, groups);
  }

  @Override
  public GroupSettings settings() {
    return settings;
  }

  // ---------------------------------------------------------------- ids

  /**
   * {@code groupId} when {@code pattern} is empty, else {@code groupId@pattern} (BEHAVIOUR
   * Q-GROUP).
   */
  public static String effectiveGroupId(String groupId, String pattern) {
    Objects.requireNonNull(groupId, "groupId");
    return pattern == null || pattern.isEmpty() ? groupId : groupId + "@" + pattern;
  }

  /**
   * The group a client joins when it names none (BEHAVIOUR Q-GROUP): in queue mode the client id up
   * to its first {@code -} ({@code worker-7} → {@code worker}, so replicas of one service compete),
   * in stream mode the whole client id (each reader has its own cursor). May be empty ({@code -x}).
   */
  public static String defaultGroupId(String clientId, GroupMode mode) {
    Objects.requireNonNull(clientId, "clientId");
    if (mode == GroupMode.STREAM) {
      return clientId;
    }
    int dash = clientId.indexOf('-');
    return dash < 0 ? clientId : clientId.substring(0, dash);
  }

  // ---------------------------------------------------------------- membership

  @Override
  public ConsumerGroupState join(
      String queue, String pattern, String groupId, String consumerId, CursorOption cursor) {
    requireText("queue", queue);
    requireMemberId(consumerId);
    CursorOption c = cursor == null ? CursorOption.resume(GroupMode.QUEUE) : cursor;
    String filter = pattern == null ? "" : pattern;
    String id = Members.groupToJoin(queue, filter, groupId, consumerId, c.effectiveMode());
    return locked(queue, id, () -> members.join(queue, id, filter, consumerId, c));
  }

  @Override
  public boolean leave(String queue, String pattern, String groupId, String consumerId) {
    requireText("queue", queue);
    requireText("consumerId", consumerId);
    for (String id : Members.groupsToLeave(pattern, groupId, consumerId)) {
      Boolean left = locked(queue, id, () -> members.leave(queue, id, consumerId));
      if (left != null) {
        return left;
      }
    }
    return false;
  }

  @Override
  public void heartbeat(String queue, String group, String consumerId) {
    locked(
        queue,
        group,
        () -> {
          members.heartbeat(queue, group, consumerId);
          return null;
        });
  }

  @Override
  public int heartbeat(String clientId) {
    if (clientId == null || clientId.isEmpty()) {
      return 0;
    }
    lock.lock();
    try {
      int refreshed = 0;
      for (MembershipIndex.Membership m : members.memberships(clientId)) {
        if (groups.atomically(m.queue(), m.group(), () -> members.refresh(clientId, m))) {
          refreshed++;
        }
      }
      return refreshed;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Removes, in every group of every queue, the members whose last heartbeat is older than {@code
   * now} minus the queue's consumer timeout: its {@code heartbeatTimeout} when it sets one, else
   * {@code consumerTimeout} ({@link GroupSettings#consumerTimeout(QueueConfig)}, BEHAVIOUR
   * Q-HEARTBEAT). Their pending entries stay, to be stolen. Ephemeral queues left without members
   * get their disconnect time. The listener is told per group after the lock is released.
   *
   * @return what was removed, per group; empty when nothing was
   */
  public List<RemovedConsumers> removeStaleConsumers(Instant now) {
    Objects.requireNonNull(now, "now");
    List<RemovedConsumers> removed = new ArrayList<>();
    lock.lock();
    try {
      List<QueueConfig> configs = queues.listQueues();
      members.forgetTimeoutsExcept(configs);
      for (QueueConfig config : configs) {
        String queue = config.name();
        Instant cutoff = members.staleCutoff(config, now);
        boolean touched = false;
        for (ConsumerGroupState listed : members.groupsOf(queue)) {
          if (Members.staleMembers(listed, cutoff).isEmpty()) {
            continue;
          }
          String group = listed.id();
          List<String> stale =
              groups.atomically(queue, group, () -> members.removeStale(queue, group, cutoff));
          if (stale.isEmpty()) {
            continue;
          }
          removed.add(new RemovedConsumers(queue, group, stale));
          touched = true;
        }
        if (touched) {
          members.markDisconnectedIfIdle(queue, now);
        }
      }
    } finally {
      lock.unlock();
    }
    members.reportRemoved(removed);
    return List.copyOf(removed);
  }

  @Override
  public void deleteGroup(String queue, String group) {
    try {
      locked(
          queue,
          group,
          () -> {
            members.deleteGroup(queue, group);
            cursors.forgetAutoCommit(queue, group);
            return null;
          });
    } catch (QueueNotFoundException gone) {
      // idempotent
    }
  }

  /**
   * How long a member of a group of {@code queue} may go without a heartbeat: the queue's {@code
   * heartbeatTimeout} as this engine last saw it (a join, a stale-member sweep), else {@link
   * GroupSettings#consumerTimeout()}. Lock-free; reads no configuration, so a heartbeat loop may
   * call it every round.
   */
  public Duration consumerTimeout(String queue) {
    return members.consumerTimeout(queue);
  }

  /**
   * The shortest consumer timeout of the queues this engine has seen, at most {@link
   * GroupSettings#consumerTimeout()}: the longest a stale-member sweep may wait. Lock-free.
   */
  public Duration shortestConsumerTimeout() {
    return members.shortestConsumerTimeout();
  }

  /**
   * The batch size of {@code queue} (BEHAVIOUR Q-CONFIG): its {@code batchSize} when it sets one,
   * else {@code fallback}. Reads the queue's configuration.
   *
   * @throws QueueNotFoundException if the queue does not exist
   */
  public int batchSize(String queue, int fallback) {
    int own = queues.getQueue(queue).batchSize();
    return own > 0 ? own : fallback;
  }

  /** The heartbeat index; for tests. */
  MembershipIndex membershipIndex() {
    return members.index();
  }

  // ---------------------------------------------------------------- queue mode

  @Override
  public List<GroupDelivery> claimBatch(String queue, String group, String consumerId, int limit) {
    int n = limit > 0 ? limit : batchSize(queue, settings.claimBatchSize());
    List<GroupDelivery> out = new ArrayList<>(Math.min(n, 64));
    claim(queue, group, consumerId, n, out);
    return out;
  }

  @Override
  public Optional<GroupDelivery> claimNext(String queue, String group, String consumerId) {
    List<GroupDelivery> out = new ArrayList<>(1);
    int pelSize = claim(queue, group, consumerId, 1, out);
    if (out.isEmpty() && pelSize >= 0) {
      throw new PelFullException(queue, group, pelSize, settings.maxPelSize());
    }
    return out.isEmpty() ? Optional.empty() : Optional.of(out.get(0));
  }

  /**
   * Claims into {@code out}; returns the PEL size when the PEL cap stopped cursor claims, else -1.
   */
  private int claim(String queue, String group, String consumerId, int n, List<GroupDelivery> out) {
    requireMemberId(consumerId);
    long start = System.nanoTime();
    // A store whose claims are atomic by themselves: the claim enters the group's section only to
    // read ahead from the cursor (Claims#claimConcurrently). Elsewhere the claim's section is lazy
    // (ConsumerGroupStore#atomicallyLazy): a claim a crash loses is a redelivery, and the ack of a
    // message it handed out is durable, with the claim, when it returns.
    return timed(
        queue,
        group,
        start,
        metrics.claimLatencyNanos,
        !concurrent,
        Commit.LAZY,
        () -> claims.claim(queue, group, consumerId, n, start, out));
  }

  @Override
  public int renew(String queue, String group, String consumerId, long... offsets) {
    requireText("consumerId", consumerId);
    return locked(queue, group, () -> claims.renew(queue, group, consumerId, offsets));
  }

  /** {@link GroupDelivery#renew()}: under the lock, so it is ordered with the settlements. */
  boolean renewDelivery(ClaimedDelivery d) {
    try {
      return locked(d.queue(), d.group(), () -> claims.renewDelivery(d));
    } catch (GroupNotFoundException gone) {
      return false;
    }
  }

  /**
   * The earliest time after {@code after} at which a pending entry of a queue-mode group of {@code
   * queue} becomes claimable again, or empty when none will (a push engine re-arms its timer with
   * it). Lock-free; scans the pending entries of the queue's groups.
   *
   * @throws QueueNotFoundException if the queue does not exist
   */
  public Optional<Instant> nextRedelivery(String queue, Instant after) {
    Objects.requireNonNull(after, "after");
    return claims.nextRedelivery(queue, after);
  }

  // ---------------------------------------------------------------- settlement (from handles)

  void settleAck(ClaimedDelivery d) {
    long start = System.nanoTime();
    timed(
        d.queue(),
        d.group(),
        start,
        metrics.ackLatencyNanos,
        inSection(d.mode(), d.orderKey().isEmpty()),
        d.mode() == GroupMode.QUEUE && d.orderKey().isEmpty() ? Commit.ACK : Commit.DEFERRED,
        () -> settlement.ack(d, start));
  }

  @Override
  public List<GroupDelivery> ackAll(Collection<GroupDelivery> deliveries) {
    ClaimedDelivery[] batch = settlement.batchOf(deliveries);
    if (batch.length == 0) {
      return List.of();
    }
    String queue = batch[0].queue();
    String group = batch[0].group();
    byte[] state = Settlement.beginSettling(batch);
    boolean applied = false;
    boolean unkeyed = true;
    boolean oneHolder = true;
    for (ClaimedDelivery d : batch) {
      unkeyed &= d.orderKey().isEmpty();
      oneHolder &= d.consumerId().equals(batch[0].consumerId());
    }
    boolean section = inSection(batch[0].mode(), unkeyed);
    // one store call: a queue-mode batch without ordering keys that one member holds
    Commit commit =
        batch[0].mode() == GroupMode.QUEUE && unkeyed && oneHolder ? Commit.ACK : Commit.DEFERRED;
    try {
      long start = System.nanoTime();
      timed(
          queue,
          group,
          start,
          metrics.ackLatencyNanos,
          section,
          commit,
          () -> settlement.ackAll(queue, group, batch, state, start));
      applied = true;
    } finally {
      // a loop here, over a call small enough to be inlined on the exceptional path too: the
      // section's lambda then stays eligible for scalar replacement (GroupThroughputBenchmark)
      for (int i = 0; i < batch.length; i++) {
        Settlement.endSettling(batch[i], state[i], applied);
      }
    }
    return Settlement.notAcked(batch, state);
  }

  void settleNack(ClaimedDelivery d, Duration delay) {
    locked(d.queue(), d.group(), () -> settlement.nack(d, delay));
  }

  void settleReject(ClaimedDelivery d, String reason) {
    locked(d.queue(), d.group(), () -> settlement.reject(d, reason));
  }

  @Override
  public String deadLetterQueue(QueueConfig config) {
    return deadLetters.deadLetterQueue(config);
  }

  // ---------------------------------------------------------------- stream mode

  @Override
  public StreamBatch peek(String queue, String group, String consumerId, int limit) {
    requireText("consumerId", consumerId);
    int n = limit > 0 ? limit : batchSize(queue, settings.claimBatchSize());
    long start = System.nanoTime();
    return timed(
        queue,
        group,
        start,
        metrics.claimLatencyNanos,
        true,
        Commit.DURABLE,
        () -> cursors.peek(queue, group, consumerId, n, start));
  }

  @Override
  public void commitCursor(String queue, String group, long next) {
    locked(
        queue,
        group,
        () -> {
          cursors.commitCursor(queue, group, next);
          return null;
        });
  }

  @Override
  public void commitOffset(String queue, String group, long offset) {
    if (offset < 0) {
      throw new IllegalArgumentException(
          "offset must be >= 0 to commit group " + group + " on queue " + queue + ": " + offset);
    }
    locked(
        queue,
        group,
        () -> {
          cursors.commitOffset(queue, group, offset);
          return null;
        });
  }

  // ---------------------------------------------------------------- operator moves

  @Override
  public boolean pause(String queue, String group) {
    return setPaused(queue, group, true);
  }

  @Override
  public boolean resume(String queue, String group) {
    return setPaused(queue, group, false);
  }

  /**
   * Sets the group's pause flag in its section; a resume tells the redelivery listener that the
   * group's messages are claimable now, so push delivery does not wait for its sweep.
   */
  private boolean setPaused(String queue, String group, boolean paused) {
    return locked(
        queue,
        group,
        () -> {
          if (groups.getGroup(queue, group).paused() == paused) {
            return false;
          }
          Instant now = time.now();
          groups.setPaused(queue, group, paused, now);
          if (!paused) {
            claims.redeliveryDue(queue, group, now);
          }
          return true;
        });
  }

  @Override
  public OffsetReset planOffsetReset(String queue, String group, long offset) {
    return locked(queue, group, () -> resets.plan(queue, group, offset));
  }

  @Override
  public OffsetReset resetOffsets(String queue, String group, long offset, boolean force) {
    return locked(queue, group, () -> resets.reset(queue, group, offset, force, time.now()));
  }

  @Override
  public int movePast(String queue, long head) {
    int dropped = 0;
    for (ConsumerGroupState listed : groups.listGroups(queue)) {
      dropped +=
          locked(
              queue,
              listed.id(),
              () ->
                  groups
                      .findGroup(queue, listed.id())
                      .map(g -> resets.movePast(g, head, time.now()))
                      .orElse(0));
    }
    return dropped;
  }

  // ---------------------------------------------------------------- queries

  @Override
  public long lag(String queue, String group) {
    long committed = groups.getGroup(queue, group).committed();
    return Math.max(0, queues.tail(queue) - committed);
  }

  @Override
  public Optional<ConsumerGroupState> group(String queue, String group) {
    return groups.findGroup(queue, group);
  }

  @Override
  public List<ConsumerGroupState> groups(String queue) {
    return groups.listGroups(queue);
  }

  @Override
  public GroupMetrics metrics() {
    return metrics.snapshot();
  }

  /** Zeroes every counter except the PEL gauge and its high-water mark. */
  public void resetMetrics() {
    lock.lock();
    try {
      metrics.reset();
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- retention and expiry

  /**
   * Truncates every queue as far as its groups and retention policy allow (BEHAVIOUR Q-RET); the
   * manager schedules it. Per queue:
   *
   * <ul>
   *   <li>classic queue: nothing without a queue-mode group; else up to the lowest committed offset
   *       of its queue-mode groups, and, when a retention policy is set, no further than the policy
   *       allows ({@code min(floor, retention offset)});
   *   <li>stream: nothing without a retention policy; else up to the retention offset (and not
   *       beyond the floor of queue-mode groups, if it has any); stream-mode groups never hold it
   *       back.
   * </ul>
   *
   * The retention offset is the largest of: the time policy's store lookup of {@code now -
   * retentionTime}, the bytes policy's store lookup, and {@code tail - retentionMessages}; a store
   * that cannot look up by time or size keeps everything for that policy. Failures on one queue are
   * logged and do not stop the pass. Also re-counts the PEL gauge.
   *
   * @return the new head of every queue that was truncated
   */
  public Map<String, Long> retentionPass() {
    Instant now = time.now();
    lock.lock();
    try {
      return retention.pass(now);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Deletes the ephemeral queues (not durable, not reserved) whose last consumer left at least
   * their {@code expiresAfter} before {@code now}, with their groups (BEHAVIOUR Q-EPHEMERAL). A
   * queue that never had a consumer is never expired. A queue the store refuses to delete is
   * skipped.
   *
   * @return the deleted queues
   */
  public List<String> expireEphemeralQueues(Instant now) {
    Objects.requireNonNull(now, "now");
    lock.lock();
    try {
      return expiry.expire(now);
    } finally {
      lock.unlock();
    }
  }

  // ---------------------------------------------------------------- the lock and the sections

  /**
   * Runs {@code body} under the coordinator's lock and, through {@link
   * ConsumerGroupStore#atomically}, atomically with every other process sharing the store on the
   * group {@code (queue, group)} (BEHAVIOUR Q-CLAIM, across processes).
   */
  private <T> T locked(String queue, String group, Supplier<T> body) {
    lock.lock();
    try {
      return groups.atomically(queue, group, body);
    } finally {
      lock.unlock();
    }
  }

  /** How {@link #timed} commits its section. */
  private enum Commit {
    /** {@link ConsumerGroupStore#atomically}: durable when the section ends. */
    DURABLE,
    /** {@link ConsumerGroupStore#atomicallyLazy}: a claim, whose loss is a redelivery. */
    LAZY,
    /**
     * A settlement: {@link ConsumerGroupStore#atomicallyLazy}, then {@link
     * ConsumerGroupStore#awaitDurable} once the lock and the section are released, so that the next
     * member's section does not wait for this one's disk write and concurrent settlements share
     * one. The caller returns only when its settlement is durable.
     */
    DEFERRED,
    /**
     * {@link #DEFERRED} for a settlement that makes one store call, the ack of deliveries without
     * an ordering key that one member holds: {@link ConsumerGroupStore#atomicallyLazyAck}.
     */
    ACK
  }

  /**
   * {@link #locked} when {@code section}, committed as {@code commit} says, else {@code body}
   * alone; adds the time since {@code start} (taken before the lock) to {@code latency} when it
   * samples this operation ({@link MetricsRecorder.Latency}).
   */
  private <T> T timed(
      String queue,
      String group,
      long start,
      MetricsRecorder.Latency latency,
      boolean section,
      Commit commit,
      Supplier<T> body) {
    if (!section) {
      // a store whose claims and acks are atomic by themselves: neither the lock nor the section
      try {
        return body.get();
      } finally {
        if (latency.sample()) {
          latency.add(System.nanoTime() - start);
        }
      }
    }
    T result;
    boolean sampled;
    lock.lock();
    try {
      result =
          switch (commit) {
            case DURABLE -> groups.atomically(queue, group, body);
            case LAZY, DEFERRED -> groups.atomicallyLazy(queue, group, body);
            case ACK -> groups.atomicallyLazyAck(queue, group, body);
          };
    } finally {
      sampled = latency.sample();
      if (sampled) {
        latency.add(System.nanoTime() - start);
      }
      lock.unlock();
    }
    if (commit == Commit.DEFERRED || commit == Commit.ACK) {
      long waitStart = sampled ? System.nanoTime() : 0L;
      if (groups.awaitDurable() && sampled) {
        latency.addLate(System.nanoTime() - waitStart);
      }
    }
    return result;
  }

  /**
   * The group's section for a job that runs outside it on a store with concurrent claims ({@link
   * Claims#claimConcurrently}'s read ahead, a dead letter found by a claim): the coordinator's lock
   * and the store's section, as every other change of the group takes them. Reentrant: a job
   * already in the section runs {@code body} as it is.
   */
  <T> T section(String queue, String group, Supplier<T> body) {
    return locked(queue, group, body);
  }

  /** {@link #section} with the store's {@link ConsumerGroupStore#atomicallyLazy}. */
  <T> T lazySection(String queue, String group, Supplier<T> body) {
    lock.lock();
    try {
      return groups.atomicallyLazy(queue, group, body);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Whether an ack of a group of {@code mode} runs in the group's section: always, unless the
   * store's acks are atomic by themselves ({@link ConsumerGroupStore#concurrentClaims}) and the
   * acked deliveries of a queue-mode group carry no ordering key. A keyed ack releases its key's
   * next entry, which must not interleave with a read ahead blocking a new message behind it.
   */
  private boolean inSection(GroupMode mode, boolean unkeyed) {
    return !(concurrent && mode == GroupMode.QUEUE && unkeyed);
  }

  // ---------------------------------------------------------------- checks shared by the jobs

  /** Requires a group of {@code mode}; for the jobs, inside the group's section. */
  static void requireMode(ConsumerGroupState g, GroupMode mode) {
    if (g.mode() != mode) {
      throw new GroupModeMismatchException(g.queue(), g.id(), g.mode().name(), mode.name());
    }
  }

  private static void requireText(String what, String value) {
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException(what + " must be non-empty, got " + value);
    }
  }

  /**
   * A consumer id that becomes a member or a holder of pending entries: non-empty, and the
   * character rules of names without their length bound (BEHAVIOUR S-NAMES), so every store keeps
   * it as given.
   */
  private static void requireMemberId(String consumerId) {
    requireText("consumerId", consumerId);
    Names.checkCharacters("consumerId", consumerId);
  }

  /** The pending entries in the store, for the PEL gauge at construction. */
  private long countPending() {
    long n = 0;
    for (QueueConfig config : queues.listQueues()) {
      for (ConsumerGroupState g : members.groupsOf(config.name())) {
        n += g.pending().size();
      }
    }
    return n;
  }

  /** Configures a {@link GroupCoordinator}. Not thread-safe. */
  public static final class Builder {
    private final QueueStore queues;
    private final ConsumerGroupStore groups;
    private Clock clock = Clock.systemUTC();
    private GroupSettings settings = GroupSettings.DEFAULTS;
    private ConsumerRemovedListener listener = (q, g, ids) -> {};
    private RedeliveryListener redelivery = (q, g, at) -> {};

    private Builder(QueueStore queues, ConsumerGroupStore groups) {
      this.queues = Objects.requireNonNull(queues, "queues");
      this.groups = Objects.requireNonNull(groups, "groups");
    }

    /**
     * The time source of claims, visibility, heartbeats and DLQ stamps; system UTC by default. An
     * injected clock is read at every use; a system clock is read at most every 100 ms and advanced
     * with the {@code System.nanoTime()} the latency metrics take anyway (see {@code EngineClock}),
     * which saves a wall-clock read per claim and per ack.
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    public Builder settings(GroupSettings settings) {
      this.settings = Objects.requireNonNull(settings, "settings");
      return this;
    }

    /** Told about members removed for missing heartbeats; must not block. */
    public Builder onConsumerRemoved(ConsumerRemovedListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Told whenever a pending message gets a time at which it becomes claimable again (claims,
     * steals, nacks, renewals); must not block. See {@link RedeliveryListener}.
     */
    public Builder onRedeliveryDue(RedeliveryListener listener) {
      this.redelivery = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /** Builds the coordinator; counts the pending entries already in the store for the gauge. */
    public GroupCoordinator build() {
      return new GroupCoordinator(this);
    }
  }
}
