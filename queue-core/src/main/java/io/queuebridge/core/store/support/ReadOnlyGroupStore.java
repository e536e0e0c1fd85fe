package io.queuebridge.core.store.support;

import io.queuebridge.core.errors.ReadOnlyStoreException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.PendingEntry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Support for store implementers: the consumer-group half of a store opened read-only ({@link
 * io.queuebridge.core.store.QueueStoreProvider#openReadOnly}). Every call that would change a group
 * throws {@link ReadOnlyStoreException} before it looks anything up, so it changes nothing whatever
 * its arguments (after the store was closed, {@link
 * io.queuebridge.core.errors.StoreClosedException} instead); {@link #atomically} runs its body,
 * whose changes are refused in turn. Subclasses implement the two reading primitives, {@link
 * #findGroup} and {@link #listGroups}; the other reads are the interface's defaults built on them,
 * which a subclass may override to answer faster.
 *
 * <p>Thread-safe if the subclass's reads are.
 */
public abstract class ReadOnlyGroupStore implements ConsumerGroupStore {
  private final String description;

  /**
   * @param description the store's description, named by the refusals
   */
  protected ReadOnlyGroupStore(String description) {
    this.description = description;
  }

  /**
   * Throws {@link io.queuebridge.core.errors.StoreClosedException} once the store was closed; the
   * refusals call it first.
   */
  protected abstract void checkOpen();

  private ReadOnlyStoreException refused(String operation, String queue, String groupId) {
    checkOpen();
    return new ReadOnlyStoreException(
        description, operation + " of group '" + groupId + "' of queue '" + queue + "'");
  }

  private ReadOnlyStoreException refused(String operation, ConsumerGroupState group) {
    return group == null
        ? refused(operation, null, null)
        : refused(operation, group.queue(), group.id());
  }

  @Override
  public final void createGroup(ConsumerGroupState group) {
    throw refused("createGroup", group);
  }

  @Override
  public final void updateGroup(ConsumerGroupState group) {
    throw refused("updateGroup", group);
  }

  @Override
  public final void deleteGroup(String queue, String groupId) {
    throw refused("deleteGroup", queue, groupId);
  }

  @Override
  public final void addPending(String queue, String groupId, PendingEntry entry) {
    throw refused("addPending", queue, groupId);
  }

  @Override
  public final void removePending(String queue, String groupId, String consumerId, long offset) {
    throw refused("removePending", queue, groupId);
  }

  @Override
  public final void updatePending(String queue, String groupId, PendingEntry entry) {
    throw refused("updatePending", queue, groupId);
  }

  @Override
  public final PendingEntry transferPending(
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
  public final List<PendingEntry> releaseBlocked(
      String queue, String groupId, java.util.Collection<String> keys, Instant at) {
    throw refused("releaseBlocked", queue, groupId);
  }

  @Override
  public final void claimPending(
      String queue, String groupId, List<PendingEntry> entries, long cursor, Instant now) {
    throw refused("claimPending", queue, groupId);
  }

  @Override
  public final List<PendingEntry> claimDue(
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
  public final boolean concurrentClaims() {
    return false;
  }

  @Override
  public final long acknowledgePending(
      String queue,
      String groupId,
      String consumerId,
      long offset,
      int deliveryCount,
      Instant now) {
    throw refused("acknowledgePending", queue, groupId);
  }

  @Override
  public final long acknowledgeAllPending(
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
  public final void setPaused(String queue, String groupId, boolean paused, Instant now) {
    throw refused("setPaused", queue, groupId);
  }

  @Override
  public final void updateCursor(String queue, String groupId, long cursor, Instant now) {
    throw refused("updateCursor", queue, groupId);
  }

  @Override
  public final void updateCommitted(String queue, String groupId, long committed, Instant now) {
    throw refused("updateCommitted", queue, groupId);
  }

  @Override
  public final void registerConsumer(String queue, String groupId, ConsumerInfo consumer) {
    throw refused("registerConsumer", queue, groupId);
  }

  @Override
  public final void unregisterConsumer(String queue, String groupId, String consumerId) {
    throw refused("unregisterConsumer", queue, groupId);
  }

  @Override
  public abstract Optional<ConsumerGroupState> findGroup(String queue, String groupId);

  @Override
  public abstract List<ConsumerGroupState> listGroups(String queue);

  @Override
  public String toString() {
    return description;
  }
}
