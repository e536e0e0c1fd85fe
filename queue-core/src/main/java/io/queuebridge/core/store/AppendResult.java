package io.queuebridge.core.store;

/**
 * What a deduplicated append did (BEHAVIOUR Q-DEDUP): stored the message at {@link #offset}, or
 * found its deduplication id remembered and stored nothing, {@link #offset} then being the offset
 * of the message that id was first stored with.
 *
 * @param offset the new message's offset, or the first one's for a duplicate
 * @param duplicate true when nothing was stored
 */
public record AppendResult(long offset, boolean duplicate) {

  /** The message was stored at {@code offset}. */
  public static AppendResult stored(long offset) {
    return new AppendResult(offset, false);
  }

  /** Nothing was stored: the id was first stored at {@code offset}. */
  public static AppendResult duplicateOf(long offset) {
    return new AppendResult(offset, true);
  }
}
