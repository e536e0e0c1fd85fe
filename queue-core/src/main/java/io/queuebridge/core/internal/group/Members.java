package io.queuebridge.core.internal.group;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.Names;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.ConsumerGroupExistsException;
import io.queuebridge.core.errors.ConsumerNotFoundException;
import io.queuebridge.core.errors.GroupModeMismatchException;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.group.ConsumerRemovedListener;
import io.queuebridge.core.group.GroupSettings;
import io.queuebridge.core.group.RemovedConsumers;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.QueueStore;
import io.queuebridge.core.topic.TopicFilters;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The members of the consumer groups (BEHAVIOUR Q-GROUP, Q-SUB, Q-HEARTBEAT): joining (which
 * creates the group and places its cursor), leaving, heartbeats (a claim or peek counts as one),
 * the stale-member sweep and its consumer-removed listener, group deletion, the heartbeat index
 * ({@link MembershipIndex}), the consumer timeouts of the queues, and the disconnect time of an
 * ephemeral queue its last member left (BEHAVIOUR Q-EPHEMERAL).
 *
 * <p><b>Consumer timeouts.</b> A queue's {@code heartbeatTimeout}, when it sets one, replaces the
 * manager's {@code consumerTimeout} for the members of its groups ({@link
 * GroupSettings#consumerTimeout(QueueConfig)}). The sweep takes it from the configurations it
 * lists; the heartbeat write throttle and the push engine's heartbeats, which must not read a
 * configuration per call, take it from a map of the queues that set one, filled at construction, at
 * every join and at every sweep (so a change made elsewhere is seen within one sweep).
 *
 * <p>Every instance method but {@link #reportRemoved}, {@link #consumerTimeout(String)} and {@link
 * #shortestConsumerTimeout()} expects the coordinator's lock held (it guards the index and the
 * metrics); one that reads or changes one group also expects to run inside that group's store
 * section. Those three are lock-free. Calls the two stores, the index, the metrics and the
 * listener.
 */
