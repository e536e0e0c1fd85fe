package io.queuebridge.cli;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.queuebridge.core.RedriveReport;
import io.queuebridge.core.RedriveRequest;
import io.queuebridge.core.RedrivenMessage;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code dlq redrive DLQ}: dead letters back to their queue, exactly once. */
@Command(
    name = "redrive",
    mixinStandardHelpOptions = true,
    description = {
      "Moves dead-lettered messages back to the queue they came from (each message's"
          + " x-dlq-original-queue property) or to --to, exactly once: a redrive stopped at any"
          + " point, even killed, and run again with the same target neither loses nor duplicates"
          + " a message.",
      "",
      "Messages go in dead-letter order, in batches: each batch is appended to its target with one"
          + " durability barrier, together with a record of how far the redrive got, and only then"
          + " removed from the dead-letter queue. Key, value, headers and timestamp stay byte for"
          + " byte; the properties are kept (the x-dlq-* provenance included) and x-redrive-dlq,"
          + " x-redrive-dlq-offset and x-redriven-at are added. A protected stream is refused as a"
          + " target. Prints each message as it goes ('moved 3 -> jobs@17'; 'already-moved' when an"
          + " earlier, interrupted run appended it and it is only removed now; 'would-move' in a dry"
          + " run), then a summary.",
      "",
      "Run one redrive of a dead-letter queue at a time. A file store must not be held by a worker"
          + " (the writer lock refuses it, naming the holder); a postgres store may be.",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  queue-bridge dlq redrive '$dlq/jobs' --config source.json --dry-run",
      "  queue-bridge dlq redrive '$dlq/jobs' --max 100 --rate 50/s --store-type file --store"
          + " path=/var/lib/qb",
      "  queue-bridge dlq redrive '$dlq/jobs' --to jobs-retry --config source.json -o json"
    })
final class RedriveCommand extends StoreCommand {
  @Parameters(index = "0", paramLabel = "DLQ", description = "The dead-letter queue.")
  String deadLetterQueue;

  @Option(
      names = "--to",
      paramLabel = "QUEUE",
      description = "Send every message to QUEUE instead of its origin.")
  String target;

  @Option(
      names = "--max",
      paramLabel = "N",
      description = "Look at no more than N messages (default: all).")
  Long max;

  @Option(
      names = "--rate",
      paramLabel = "N/s",
      description = "Move no more than N messages a second (N or N/s; default: no limit).")
  String rate;

  @Option(
      names = "--batch-size",
      paramLabel = "N",
      defaultValue = "100",
      description =
          "Messages per step: one barrier and one removal each (default: ${DEFAULT-VALUE}).")
  int batchSize;

  @Option(names = "--dry-run", description = "Show what would move; change nothing.")
  boolean dryRun;

  @Override
  boolean writes() {
    return !dryRun;
  }

  @Override
  void checkArguments() {
    request();
  }

  @Override
  void run(StoreSession session, PrintWriter out) {
    RedriveRequest request = request();
    session.queue(deadLetterQueue);
    List<MovedRow> rows = new ArrayList<>();
    RedriveReport report;
    try {
      report =
          session
              .manager()
              .redriveDeadLetters(
                  request,
                  m -> {
                    MovedRow row = MovedRow.of(m);
                    if (output.json()) {
                      rows.add(row);
                    } else {
                      out.println(row.line());
                      out.flush();
                    }
                  });
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("redrive of '" + deadLetterQueue + "' interrupted");
    }
    if (output.json()) {
      Output.printJson(out, new Summary(report, rows));
    } else {
      out.println(
          (report.dryRun() ? "dry run, nothing changed: " : "")
              + report.moved()
              + (report.dryRun() ? " would move" : " moved")
              + ", "
              + report.alreadyMoved()
              + " already moved, "
              + report.remaining()
              + " left in "
              + report.deadLetterQueue());
      out.flush();
    }
  }

  private RedriveRequest request() {
    try {
      RedriveRequest.Builder b =
          RedriveRequest.builder(deadLetterQueue).batchSize(batchSize).dryRun(dryRun);
      if (target != null) {
        b.target(target);
      }
      if (max != null) {
        b.maxMessages(max);
      }
      if (rate != null) {
        b.ratePerSecond(parseRate(rate));
      }
      return b.build();
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  private double parseRate(String text) {
    String n = text.endsWith("/s") ? text.substring(0, text.length() - 2) : text;
    try {
      double v = Double.parseDouble(n);
      if (v > 0 && !Double.isInfinite(v)) {
        return v;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new ParameterException(
        spec.commandLine(),
        "--rate is '" + text + "' (expected messages per second > 0, as N or N/s: 50/s)");
  }

  /** One message the redrive looked at. */
  record MovedRow(
      @JsonProperty("dlqOffset") long dlqOffset,
      @JsonProperty("target") String target,
      @JsonProperty("targetOffset") Long targetOffset,
      @JsonProperty("outcome") String outcome) {
    static MovedRow of(RedrivenMessage m) {
      return new MovedRow(
          m.deadLetterOffset(),
          m.target(),
          m.targetOffset() < 0 ? null : m.targetOffset(),
          m.outcome().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
    }

    /** {@code moved 3 -> jobs@17}, {@code already-moved 4 -> jobs}. */
    String line() {
      return outcome
          + " "
          + dlqOffset
          + " -> "
          + target
          + (targetOffset == null ? "" : "@" + targetOffset);
    }
  }

  /** The JSON result. */
  record Summary(
      @JsonProperty("deadLetterQueue") String deadLetterQueue,
      @JsonProperty("dryRun") boolean dryRun,
      @JsonProperty("moved") long moved,
      @JsonProperty("alreadyMoved") long alreadyMoved,
      @JsonProperty("remaining") long remaining,
      @JsonProperty("byTarget") Map<String, Long> byTarget,
      @JsonProperty("messages") List<MovedRow> messages) {
    Summary(RedriveReport r, List<MovedRow> messages) {
      this(
          r.deadLetterQueue(),
          r.dryRun(),
          r.moved(),
          r.alreadyMoved(),
          r.remaining(),
          r.byTarget(),
          List.copyOf(messages));
    }
  }
}
