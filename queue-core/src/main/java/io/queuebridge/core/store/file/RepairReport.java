package io.queuebridge.core.store.file;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * What {@link FileStores#repair} found and cut (or, in a dry run, would cut): per damaged queue,
 * the damage, the offsets and bytes cut and the consumer groups clamped (BEHAVIOUR F-RECOVER).
 * Immutable; an empty report means no queue was damaged.
 *
 * @param store the store directory (real, absolute path)
 * @param dryRun whether nothing was changed
 * @param queues the damaged queues, by name
 */
public record RepairReport(Path store, boolean dryRun, List<QueueRepair> queues) {

  public RepairReport {
    Objects.requireNonNull(store, "store");
    queues = List.copyOf(queues);
  }

  /**
   * One damaged queue: its log is truncated to the last valid frame before the first damage, so the
   * damaged segment keeps the frames before the bad one and every later segment goes.
   *
   * @param queue the queue
   * @param damage every damaged range found in its sealed segments, oldest first; the cut starts at
   *     the first
   * @param newTail the offset after the last frame kept: the offset the next append gets
   * @param fromOffset the first readable offset cut (the queue's head, when the damage lies below
   *     it)
   * @param toOffset the offset after the last readable one cut: the old tail
   * @param segments the segment files cut or deleted, oldest first
   * @param groups the consumer groups whose cursor, committed offset or pending entries pointed at
   *     or past the new tail, clamped to it
   */
  public record QueueRepair(
      String queue,
      List<RecoveryReport.Damage> damage,
      long newTail,
      long fromOffset,
      long toOffset,
      List<SegmentCut> segments,
      List<GroupClamp> groups) {

    public QueueRepair {
      Objects.requireNonNull(queue, "queue");
      damage = List.copyOf(damage);
      segments = List.copyOf(segments);
      groups = List.copyOf(groups);
    }

    /** The messages cut: {@code toOffset - fromOffset} (those in the damaged range included). */
    public long messages() {
      return toOffset - fromOffset;
    }

    /** The bytes of segment files cut. */
    public long bytes() {
      return segments.stream().mapToLong(SegmentCut::cutBytes).sum();
    }
  }

  /**
   * A segment file cut at the damage or deleted after it; deleting one removes its index and
   * checkpoint files too.
   *
   * @param file the segment file
   * @param keptBytes its length after the cut (0 when deleted)
   * @param cutBytes the bytes removed
   * @param deleted whether the file is deleted (else truncated to {@code keptBytes})
   */
  public record SegmentCut(Path file, long keptBytes, long cutBytes, boolean deleted) {
    public SegmentCut {
      Objects.requireNonNull(file, "file");
    }
  }

  /**
   * A consumer group clamped to the new tail, so that no group skips the offsets that new appends
   * reuse: cursor and committed offset lowered to the new tail where they were beyond it, pending
   * entries at or beyond it dropped (their messages are gone).
   *
   * @param group the group id
   * @param cursorBefore its cursor before
   * @param cursorAfter its cursor after
   * @param committedBefore its committed offset before
   * @param committedAfter its committed offset after
   * @param pendingDropped the offsets of the pending entries dropped, ascending
   */
  public record GroupClamp(
      String group,
      long cursorBefore,
      long cursorAfter,
      long committedBefore,
      long committedAfter,
      List<Long> pendingDropped) {
    public GroupClamp {
      Objects.requireNonNull(group, "group");
      pendingDropped = List.copyOf(pendingDropped);
    }
  }

  /** Whether no queue was damaged (nothing cut, nothing to cut). */
  public boolean clean() {
    return queues.isEmpty();
  }

  /** The messages cut from every queue. */
  public long messagesCut() {
    return queues.stream().mapToLong(QueueRepair::messages).sum();
  }

  /** The bytes of segment files cut from every queue. */
  public long bytesCut() {
    return queues.stream().mapToLong(QueueRepair::bytes).sum();
  }
}
