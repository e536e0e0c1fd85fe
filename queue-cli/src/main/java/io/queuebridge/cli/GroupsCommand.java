package io.queuebridge.cli;

import io.queuebridge.core.store.ConsumerGroupState;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code groups QUEUE [GROUP]}: the consumer groups of a queue, or their members. */
@Command(
    name = "groups",
    mixinStandardHelpOptions = true,
    description = {
      "Lists the consumer groups of a queue, or their members.",
      "",
      "For each group (or only GROUP): mode, cursor, committed offset, lag (tail - committed),"
          + " pending entries a member holds, scheduled ones no member holds yet (delayed"
          + " messages read before their due time; the next message of an ordering key once the"
          + " one before it was settled), blocked ones (held back behind an earlier message of"
          + " their ordering key on a queue with per-key ordering), how many held entries were"
          + " delivered more than once, members, and the age of the oldest held entry. With"
          + " --members, the groups' members instead.",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  queue-bridge groups jobs --config source.json",
      "  queue-bridge groups jobs workers --members --store-type file --store path=/var/lib/qb",
      "  queue-bridge groups orders archiver --config sink.json -o json"
    })
final class GroupsCommand extends StoreCommand {
  @Parameters(index = "0", paramLabel = "QUEUE", description = "The queue or stream.")
  String queue;

  @Parameters(
      index = "1",
      arity = "0..1",
      paramLabel = "GROUP",
      description = "Only this group (its full id: group or group@pattern).")
  String group;

  @Option(
      names = "--members",
      description =
          "List the members instead: consumer id, client, pending entries held, time since the"
              + " last heartbeat.")
  boolean members;

  @Override
  void run(StoreSession session, PrintWriter out) {
    session.queue(queue);
    List<ConsumerGroupState> groups =
        group == null ? session.groups(queue) : List.of(session.group(queue, group));
    if (members) {
      List<MemberRow> rows =
          groups.stream().flatMap(g -> MemberRow.of(g, session.now()).stream()).toList();
      if (output.json()) {
        Output.printJson(out, rows);
      } else {
        Table table = new Table(MemberRow.COLUMNS);
        rows.forEach(r -> table.row(r.cells()));
        table.print(out);
      }
      return;
    }
    long tail = session.log().tail(queue);
    List<GroupRow> rows = groups.stream().map(g -> GroupRow.of(g, tail, session.now())).toList();
    if (output.json()) {
      Output.printJson(out, rows);
    } else {
      printTable(out, rows);
    }
  }

  static void printTable(PrintWriter out, List<GroupRow> rows) {
    Table table = new Table(GroupRow.COLUMNS);
    rows.forEach(r -> table.row(r.cells()));
    table.print(out);
  }
}
