package io.queuebridge.core.errors;

/** A classic queue holds {@code maxDepth} messages; the publish is refused (BEHAVIOUR L-LIMITS). */
public class QueueFullException extends RetriableQueueException {
  private final long depth;
  private final long maxDepth;

  public QueueFullException(String queue, long depth, long maxDepth) {
    super(
        queue,
        "queue full: " + queue + " holds " + depth + " messages (max depth " + maxDepth + ")");
    this.depth = depth;
    this.maxDepth = maxDepth;
  }

  public long depth() {
    return depth;
  }

  public long maxDepth() {
    return maxDepth;
  }
}
