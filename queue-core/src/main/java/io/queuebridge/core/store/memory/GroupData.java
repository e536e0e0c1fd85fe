package io.queuebridge.core.store.memory;

import io.queuebridge.core.GroupMode;
import io.queuebridge.core.GroupNotFoundException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerInfo;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One memory-store consumer group as mutable state: the fields of {@link ConsumerGroupState} with
 * the pending entries in a {@link PendingLog}, so a claim or an ack changes one entry instead of
 * copying the whole pending list. The immutable snapshot that {@code findGroup} hands out is built
 * on demand and kept until the next change ({@link #changed()}).
 *
 * <p>Not thread-safe by itself: {@link MemoryGroupStore} holds the object's monitor around every
 * read and change. Once {@link #deleted} is set (the group or its queue was deleted) the object is
 * detached from the store and every operation on it reports the group missing.
 */
final class GroupData {
  final String queue;
  final String id;
  final PendingLog pending = new PendingLog();
  String pattern;
  GroupMode mode;
  boolean autoCommit;
  long cursor;
  long committed;
  Map<String, ConsumerInfo> consumers;
  Instant createdAt;
  Instant updatedAt;
  boolean deleted;
  private ConsumerGroupState snapshot;

  GroupData(ConsumerGroupState state) {
    this.queue = state.queue();
    this.id = state.id();
    set(state);
  }

  /** Replaces the whole state with {@code state} (which is also the new snapshot). */
  void set(ConsumerGroupState state) {
    pattern = state.pattern();
    mode = state.mode();
    autoCommit = state.autoCommit();
    cursor = state.cursor();
    committed = state.committed();
    pending.reset(state.pending());
    consumers = state.consumers();
    createdAt = state.createdAt();
    updatedAt = state.updatedAt();
    snapshot = state;
  }

  /** The current state as an immutable snapshot (cached until the next change). */
  ConsumerGroupState snapshot() {
    ConsumerGroupState s = snapshot;
    if (s == null) {
      s =
          new ConsumerGroupState(
              queue,
              id,
              pattern,
              mode,
              autoCommit,
              cursor,
              committed,
              List.of(pending.toArray()),
              consumers,
              createdAt,
              updatedAt);
      snapshot = s;
    }
    return s;
  }

  /** Marks the cached snapshot stale after a change. */
  void changed() {
    snapshot = null;
  }

  /**
   * @throws GroupNotFoundException if the group was deleted
   */
  void checkLive() {
    if (deleted) {
      throw new GroupNotFoundException(queue, id);
    }
  }
}
