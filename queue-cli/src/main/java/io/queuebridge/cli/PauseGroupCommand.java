package io.queuebridge.cli;

import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code pause-group QUEUE GROUP} and {@code resume-group QUEUE GROUP}: set a consumer group's
 * stored pause flag (BEHAVIOUR Q-PAUSE), which every process sharing the store honours.
 */
abstract class PauseGroupCommand extends StoreCommand {
  @Parameters(index = "0", paramLabel = "QUEUE", description = "The queue or stream.")
  String queue;

  @Parameters(
      index = "1",
      paramLabel = "GROUP",
      description = "The group (its full id: group or group@pattern).")
  String group;

  /** Whether this command pauses (true) or resumes (false). */
  abstract boolean pauses();

  @Override
  boolean writes() {
    return true;
  }

  @Override
  void run(StoreSession session, PrintWriter out) {
    session.queue(queue);
    session.group(queue, group);
    boolean changed =
        pauses()
            ? session.manager().consumerGroups().pause(queue, group)
            : session.manager().consumerGroups().resume(queue, group);
    String state = pauses() ? "paused" : "resumed";
    if (output.json()) {
      Map<String, Object> result = new LinkedHashMap<>();
      result.put("queue", queue);
      result.put("group", group);
      result.put("paused", pauses());
      result.put("changed", changed);
      Output.printJson(out, result);
    } else {
      out.println(
          changed
              ? state + " group " + group + " of " + queue
              : "group "
                  + group
                  + " of "
                  + queue
                  + (pauses() ? " was paused already" : " was not paused")
                  + " (nothing changed)");
      out.flush();
    }
  }

  /** {@code pause-group}. */
  @Command(
      name = "pause-group",
      mixinStandardHelpOptions = true,
      description = {
        "Pauses a consumer group's delivery: its claims and stream reads hand out nothing, in"
            + " every process sharing the store (the source connector included), until"
            + " resume-group. Deliveries its members hold can still be settled. The pause is"
            + " stored, so it survives restarts.",
        ""
      },
      footer = {
        "",
        "Examples:",
        "  queue-bridge pause-group jobs workers --config source.json",
        "  queue-bridge pause-group orders connect-replay --store-type postgres --store url=..."
      })
  static final class Pause extends PauseGroupCommand {
    @Override
    boolean pauses() {
      return true;
    }
  }

  /** {@code resume-group}. */
  @Command(
      name = "resume-group",
      mixinStandardHelpOptions = true,
      description = {"Resumes a paused consumer group's delivery (see pause-group).", ""},
      footer = {"", "Examples:", "  queue-bridge resume-group jobs workers --config source.json"})
  static final class Resume extends PauseGroupCommand {
    @Override
    boolean pauses() {
      return false;
    }
  }
}
