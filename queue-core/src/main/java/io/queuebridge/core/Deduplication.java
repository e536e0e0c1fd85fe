package io.queuebridge.core;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.store.AppendResult;
import io.queuebridge.core.store.DurableQueueStore;
import java.time.Instant;
import java.util.OptionalLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Deduplicated publish (BEHAVIOUR Q-DEDUP) for the publish paths: which appends it applies to, the
 * store call with the window start taken from the manager's clock, and the count of duplicates
 * refused. Thread-safe.
 */
final class Deduplication {
  private final LongAdder duplicates = new LongAdder();

  /**
   * Whether {@code message} (stamped) is appended deduplicated to {@code target}: it carries an id
   * and the queue's window is on. A message with an id to a queue whose window is off is stored as
   * any other, its id kept as a property.
   */
  static boolean applies(QueueConfig target, Message message) {
    return target.deduplicates() && message.properties().containsKey(MessageProperties.DEDUP_ID);
  }

  /**
   * The store's deduplicated append to {@code target} with window start {@code now - window};
   * counts a duplicate.
   */
  AppendResult append(
      DurableQueueStore queues, QueueConfig target, Message message, Instant now, boolean sync)
      throws InterruptedException {
    Instant windowStart = now.minus(target.dedupWindow());
    AppendResult result =
        sync
            ? queues.appendDeduplicatedAndSync(target.name(), message, windowStart)
            : queues.appendDeduplicated(target.name(), message, windowStart);
    if (result.duplicate()) {
      duplicates.increment();
    }
    return result;
  }

  /**
   * At a full classic queue: the offset of an earlier publish of {@code message}'s id to {@code
   * target} within its window, counted as a duplicate; empty when the deduplication does not apply
   * or the store remembers no such publish.
   */
  OptionalLong rememberedOffset(
      DurableQueueStore queues, QueueConfig target, Message message, Instant now) {
    if (!applies(target, message)) {
      return OptionalLong.empty();
    }
    OptionalLong first =
        queues.deduplicatedOffset(
            target.name(),
            message.properties().get(MessageProperties.DEDUP_ID),
            now.minus(target.dedupWindow()));
    if (first.isPresent()) {
      duplicates.increment();
    }
    return first;
  }

  /** Duplicates refused since the manager was built. */
  long duplicatesRefused() {
    return duplicates.sum();
  }
}
