package io.queuebridge.core.errors;

/**
 * The store cannot establish a durability barrier that survives a machine crash, so nothing can be
 * acknowledged as durable.
 */
public class DurableSyncUnsupportedException extends FatalQueueException {

  public DurableSyncUnsupportedException(String queue, String store) {
    super(
        queue,
        "queue store "
            + store
            + " does not support durable sync"
            + (queue == null ? "" : " (queue " + queue + ")"));
  }
}
