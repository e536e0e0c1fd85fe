package io.queuebridge.cli;

import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code pending QUEUE GROUP}: a group's pending entry list. */
@Command(
    name = "pending",
    mixinStandardHelpOptions = true,
    description = {
      "Lists the pending entries of a consumer group.",
      "",
      "The messages claimed and not yet settled, by offset: who holds each, how often it was"
          + " delivered, when it was claimed, how long ago, and when another member may claim it."
          + " Entries no member holds yet have no consumer and 0 deliveries: a delayed message"
          + " read before its due time (VISIBLE-AT is that time), or, on a queue with per-key"
          + " ordering, one blocked behind an earlier message of its key (VISIBLE-AT blocked).",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  queue-bridge pending jobs workers --config source.json",
      "  queue-bridge pending jobs workers --store-type file --store path=/var/lib/qb -o json"
    })
final class PendingCommand extends StoreCommand {
  @Parameters(index = "0", paramLabel = "QUEUE", description = "The queue.")
  String queue;

  @Parameters(
      index = "1",
      paramLabel = "GROUP",
      description = "The consumer group (its full id: group or group@pattern).")
  String group;

  @Override
  void run(StoreSession session, PrintWriter out) {
    session.queue(queue);
    List<PendingRow> rows =
        session.group(queue, group).pending().stream()
            .map(e -> PendingRow.of(e, session.now()))
            .toList();
    if (output.json()) {
      Output.printJson(out, rows);
      return;
    }
    Table table = new Table(PendingRow.COLUMNS);
    rows.forEach(r -> table.row(r.cells()));
    table.print(out);
  }
}
