package io.queuebridge.core.errors;

/** Explicit offset commits are only for stream-mode groups. */
public class CommitOffsetOnlyForStreamModeException extends FatalQueueException {

  public CommitOffsetOnlyForStreamModeException(String queue, String group) {
    super(
        queue,
        "commitOffset needs a stream-mode group; "
            + group
            + " on queue "
            + queue
            + " is in queue mode");
  }
}
