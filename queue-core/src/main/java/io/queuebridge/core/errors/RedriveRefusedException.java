package io.queuebridge.core.errors;

/**
 * A dead-letter redrive cannot move a message: it names no origin queue and no target was given, or
 * the target is the dead-letter queue itself. Everything before that message was moved; it and
 * everything after it are still in the dead-letter queue.
 */
public class RedriveRefusedException extends FatalQueueException {
  private static final long serialVersionUID = 1L;

  public RedriveRefusedException(String deadLetterQueue, long offset, String reason) {
    super(
        deadLetterQueue,
        "cannot redrive offset "
            + offset
            + " of dead-letter queue '"
            + deadLetterQueue
            + "': "
            + reason);
  }
}
