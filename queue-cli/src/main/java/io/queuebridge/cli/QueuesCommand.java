package io.queuebridge.cli;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueNotFoundException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;

/** {@code queues}: every queue and stream of the store, one row each. */
@Command(
    name = "queues",
    mixinStandardHelpOptions = true,
    description = {
      "Lists the store's queues and streams.",
      "",
      "For each: type, durability, the PROTECTED (reserved) flag, how many messages it holds and"
          + " their offsets, the bytes they occupy in the store (as the store counts them: file"
          + " segments, memory payloads, postgres encoded messages), the age of the oldest message,"
          + " and how many consumer groups read it.",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  queue-bridge queues --config sink.json",
      "  queue-bridge queues --store-type file --store path=/var/lib/queue-bridge",
      "  queue-bridge queues --store-type postgres --store url=jdbc:postgresql://db/qb \\",
      "      --store user=qb --store 'password=$${file:/etc/kafka/qb.properties:password}'",
      "  queue-bridge queues --config sink.json -o json"
    })
final class QueuesCommand extends StoreCommand {
  @Override
  void run(StoreSession session, PrintWriter out) {
    List<QueueRow> rows = new ArrayList<>();
    for (QueueConfig queue : session.queues()) {
      try {
        rows.add(QueueRow.of(session, queue));
      } catch (QueueNotFoundException deletedSince) {
        // deleted by another process (a shared store) after the listing: no longer a queue
      }
    }
    if (output.json()) {
      Output.printJson(out, rows);
      return;
    }
    Table table = new Table(QueueRow.COLUMNS);
    rows.forEach(r -> table.row(r.cells()));
    table.print(out);
  }
}
