package io.queuebridge.connect.sink;

import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTaskContext;

/**
 * Records that cannot be written (too large, unconvertible, a due time a queue refuses): under
 * {@code errors.tolerance=all} handed to Connect's {@link ErrantRecordReporter} (the dead-letter
 * topic), otherwise they fail the task. Not thread-safe: the task thread only.
 */
final class ErrantRecords {
  /** Null when errant records fail the task. */
  private final ErrantRecordReporter reporter;

  private final SinkMetrics metrics;

  /**
   * @param reporter Connect's reporter, or null when errant records fail the task
   */
  ErrantRecords(ErrantRecordReporter reporter, SinkMetrics metrics) {
    this.reporter = reporter;
    this.metrics = metrics;
  }

  /**
   * Connect's reporter when {@code tolerates} ({@code errors.tolerance=all}) and the worker has one
   * (2.6 and later); otherwise null.
   */
  static ErrantRecordReporter reporter(SinkTaskContext context, boolean tolerates) {
    if (!tolerates) {
      return null;
    }
    try {
      return context.errantRecordReporter();
    } catch (NoSuchMethodError | NoClassDefFoundError e) {
      return null; // a worker older than 2.6
    }
  }

  /**
   * Reports {@code record}, failed with {@code e}, to the reporter without waiting for it.
   *
   * @return completes once the record is in the dead-letter topic (see {@link #awaitAll})
   * @throws ConnectException naming the record when there is no reporter
   */
  Future<Void> report(SinkRecord record, DataException e) {
    if (reporter == null) {
      String named = "record " + DueTimeHeaders.coordinates(record);
      String why = String.valueOf(e.getMessage());
      throw new ConnectException(
          "cannot write "
              + (why.startsWith(named + ":") || why.startsWith(named + " ")
                  ? why // it names the record already
                  : named + ": " + why)
              + " (set errors.tolerance=all and errors.deadletterqueue.topic.name to route such"
              + " records to a dead-letter topic instead)",
          e);
    }
    metrics.errant();
    return reporter.report(record, e);
  }

  /**
   * Waits until every one of {@code reported} is in the dead-letter topic.
   *
   * @throws RetriableException if interrupted (the rest is not waited for)
   * @throws ConnectException if a report failed
   */
  static void awaitAll(List<Future<Void>> reported) {
    for (Future<Void> f : reported) {
      try {
        f.get();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new RetriableException("interrupted while reporting an errant record", e);
      } catch (ExecutionException e) {
        throw new ConnectException("could not report an errant record", e.getCause());
      }
    }
  }
}
