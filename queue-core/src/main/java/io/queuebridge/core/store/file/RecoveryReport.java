package io.queuebridge.core.store.file;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What opening a file store repaired and what it found damaged (BEHAVIOUR F-RECOVER): torn or
 * corrupt tails cut from the newest segment of a queue's log, damaged tails cut from consumer-group
 * logs, leftovers of interrupted operations removed, and damage found in sealed segments, which is
 * never cut on open: its offsets are refused until {@link FileStores#repair} cuts it. Immutable; an
 * empty report means the store was clean.
 *
 * @param logCuts tails cut from the newest segment of queue logs (never acknowledged data: a
 *     durable append returns only after its barrier, which covers the whole frame)
 * @param groupLogCuts tails cut from consumer-group logs (at worst a redelivery)
 * @param removedFiles temporary files and torn creations removed
 * @param damage damaged ranges found in sealed segments, oldest first per queue: reads of them fail
 *     with {@link io.queuebridge.core.errors.StoreCorruptedException} and appends to their queues
 *     are refused until the store is repaired (or the range is truncated away)
 * @param segmentsVerified sealed segments read frame by frame while opening ({@code
 *     verify.on.open}); the newest segment of each queue, always scanned, is not counted
 * @param bytesVerified the bytes of those segments
 */
public record RecoveryReport(
    List<Cut> logCuts,
    List<Cut> groupLogCuts,
    List<Path> removedFiles,
    List<Damage> damage,
    int segmentsVerified,
    long bytesVerified) {

  /**
   * One cut.
   *
   * @param queue the queue
   * @param file the file that was cut
   * @param keptBytes its length after the cut (the valid prefix)
   * @param cutBytes bytes removed
   * @param reason what was wrong at {@code keptBytes}
   */
  public record Cut(String queue, Path file, long keptBytes, long cutBytes, String reason) {
    public Cut {
      Objects.requireNonNull(queue, "queue");
      Objects.requireNonNull(file, "file");
      Objects.requireNonNull(reason, "reason");
    }
  }

  /**
   * Damage found in a sealed segment of a queue's log: from the first frame that fails verification
   * to the segment's end, the offsets cannot be served (the frames after a bad one cannot be found
   * without trusting it).
   *
   * @param queue the queue
   * @param file the segment file
   * @param position the byte position of the first bad frame (the file's size when the file ends
   *     before the offsets it should hold)
   * @param fromOffset the first offset that cannot be served (the offset the bad frame should start
   *     with, or the queue's head if that is higher)
   * @param toOffset the offset after the last one that cannot be served: the next segment's base
   * @param reason what was wrong at {@code position}
   */
  public record Damage(
      String queue, Path file, long position, long fromOffset, long toOffset, String reason) {
    public Damage {
      Objects.requireNonNull(queue, "queue");
      Objects.requireNonNull(file, "file");
      Objects.requireNonNull(reason, "reason");
    }

    /** How many offsets cannot be served. */
    public long offsets() {
      return toOffset - fromOffset;
    }

    /** Whether {@code offset} lies in the damaged range. */
    public boolean covers(long offset) {
      return fromOffset <= offset && offset < toOffset;
    }

    /**
     * One line for people: the queue, the file, the byte position, what was wrong and the offsets
     * that cannot be served.
     */
    public String describe() {
      return "queue '"
          + queue
          + "': segment "
          + file
          + " is damaged at byte "
          + position
          + " ("
          + reason
          + "): offsets ["
          + fromOffset
          + ", "
          + toOffset
          + ") cannot be served";
    }
  }

  public RecoveryReport {
    logCuts = List.copyOf(logCuts);
    groupLogCuts = List.copyOf(groupLogCuts);
    removedFiles = List.copyOf(removedFiles);
    damage = List.copyOf(damage);
  }

  /** Whether nothing had to be repaired and nothing was found damaged. */
  public boolean clean() {
    return logCuts.isEmpty()
        && groupLogCuts.isEmpty()
        && removedFiles.isEmpty()
        && damage.isEmpty();
  }

  /** Total bytes cut from queue logs. */
  public long logBytesCut() {
    return logCuts.stream().mapToLong(Cut::cutBytes).sum();
  }

  /** The damage found in {@code queue}'s log, oldest first; empty when none. */
  public List<Damage> damageOf(String queue) {
    return damage.stream().filter(d -> d.queue().equals(queue)).toList();
  }

  /** Collects a report while opening; thread-safe. */
  static final class Builder {
    private final List<Cut> logCuts = new ArrayList<>();
    private final List<Cut> groupLogCuts = new ArrayList<>();
    private final List<Path> removed = new ArrayList<>();
    private final List<Damage> damage = new ArrayList<>();
    private final List<Runnable> afterOpen = new ArrayList<>();
    private int segmentsVerified;
    private long bytesVerified;

    /**
     * Defers a write that only records what the open found (the verified-segments stamps) until
     * every queue opened: an open refused half-way (a file of a newer version, say) then leaves no
     * such file behind.
     */
    synchronized void afterOpen(Runnable write) {
      afterOpen.add(write);
    }

    /** Runs the deferred writes, in order; called once the whole store opened. */
    void runAfterOpen() {
      List<Runnable> writes;
      synchronized (this) {
        writes = List.copyOf(afterOpen);
        afterOpen.clear();
      }
      writes.forEach(Runnable::run);
    }

    synchronized void logCut(Cut c) {
      logCuts.add(c);
    }

    synchronized void groupLogCut(Cut c) {
      groupLogCuts.add(c);
    }

    synchronized void removed(Path p) {
      removed.add(p);
    }

    synchronized void damage(Damage d) {
      damage.add(d);
    }

    synchronized void verified(long bytes) {
      segmentsVerified++;
      bytesVerified += bytes;
    }

    synchronized RecoveryReport build() {
      return new RecoveryReport(
          logCuts, groupLogCuts, removed, damage, segmentsVerified, bytesVerified);
    }
  }
}
