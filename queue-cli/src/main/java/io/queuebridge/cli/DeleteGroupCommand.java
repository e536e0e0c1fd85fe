package io.queuebridge.cli;

import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code delete-group QUEUE GROUP --yes}: deletes one consumer group. */
@Command(
    name = "delete-group",
    mixinStandardHelpOptions = true,
    description = {
      "Deletes a consumer group of a queue with its cursor, pending claims and members; the"
          + " queue's messages stay. Deliveries its members still hold can no longer be"
          + " acknowledged. Refused on protected streams. Needs --yes.",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  queue-bridge delete-group jobs old-workers --yes --config source.json",
      "  queue-bridge delete-group orders reader-7 --yes --store-type file --store path=/var/lib/qb"
    })
final class DeleteGroupCommand extends StoreCommand {
  @Parameters(index = "0", paramLabel = "QUEUE", description = "The queue or stream.")
  String queue;

  @Parameters(
      index = "1",
      paramLabel = "GROUP",
      description = "The group (its full id: group or group@pattern).")
  String group;

  @Option(names = "--yes", description = "Yes, delete the group.")
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
          "delete-group deletes group '"
              + group
              + "' of '"
              + queue
              + "' (expected --yes to confirm)");
    }
  }

  @Override
  void run(StoreSession session, PrintWriter out) {
    session.queue(queue);
    session.group(queue, group);
    session.manager().deleteConsumerGroup(queue, group);
    if (output.json()) {
      Output.printJson(out, Map.of("queue", queue, "deletedGroup", group));
    } else {
      out.println("deleted group " + group + " of " + queue);
      out.flush();
    }
  }
}
