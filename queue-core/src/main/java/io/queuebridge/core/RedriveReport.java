package io.queuebridge.core;

import java.util.Map;
import java.util.Objects;

/**
 * What a dead-letter redrive did.
 *
 * @param deadLetterQueue the dead-letter queue read from
 * @param moved messages appended to a target (or, in a dry run, that would be)
 * @param alreadyMoved messages found appended by an earlier, interrupted redrive
 * @param remaining messages left in the dead-letter queue afterwards
 * @param byTarget messages moved per target queue
 * @param dryRun whether nothing was changed
 */
public record RedriveReport(
    String deadLetterQueue,
    long moved,
    long alreadyMoved,
    long remaining,
    Map<String, Long> byTarget,
    boolean dryRun) {

  public RedriveReport {
    Objects.requireNonNull(deadLetterQueue, "deadLetterQueue");
    byTarget = Map.copyOf(byTarget);
  }
}
