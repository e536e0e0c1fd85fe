package io.queuebridge.core.store.file;

import io.queuebridge.core.errors.QueueStoreException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sticky sync failure of one queue's log. A failed barrier of any of its segments (a caller's
 * or the background sync's) is recorded here before the barrier's waiters wake; from then on every
 * write first retries an fsync ({@link #retry}) and is refused while it keeps failing, so nothing
 * written after a failure is ever reported durable. Also counts the barriers that completed.
 *
 * <p>Thread-safe: recorded by whichever thread ran the barrier, retried under the append lock.
 */
final class StickyFailure implements Segment.SyncObserver {
  private static final Logger LOG = LoggerFactory.getLogger(StickyFailure.class);

  private final String queue;
  private final Path dir;
  private final LongAdder syncs;
  private volatile IOException failure;

  /** For the log of {@code queue} in {@code dir}; completed barriers are added to {@code syncs}. */
  StickyFailure(String queue, Path dir, LongAdder syncs) {
    this.queue = queue;
    this.dir = dir;
    this.syncs = syncs;
  }

  @Override
  public void synced() {
    syncs.increment();
  }

  @Override
  public void syncFailed(IOException e) {
    failure = e;
    LOG.warn("fsync failed for queue {} in {}: {}", queue, dir, e.toString());
  }

  /**
   * Returns at once when no failure is recorded; otherwise retries an fsync of {@code active} and
   * clears the failure when it works. The caller holds the append lock.
   *
   * @throws QueueStoreException if the retry fails too (the failure stays recorded)
   */
  void retry(Segment active) {
    IOException previous = failure;
    if (previous != null) {
      try {
        active.forceNow();
        failure = null;
        LOG.info("queue {}: fsync works again after an earlier failure", queue);
      } catch (IOException e) {
        throw new QueueStoreException(
            queue,
            "previous sync failure persists for queue "
                + queue
                + " ("
                + previous
                + "); retry failed: "
                + e,
            e);
      }
    }
  }
}
