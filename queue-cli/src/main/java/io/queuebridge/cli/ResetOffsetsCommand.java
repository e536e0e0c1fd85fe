package io.queuebridge.cli;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.group.OffsetReset;
import io.queuebridge.core.store.ConsumerGroupState;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code reset-offsets QUEUE --group G ...}: moves a group, dry run first, as Kafka's tool does.
 */
@Command(
    name = "reset-offsets",
    mixinStandardHelpOptions = true,
    description = {
      "Moves a consumer group's position (its cursor and committed offset) on a queue, the way"
          + " kafka-consumer-groups --reset-offsets moves a Kafka group's offsets.",
      "",
      "Without --execute it is a dry run (the default, as in Kafka): it prints the plan and changes"
          + " nothing. With --execute the group moves atomically: messages from the new offset on"
          + " are delivered again (or for the first time), messages before it never again to this"
          + " group, and its pending claims are dropped. A target outside the queue's readable range"
          + " is clamped to the earliest or latest offset. Refused while the group has members"
          + " (stop the consumers first) unless --force; their deliveries can then no longer be"
          + " acknowledged.",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  queue-bridge reset-offsets jobs --group workers --to-earliest --config source.json",
      "  queue-bridge reset-offsets jobs --group workers --to-datetime 2025-01-31T09:00:00Z"
          + " --execute --config source.json",
      "  queue-bridge reset-offsets orders --group archiver --shift-by -100 --execute --store-type"
          + " file --store path=/var/lib/qb"
    })
final class ResetOffsetsCommand extends StoreCommand {
  @Parameters(index = "0", paramLabel = "QUEUE", description = "The queue or stream.")
  String queue;

  @Option(
      names = "--group",
      required = true,
      paramLabel = "GROUP",
      description = "The group (its full id: group or group@pattern).")
  String group;

  @ArgGroup(exclusive = true, multiplicity = "1")
  Target target;

  @ArgGroup(exclusive = true, multiplicity = "0..1")
  Mode mode;

  @Option(names = "--force", description = "Reset even while the group has members.")
  boolean force;

  /** Where to move, exactly one. */
  static final class Target {
    @Option(names = "--to-earliest", description = "To the oldest readable message.")
    boolean earliest;

    @Option(names = "--to-latest", description = "To the tail: skip everything there is.")
    boolean latest;

    @Option(names = "--to-offset", paramLabel = "N", description = "To offset N.")
    Long offset;

    @Option(
        names = "--to-datetime",
        paramLabel = "TIME",
        description =
            "To the first message appended at or after TIME: ISO-8601, 2025-01-31T09:00:00Z (no"
                + " zone: UTC).")
    String datetime;

    @Option(
        names = "--shift-by",
        paramLabel = "N",
        description = "By N from the committed offset (negative: back).")
    Long shiftBy;
  }

  /** Dry run (the default) or execute. */
  static final class Mode {
    @Option(names = "--dry-run", description = "Print the plan; change nothing (the default).")
    boolean dryRun;

    @Option(names = "--execute", description = "Apply the plan.")
    boolean execute;
  }

  private boolean execute() {
    return mode != null && mode.execute;
  }

  @Override
  boolean writes() {
    return execute();
  }

  @Override
  void checkArguments() {
    if (target.offset != null && target.offset < 0) {
      throw new ParameterException(
          spec.commandLine(), "--to-offset is " + target.offset + " (expected an offset >= 0)");
    }
    if (target.datetime != null) {
      parseTime(target.datetime);
    }
  }

  @Override
  void run(StoreSession session, PrintWriter out) {
    session.queue(queue);
    ConsumerGroupState g = session.group(queue, group);
    long requested = requested(session, g);
    ConsumerGroups groups = session.manager().consumerGroups();
    OffsetReset reset =
        execute()
            ? groups.resetOffsets(queue, g.id(), requested, force)
            : groups.planOffsetReset(queue, g.id(), requested);
    Row row = Row.of(reset);
    if (output.json()) {
      Output.printJson(out, List.of(row));
      return;
    }
    Table table = new Table(Row.COLUMNS);
    table.row(row.cells());
    table.print(out);
    if (reset.clamped()) {
      out.println(
          "offset "
              + reset.requested()
              + " is outside the readable range of "
              + queue
              + ": moved to "
              + reset.offset()
              + " instead");
    }
    if (!reset.executed()) {
      out.println(
          "dry run: nothing changed"
              + (reset.members().isEmpty()
                  ? ""
                  : " (the group has members " + reset.members() + ": --execute needs --force)")
              + "; add --execute to apply");
    }
    out.flush();
  }

  private long requested(StoreSession session, ConsumerGroupState g) {
    if (target.earliest) {
      return session.log().head(queue);
    }
    if (target.latest) {
      return session.log().tail(queue);
    }
    if (target.offset != null) {
      if (target.offset < 0) {
        throw new ParameterException(
            spec.commandLine(), "--to-offset is " + target.offset + " (expected an offset >= 0)");
      }
      return target.offset;
    }
    if (target.shiftBy != null) {
      return Math.max(0, g.committed() + target.shiftBy);
    }
    return session.offsetAt(queue, parseTime(target.datetime));
  }

  private Instant parseTime(String text) {
    try {
      return Instant.parse(text);
    } catch (DateTimeParseException zoned) {
      try {
        return LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
      } catch (DateTimeParseException local) {
        throw new ParameterException(
            spec.commandLine(),
            "--to-datetime is '"
                + text
                + "' (expected ISO-8601 such as 2025-01-31T09:00:00Z or 2025-01-31T09:00:00)");
      }
    }
  }

  /** The plan or the result, as printed. */
  record Row(
      @JsonProperty("queue") String queue,
      @JsonProperty("group") String group,
      @JsonProperty("cursor") long cursor,
      @JsonProperty("committed") long committed,
      @JsonProperty("newOffset") long newOffset,
      @JsonProperty("droppedPending") int droppedPending,
      @JsonProperty("members") List<String> members,
      @JsonProperty("executed") boolean executed) {
    static final String[] COLUMNS = {
      "GROUP", "QUEUE", "CURSOR", "COMMITTED", "NEW-OFFSET", "DROPPED-PENDING", "MEMBERS"
    };

    static Row of(OffsetReset r) {
      return new Row(
          r.queue(),
          r.group(),
          r.previousCursor(),
          r.previousCommitted(),
          r.offset(),
          r.droppedPending(),
          r.members(),
          r.executed());
    }

    Object[] cells() {
      return new Object[] {
        group, queue, cursor, committed, newOffset, droppedPending, members.size()
      };
    }
  }
}