final class Members {
  private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);

  private final QueueStore queues;
  private final ConsumerGroupStore groups;
  private final EngineClock time;
  private final GroupSettings settings;
  private final MetricsRecorder metrics;
  private final ConsumerRemovedListener listener;
  private final MembershipIndex index = new MembershipIndex();

  /** Queue → its own consumer timeout, for the queues that set a {@code heartbeatTimeout}. */
  private final ConcurrentMap<String, Duration> ownTimeouts = new ConcurrentHashMap<>();

  /** Queue → a tenth of its own consumer timeout: how often a claim writes its heartbeat. */
  private final ConcurrentMap<String, Duration> ownWriteIntervals = new ConcurrentHashMap<>();

  /** A tenth of the manager's consumer timeout (computed once: a claim reads it every time). */
  private final Duration heartbeatWriteInterval;

  Members(
      QueueStore queues,
      ConsumerGroupStore groups,
      EngineClock time,
      GroupSettings settings,
      MetricsRecorder metrics,
      ConsumerRemovedListener listener) {
    this.queues = queues;
    this.groups = groups;
    this.time = time;
    this.settings = settings;
    this.heartbeatWriteInterval = settings.consumerTimeout().dividedBy(10);
    this.metrics = metrics;
    this.listener = listener;
  }

  // ---------------------------------------------------------------- consumer timeouts

  /** The consumer timeout of {@code config}'s queue, remembered for {@link #consumerTimeout}. */
  Duration consumerTimeout(QueueConfig config) {
    Duration timeout = settings.consumerTimeout(config);
    if (config.heartbeatTimeout().compareTo(Duration.ZERO) > 0) {
      ownTimeouts.put(config.name(), timeout);
      ownWriteIntervals.put(config.name(), timeout.dividedBy(10));
    } else {
      ownTimeouts.remove(config.name());
      ownWriteIntervals.remove(config.name());
    }
    return timeout;
  }

  /**
   * The consumer timeout of {@code queue} as last seen (a join, a sweep), else the manager's;
   * lock-free, reads no configuration.
   */
  Duration consumerTimeout(String queue) {
    Duration own = ownTimeouts.get(queue);
    return own == null ? settings.consumerTimeout() : own;
  }

  /** The shortest consumer timeout of the queues as last seen, at most the manager's; lock-free. */
  Duration shortestConsumerTimeout() {
    Duration shortest = settings.consumerTimeout();
    for (Duration d : ownTimeouts.values()) {
      if (d.compareTo(shortest) < 0) {
        shortest = d;
      }
    }
    return shortest;
  }

  /** Forgets the timeouts of queues not in {@code listed} (deleted); at a sweep. */
  void forgetTimeoutsExcept(List<QueueConfig> listed) {
    Set<String> names = new HashSet<>();
    for (QueueConfig c : listed) {
      names.add(c.name());
    }
    ownTimeouts.keySet().retainAll(names);
    ownWriteIntervals.keySet().retainAll(names);
  }

  // ---------------------------------------------------------------- joining and leaving

  /**
   * The effective id of the group a join names (BEHAVIOUR Q-GROUP): {@code groupId}, or the
   * client's default group when it names none, qualified by the filter. Validates the filter.
   *
   * @throws IllegalArgumentException if the client's default group is empty
   */
  static String groupToJoin(
      String queue, String filter, String groupId, String consumerId, GroupMode mode) {
    if (!filter.isEmpty()) {
      TopicFilters.validateFilter(filter);
    }
    String base =
        groupId == null || groupId.isEmpty()
            ? GroupCoordinator.defaultGroupId(consumerId, mode)
            : groupId;
    if (base.isEmpty()) {
      throw new IllegalArgumentException(
          "the default "
              + mode
              + "-mode group of client '"
              + consumerId
              + "' is empty; pass a group id to join queue "
              + queue);
    }
    String id = GroupCoordinator.effectiveGroupId(base, filter);
    Names.encode("group id", id); // BEHAVIOUR S-NAMES, before any store sees it
    return id;
  }

  /** Joins group {@code id}, creating it when absent; in that group's section. */
  ConsumerGroupState join(
      String queue, String id, String filter, String consumerId, CursorOption c) {
    QueueConfig config = queues.getQueue(queue);
    consumerTimeout(config); // remembered for the heartbeat throttle
    Instant now = time.now();
    ConsumerGroupState g =
        getOrCreate(queue, id, filter, c.effectiveMode(), c.effectiveAutoCommit(), now);
    applyPosition(g, c, now);
    groups.registerConsumer(queue, id, new ConsumerInfo(consumerId, consumerId, now, now));
    index.add(consumerId, queue, id);
    if (config.lastConsumerDisconnect().isPresent()) {
      queues.updateQueue(config.toBuilder().lastConsumerDisconnect(null).build());
    }
    return groups.getGroup(queue, id);
  }

  private ConsumerGroupState getOrCreate(
      String queue, String id, String pattern, GroupMode mode, boolean autoCommit, Instant now) {
    Optional<ConsumerGroupState> found = groups.findGroup(queue, id);
    if (found.isEmpty()) {
      ConsumerGroupState created =
          ConsumerGroupState.create(queue, id, pattern, mode, autoCommit, now);
      try {
        groups.createGroup(created);
        return created;
      } catch (ConsumerGroupExistsException lostRace) {
        found = Optional.of(groups.getGroup(queue, id));
      }
    }
    ConsumerGroupState g = found.get();
    if (g.mode() != mode) {
      throw new GroupModeMismatchException(queue, id, g.mode().name(), mode.name());
    }
    return g;
  }

  /** Places a joining group's cursor where the cursor option says (BEHAVIOUR Q-CURSOR). */
  private void applyPosition(ConsumerGroupState g, CursorOption c, Instant now) {
    String queue = g.queue();
    long target;
    switch (c.position()) {
      case DEFAULT:
        return;
      case EARLIEST:
        target = queues.head(queue);
        break;
      case LATEST:
        target = queues.tail(queue);
        break;
      case OFFSET:
        target = Math.max(queues.head(queue), Math.min(c.offset(), queues.tail(queue)));
        break;
      case TIMESTAMP:
        if (c.timestamp() == null) {
          return;
        }
        long head = queues.head(queue);
        long found = queues.timeOffset(queue, c.timestamp()).orElse(head);
        target = Math.max(head, Math.min(found, queues.tail(queue)));
        break;
      default:
        throw new IllegalStateException("unknown cursor position " + c.position());
    }
    if (target != g.cursor()) {
      groups.updateCursor(queue, g.id(), target, now);
    }
  }

  /**
   * The groups a leave may mean, in the order to try them: the named one, or, when none is named,
   * the client's default queue-mode group, then its default stream-mode group (BEHAVIOUR Q-SUB).
   */
  static Set<String> groupsToLeave(String pattern, String groupId, String consumerId) {
    Set<String> candidates = new LinkedHashSet<>();
    if (groupId == null || groupId.isEmpty()) {
      candidates.add(
          GroupCoordinator.effectiveGroupId(
              GroupCoordinator.defaultGroupId(consumerId, GroupMode.QUEUE), pattern));
      candidates.add(
          GroupCoordinator.effectiveGroupId(
              GroupCoordinator.defaultGroupId(consumerId, GroupMode.STREAM), pattern));
    } else {
      candidates.add(GroupCoordinator.effectiveGroupId(groupId, pattern));
    }
    return candidates;
  }

  /**
   * Leaves group {@code id}, in its section: true if the consumer was a member and left, false if
   * the queue is gone, null if it is no member of this group (the caller tries the next candidate).
   */
  Boolean leave(String queue, String id, String consumerId) {
    Optional<ConsumerGroupState> g;
    try {
      g = groups.findGroup(queue, id);
    } catch (QueueNotFoundException gone) {
      return false;
    }
    if (g.isPresent() && g.get().consumers().containsKey(consumerId)) {
      groups.unregisterConsumer(queue, id, consumerId);
      index.remove(consumerId, queue, id);
      markDisconnectedIfIdle(queue, time.now());
      return true;
    }
    return null;
  }

  // ---------------------------------------------------------------- heartbeats

  /** One member's heartbeat, in the group's section. */
  void heartbeat(String queue, String group, String consumerId) {
    ConsumerGroupState g = groups.getGroup(queue, group);
    ConsumerInfo info = g.consumers().get(consumerId);
    if (info == null) {
      throw new ConsumerNotFoundException(queue, group, consumerId);
    }
    groups.registerConsumer(
        queue,
        group,
        new ConsumerInfo(info.id(), info.clientId(), info.registeredAt(), time.now()));
  }

  /** The groups a client is a member of, from the heartbeat index (a copy). */
  List<MembershipIndex.Membership> memberships(String clientId) {
    return index.of(clientId);
  }

  /**
   * Refreshes one membership of a client-wide heartbeat, in that group's section; false (and the
   * membership leaves the index) if the store no longer has it.
   */
  boolean refresh(String clientId, MembershipIndex.Membership m) {
    try {
      ConsumerInfo info = groups.getGroup(m.queue(), m.group()).consumers().get(clientId);
      if (info == null) {
        index.remove(clientId, m.queue(), m.group());
        return false;
      }
      groups.registerConsumer(
          m.queue(),
          m.group(),
          new ConsumerInfo(info.id(), info.clientId(), info.registeredAt(), time.now()));
      return true;
    } catch (QueueNotFoundException | GroupNotFoundException gone) {
      index.remove(clientId, m.queue(), m.group());
      return false;
    }
  }

  /**
   * Requires membership and counts a claim or peek as a heartbeat, writing it at most every tenth
   * of the queue's consumer timeout so busy claimers do not write a heartbeat per call; in the
   * group's section.
   */
  void touch(ConsumerGroupState g, String consumerId, Instant now) {
    ConsumerInfo info = g.consumers().get(consumerId);
    if (info == null) {
      throw new ConsumerNotFoundException(g.queue(), g.id(), consumerId);
    }
    Duration own = ownWriteIntervals.isEmpty() ? null : ownWriteIntervals.get(g.queue());
    Duration writeInterval = own == null ? heartbeatWriteInterval : own;
    if (!now.isBefore(info.lastHeartbeat().plus(writeInterval))) {
      groups.registerConsumer(
          g.queue(),
          g.id(),
          new ConsumerInfo(info.id(), info.clientId(), info.registeredAt(), now));
    }
  }

  // ---------------------------------------------------------------- the stale-member sweep

  /**
   * Members of {@code config}'s groups last heard from before this are stale at {@code now}; the
   * queue's timeout is remembered.
   */
  Instant staleCutoff(QueueConfig config, Instant now) {
    return now.minus(consumerTimeout(config));
  }

  /** The members of {@code g} last heard from before {@code cutoff}, sorted. */
  static List<String> staleMembers(ConsumerGroupState g, Instant cutoff) {
    List<String> stale = new ArrayList<>();
    for (ConsumerInfo info : g.consumers().values()) {
      if (info.lastHeartbeat().isBefore(cutoff)) {
        stale.add(info.id());
      }
    }
    stale.sort(null);
    return stale;
  }

  /**
   * Removes the stale members of one group, re-read in its section (another process may have heard
   * from a member since the group was listed); their pending entries stay, to be stolen.
   *
   * @return the removed members, sorted; empty when none (or the group is gone)
   */
  List<String> removeStale(String queue, String group, Instant cutoff) {
    Optional<ConsumerGroupState> g = findGroupOrEmpty(queue, group);
    List<String> ids = g.map(x -> staleMembers(x, cutoff)).orElse(List.of());
    for (String id : ids) {
      groups.unregisterConsumer(queue, group, id);
      index.remove(id, queue, group);
    }
    return ids;
  }

  /** Logs the sweep's removals and tells the listener, per group; after the lock is released. */
  void reportRemoved(List<RemovedConsumers> removed) {
    for (RemovedConsumers r : removed) {
      LOG.info(
          "removed consumers {} of group {} on queue {}: no heartbeat for {}",
          r.consumerIds(),
          r.group(),
          r.queue(),
          consumerTimeout(r.queue()));
      try {
        listener.onConsumersRemoved(r.queue(), r.group(), r.consumerIds());
      } catch (RuntimeException e) {
        LOG.warn("consumer-removed listener failed for group {} on {}", r.group(), r.queue(), e);
      }
    }
  }

  /**
   * Gives an ephemeral queue whose groups have no member left the time its last consumer left
   * (BEHAVIOUR Q-EPHEMERAL), unless it has one already; no-op for a durable, reserved or missing
   * queue.
   */
  void markDisconnectedIfIdle(String queue, Instant now) {
    QueueConfig config;
    try {
      config = queues.getQueue(queue);
    } catch (QueueNotFoundException gone) {
      return;
    }
    if (config.durable() || config.reserved() || config.lastConsumerDisconnect().isPresent()) {
      return;
    }
    for (ConsumerGroupState g : groupsOf(queue)) {
      if (!g.consumers().isEmpty()) {
        return;
      }
    }
    queues.updateQueue(config.toBuilder().lastConsumerDisconnect(now).build());
  }

  // ---------------------------------------------------------------- groups

  /** Deletes a group and forgets its members; in its section. The PEL gauge loses its entries. */
  void deleteGroup(String queue, String group) {
    groups.findGroup(queue, group).ifPresent(g -> metrics.pelChanged(-g.pending().size()));
    groups.deleteGroup(queue, group);
    index.removeGroup(queue, group);
  }

  /** Deletes a listed group of a queue being expired, and forgets its members. */
  void deleteIdleGroup(String queue, ConsumerGroupState g) {
    metrics.pelChanged(-g.pending().size());
    groups.deleteGroup(queue, g.id());
    index.removeGroup(queue, g.id());
  }

  /** The groups of a queue; empty when the queue is gone. */
  List<ConsumerGroupState> groupsOf(String queue) {
    try {
      return groups.listGroups(queue);
    } catch (QueueNotFoundException gone) {
      return List.of();
    }
  }

  private Optional<ConsumerGroupState> findGroupOrEmpty(String queue, String group) {
    try {
      return groups.findGroup(queue, group);
    } catch (QueueNotFoundException gone) {
      return Optional.empty();
    }
  }

  /**
   * Fills the heartbeat index from the memberships already in the store, and remembers the queues'
   * consumer timeouts; at construction.
   */
  void indexStoredMemberships() {
    for (QueueConfig config : queues.listQueues()) {
      consumerTimeout(config);
      for (ConsumerGroupState g : groupsOf(config.name())) {
        for (String consumerId : g.consumers().keySet()) {
          index.add(consumerId, config.name(), g.id());
        }
      }
    }
  }

  /** The heartbeat index; for tests. */
  MembershipIndex index() {
    return index;
  }
}
