package io.queuebridge.core.store.file;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What opening a file store repaired: torn or corrupt tails cut from the newest segment of a
 * queue's log, damaged tails cut from consumer-group logs, and leftovers of interrupted operations
 * removed. Immutable; an empty report means the store was clean.
 *
 * @param logCuts tails cut from the newest segment of queue logs (never acknowledged data: a
 *     durable append returns only after its barrier, which covers the whole frame)
 * @param groupLogCuts tails cut from consumer-group logs (at worst a redelivery)
 * @param removedFiles temporary files and torn creations removed
 */
public record RecoveryReport(List<Cut> logCuts, List<Cut> groupLogCuts, List<Path> removedFiles) {

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

  public RecoveryReport {
    logCuts = List.copyOf(logCuts);
    groupLogCuts = List.copyOf(groupLogCuts);
    removedFiles = List.copyOf(removedFiles);
  }

  /** Whether nothing had to be repaired. */
  public boolean clean() {
    return logCuts.isEmpty() && groupLogCuts.isEmpty() && removedFiles.isEmpty();
  }

  /** Total bytes cut from queue logs. */
  public long logBytesCut() {
    return logCuts.stream().mapToLong(Cut::cutBytes).sum();
  }

  /** Collects a report while opening; thread-safe. */
  static final class Builder {
    private final List<Cut> logCuts = new ArrayList<>();
    private final List<Cut> groupLogCuts = new ArrayList<>();
    private final List<Path> removed = new ArrayList<>();

    synchronized void logCut(Cut c) {
      logCuts.add(c);
    }

    synchronized void groupLogCut(Cut c) {
      groupLogCuts.add(c);
    }

    synchronized void removed(Path p) {
      removed.add(p);
    }

    synchronized RecoveryReport build() {
      return new RecoveryReport(logCuts, groupLogCuts, removed);
    }
  }
}
