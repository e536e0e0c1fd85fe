package io.queuebridge.connect.source;

import java.util.List;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.TransactionContext;

/**
 * Connector-defined transaction boundaries ({@code transaction.boundary=connector} with
 * exactly-once support): a transaction is committed once it holds at least {@code
 * kafka.transaction.max.records} records, on the last record of the poll batch that reached it, or
 * as soon as a poll finds nothing to read while a transaction is open. So under load a transaction
 * spans several polls (fewer, larger commits), and an idle task never leaves one open.
 *
 * <p>With any other boundary Connect passes no {@link TransactionContext} and this does nothing.
 *
 * <p>Not thread-safe; the poll thread only.
 */
final class TransactionBoundaries {
  private final TransactionContext context;
  private final int maxRecords;
  private int open;

  /**
   * @param context Connect's transaction context, or null when the connector does not define the
   *     boundaries
   */
  TransactionBoundaries(TransactionContext context, int maxRecords) {
    this.context = context;
    this.maxRecords = maxRecords;
  }

  boolean definesBoundaries() {
    return context != null;
  }

  /** Counts a non-empty poll batch; requests a commit on its last record when the limit is hit. */
  void polled(List<SourceRecord> batch) {
    if (context == null || batch.isEmpty()) {
      return;
    }
    open += batch.size();
    if (open >= maxRecords) {
      context.commitTransaction(batch.get(batch.size() - 1));
      open = 0;
    }
  }

  /**
   * A poll found nothing: requests a commit of the open transaction, if there is one.
   *
   * @return whether a commit was requested (the poll should return at once so Connect does it)
   */
  boolean idle() {
    if (context == null || open == 0) {
      return false;
    }
    context.commitTransaction();
    open = 0;
    return true;
  }
}
