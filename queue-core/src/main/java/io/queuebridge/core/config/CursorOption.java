package io.queuebridge.core.config;

import java.time.Instant;
import java.util.Objects;

/**
 * Where a subscription starts reading and how (BEHAVIOUR Q-CURSOR).
 *
 * @param position which position to apply to the group's shared cursor
 * @param offset the offset for {@link Position#OFFSET} (clamped to [head, tail])
 * @param timestamp the time for {@link Position#TIMESTAMP}; null = no move
 * @param mode how the group reads; null = queue mode
 * @param autoCommit whether acknowledging commits; null = true. Applied only when the group is
 *     created.
 */
public record CursorOption(
    Position position, long offset, Instant timestamp, GroupMode mode, Boolean autoCommit) {

  /** Cursor positions. */
  public enum Position {
    /** Resume the stored cursor. */
    DEFAULT,
    /** The oldest retained message. */
    EARLIEST,
    /** The next message to be appended. */
    LATEST,
    /** An explicit offset, clamped to [head, tail]. */
    OFFSET,
    /** The first message at or after a time. */
    TIMESTAMP
  }

  public CursorOption {
    Objects.requireNonNull(position, "position");
  }

  public static CursorOption resume(GroupMode mode) {
    return new CursorOption(Position.DEFAULT, 0, null, mode, null);
  }

  public static CursorOption earliest(GroupMode mode) {
    return new CursorOption(Position.EARLIEST, 0, null, mode, null);
  }

  public static CursorOption latest(GroupMode mode) {
    return new CursorOption(Position.LATEST, 0, null, mode, null);
  }

  public static CursorOption atOffset(GroupMode mode, long offset) {
    return new CursorOption(Position.OFFSET, offset, null, mode, null);
  }

  public static CursorOption atTimestamp(GroupMode mode, Instant timestamp) {
    return new CursorOption(Position.TIMESTAMP, 0, timestamp, mode, null);
  }

  /** This option with an explicit auto-commit setting. */
  public CursorOption withAutoCommit(boolean value) {
    return new CursorOption(position, offset, timestamp, mode, value);
  }

  /** The effective mode: {@link GroupMode#QUEUE} when unset. */
  public GroupMode effectiveMode() {
    return mode == null ? GroupMode.QUEUE : mode;
  }

  /** The effective auto-commit: true when unset. */
  public boolean effectiveAutoCommit() {
    return autoCommit == null || autoCommit;
  }
}
