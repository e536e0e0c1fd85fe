package io.queuebridge.core;

import java.util.Objects;

/**
 * One dead letter a redrive looked at.
 *
 * @param deadLetterOffset its offset in the dead-letter queue
 * @param target the queue it goes (or went) to
 * @param targetOffset its offset in {@code target} when {@link Outcome#MOVED}, else -1
 * @param outcome what happened to it
 */
public record RedrivenMessage(
    long deadLetterOffset, String target, long targetOffset, Outcome outcome) {

  public RedrivenMessage {
    Objects.requireNonNull(target, "target");
    Objects.requireNonNull(outcome, "outcome");
  }

  /** What a redrive did with one dead letter. */
  public enum Outcome {
    /** Appended to the target now. */
    MOVED,
    /**
     * Found in the target already: an earlier redrive appended it and stopped before it removed it
     * from the dead-letter queue. Removed now, not appended again.
     */
    ALREADY_MOVED,
    /** A dry run: would be appended. */
    WOULD_MOVE
  }
}
