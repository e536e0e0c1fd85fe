package io.queuebridge.store.postgres;

import io.queuebridge.core.errors.ReadOnlyStoreException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.GroupOverview;
import io.queuebridge.core.store.PendingEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The consumer-group half of a read-only {@link PostgresStorage}: reads go to the {@link
 * PgGroupStore} of a read-only pool, every change throws {@link ReadOnlyStoreException} before it
 * reaches the database. Every method of the interface is declared here, none inherited (see {@link
 * PgReadOnlyQueueStore}).
 *
 * <p><b>{@link #atomically}</b> takes no lock: holding a group's advisory lock would hold up the
 * writers of that group. It runs the body in one REPEATABLE READ READ ONLY transaction bound to the
 * thread, so every read the body makes through this storage sees the same committed state (the one
 * of the body's first read); a change the body attempts is refused like any other.
 *
 * <p>Thread-safe.
 */
final class PgReadOnlyGroupStore implements ConsumerGroupStore {
  private final PgGroupStore reads;
  private final Db db;
  private final String description;

  PgReadOnlyGroupStore(PgGroupStore reads, Db db, String description) {
    this.reads = reads;
    this.db = db;
    this.description = description;
  }

  private ReadOnlyStoreException refused(String operation, String queue, String groupId) {
    return ReadOnlyViews.refusal(db, operation, queue, groupId);
  }

  private ReadOnlyStoreException refused(String operation, ConsumerGroupState group) {
    return group == null
        ? refused(operation, null, null)
        : refused(operation, group.queue(), group.id());
  }

  /** One read-only snapshot, no lock; see the class javadoc. */
  @Override
  public <T> T atomicallyLazy(String queue, String groupId, Supplier<T> body) {
    return atomically(queue, groupId, body);
  }

  /** One read-only snapshot, no lock: the acknowledgement in it is refused. */
  @Override
  public <T> T atomicallyLazyAck(String queue, String groupId, Supplier<T> body) {
    return atomically(queue, groupId, body);
  }

  /** Nothing to wait for: this view commits nothing. */
  @Override
  public boolean awaitDurable() {
    return false;
  }

  @Override
  public <T> T atomically(String queue, String groupId, Supplier<T> body) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(groupId, "groupId");
    Objects.requireNonNull(body, "body");
    return db.snapshot(queue, body);
  }

  // ---- changes: refused ----------------------------------------------------------------------

  @Override
  public void createGroup(ConsumerGroupState group) {
    throw refused("createGroup", group);
  }

  @Override
  public void updateGroup(ConsumerGroupState group) {
    throw refused("updateGroup", group);
  }

  @Override
  public void deleteGroup(String queue, String groupId) {
    throw refused("deleteGroup", queue, groupId);
  }

  @Override
  public void addPending(String queue, String groupId, PendingEntry entry) {
    throw refused("addPending", queue, groupId);
  }

  @Override
  public void removePending(String queue, String groupId, String consumerId, long offset) {
    throw refused("removePending", queue, groupId);
  }

  @Override
  public void updatePending(String queue, String groupId, PendingEntry entry) {
    throw refused("updatePending", queue, groupId);
  }

  @Override
  public PendingEntry transferPending(
      String queue,
      String groupId,
      long offset,
      String from,
      String to,
      Instant now,
      Duration visibility) {
    throw refused("transferPending", queue, groupId);
  }

  @Override
  public List<PendingEntry> releaseBlocked(
      String queue, String groupId, Collection<String> keys, Instant at) {
    throw refused("releaseBlocked", queue, groupId);
  }

  @Override
  public void claimPending(
      String queue, String groupId, List<PendingEntry> entries, long cursor, Instant now) {
    throw refused("claimPending", queue, groupId);
  }

  @Override
  public List<PendingEntry> claimDue(
      String queue,
      String groupId,
      String consumerId,
      Instant now,
      Duration visibility,
      int limit) {
    throw refused("claimDue", queue, groupId);
  }

  /** False: a read-only view claims nothing. */
  @Override
  public boolean concurrentClaims() {
    return false;
  }

  @Override
  public long acknowledgePending(
      String queue,
      String groupId,
      String consumerId,
      long offset,
      int deliveryCount,
      Instant now) {
    throw refused("acknowledgePending", queue, groupId);
  }

  @Override
  public long acknowledgeAllPending(
      String queue,
      String groupId,
      String consumerId,
      long[] offsets,
      int[] deliveryCounts,
      boolean[] removed,
      Instant now) {
    throw refused("acknowledgeAllPending", queue, groupId);
  }

  @Override
  public void setPaused(String queue, String groupId, boolean paused, Instant now) {
    throw refused("setPaused", queue, groupId);
  }

  @Override
  public void updateCursor(String queue, String groupId, long cursor, Instant now) {
    throw refused("updateCursor", queue, groupId);
  }

  @Override
  public void updateCommitted(String queue, String groupId, long committed, Instant now) {
    throw refused("updateCommitted", queue, groupId);
  }

  @Override
  public void registerConsumer(String queue, String groupId, ConsumerInfo consumer) {
    throw refused("registerConsumer", queue, groupId);
  }

  @Override
  public void unregisterConsumer(String queue, String groupId, String consumerId) {
    throw refused("unregisterConsumer", queue, groupId);
  }

  // ---- reads ---------------------------------------------------------------------------------

  @Override
  public Optional<ConsumerGroupState> findGroup(String queue, String groupId) {
    return reads.findGroup(queue, groupId);
  }

  @Override
  public ConsumerGroupState getGroup(String queue, String groupId) {
    return reads.getGroup(queue, groupId);
  }

  @Override
  public List<ConsumerGroupState> listGroups(String queue) {
    return reads.listGroups(queue);
  }

  @Override
  public Optional<PendingEntry> findPending(String queue, String groupId, long offset) {
    return reads.findPending(queue, groupId, offset);
  }

  @Override
  public GroupOverview overview(String queue, String groupId) {
    return reads.overview(queue, groupId);
  }

  @Override
  public GroupOverview overview(String queue, String groupId, int fromCursor) {
    return reads.overview(queue, groupId, fromCursor);
  }

  @Override
  public Optional<Instant> nextVisible(String queue, Instant after) {
    return reads.nextVisible(queue, after);
  }

  @Override
  public List<PendingEntry> duePending(
      String queue, String groupId, Instant now, PendingEntry after, int limit) {
    return reads.duePending(queue, groupId, now, after, limit);
  }

  @Override
  public Map<String, PendingEntry> firstPendingByKey(
      String queue, String groupId, Collection<String> keys) {
    return reads.firstPendingByKey(queue, groupId, keys);
  }

  @Override
  public List<PendingEntry> getPending(String queue, String groupId, String consumerId) {
    return reads.getPending(queue, groupId, consumerId);
  }

  @Override
  public List<PendingEntry> getAllPending(String queue, String groupId) {
    return reads.getAllPending(queue, groupId);
  }

  @Override
  public List<ConsumerInfo> listConsumers(String queue, String groupId) {
    return reads.listConsumers(queue, groupId);
  }

  @Override
  public String toString() {
    return description;
  }
}
