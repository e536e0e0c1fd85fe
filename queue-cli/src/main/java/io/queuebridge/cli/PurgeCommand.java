package io.queuebridge.cli;

import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code purge QUEUE --yes}: removes every message of a queue. */
@Command(
    name = "purge",
    mixinStandardHelpOptions = true,
    description = {
      "Removes every message of a queue, keeping the queue, its configuration and its groups: each"
          + " group moves to the new head and its pending claims are dropped. Offsets are not"
          + " reused. Refused on protected streams. Needs --yes.",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  queue-bridge purge '$dlq/jobs' --yes --config source.json",
      "  queue-bridge purge scratch --yes --store-type file --store path=/var/lib/qb"
    })
final class PurgeCommand extends StoreCommand {
  @Parameters(index = "0", paramLabel = "QUEUE", description = "The queue.")
  String queue;

  @Option(names = "--yes", description = "Yes, remove every message.")
  boolean yes;

  @Override
  boolean writes() {
    return true;
  }

  @Override
  void checkArguments() {
    if (!yes) {
      throw new ParameterException(
          spec.commandLine(),
          "purge removes every message of '" + queue + "' (expected --yes to confirm)");
    }
  }

  @Override
  void run(StoreSession session, PrintWriter out) {
    session.queue(queue);
    long removed = session.manager().purgeQueue(queue);
    if (output.json()) {
      Output.printJson(out, Map.of("queue", queue, "removed", removed));
    } else {
      out.println("purged " + queue + ": " + removed + " messages removed");
      out.flush();
    }
  }
}
