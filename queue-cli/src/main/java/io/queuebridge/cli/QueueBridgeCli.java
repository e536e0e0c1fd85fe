package io.queuebridge.cli;

import io.queuebridge.core.QueueBridgeVersion;
import io.queuebridge.core.errors.QueueException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code bin/queue-bridge}: the operator command line. Every command reads a store named by a
 * connector config file or by the provider's keys ({@link StoreOptions}) and prints a table, or
 * JSON with {@code -o json}; {@code lag} also asks Kafka (and Connect) how far the connectors are.
 *
 * <p>Exit status: {@value #OK} success, {@value #FAILED} failure (a one-line error on stderr naming
 * what was wrong), {@value #USAGE} usage error.
 */
@Command(
    name = "queue-bridge",
    mixinStandardHelpOptions = true,
    versionProvider = QueueBridgeCli.Version.class,
    subcommands = {
      QueuesCommand.class,
      DescribeCommand.class,
      GroupsCommand.class,
      PendingCommand.class,
      TailCommand.class,
      DlqCommand.class,
      ResetOffsetsCommand.class,
      PurgeCommand.class,
      DeleteGroupCommand.class,
      PauseGroupCommand.Pause.class,
      PauseGroupCommand.Resume.class,
      RepairCommand.class,
      LagCommand.class
    },
    description = {
      "Inspects and repairs a Queue Bridge store: its queues, consumer groups, pending entries"
          + " and messages. queues, describe, groups, pending and tail only read (beside a running"
          + " worker); dlq redrive, reset-offsets --execute, purge, delete-group,"
          + " pause-group and resume-group change the store; repair cuts the damage found in a file store's segments; lag shows how far"
          + " behind each connector hop is.",
      ""
    },
    footer = {
      "",
      "Name the store with --config FILE (a connector config, as posted to Connect) or with"
          + " --store-type TYPE and --store KEY=VALUE. Every command has --help.",
      "",
      "Examples:",
      "  queue-bridge queues --config sink.json",
      "  queue-bridge describe orders --store-type file --store path=/var/lib/queue-bridge",
      "  queue-bridge groups jobs --config source.json -o json",
      "  queue-bridge dlq redrive '$dlq/jobs' --config source.json --dry-run",
      "  queue-bridge repair --dry-run --store-type file --store path=/var/lib/queue-bridge",
      "  queue-bridge lag --config sink.json --bootstrap-server kafka:9092",
      "",
      "Exit status: 0 success, 1 failure (one line on stderr says what), 2 usage error."
    })
public final class QueueBridgeCli implements Callable<Integer> {
  static final int OK = 0;
  static final int FAILED = 1;
  static final int USAGE = 2;

  /** The width usage help is laid out in, on a terminal and in docs/CLI.md alike. */
  static final int USAGE_WIDTH = 100;

  @Spec CommandSpec spec;

  private final StoreOpener opener;
  private final Clock clock;

  private QueueBridgeCli(StoreOpener opener, Clock clock) {
    this.opener = Objects.requireNonNull(opener, "opener");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  public static void main(String[] args) {
    PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
    PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
    int status =
        commandLine(StoreOpener.existingStores(), Clock.systemUTC(), out, err).execute(args);
    System.exit(status);
  }

  /**
   * The command line over {@code opener} and {@code clock}, printing to {@code out} and {@code
   * err}: what {@link #main} runs, and what tests run in-process with a store they built.
   */
  static CommandLine commandLine(
      StoreOpener opener, Clock clock, PrintWriter out, PrintWriter err) {
    CommandLine cli = new CommandLine(new QueueBridgeCli(opener, clock));
    // before the settings below: each applies to the subcommands added so far
    for (CliExtension extension : ServiceLoader.load(CliExtension.class)) {
      cli.addSubcommand(extension.command());
    }
    cli.setOut(out);
    cli.setErr(err);
    cli.setUsageHelpWidth(USAGE_WIDTH);
    cli.setCaseInsensitiveEnumValuesAllowed(true);
    cli.setExecutionExceptionHandler(
        (e, command, parsed) -> {
          command.getErr().println("queue-bridge: " + Text.oneLine(messageOf(e)));
          command.getErr().flush();
          return FAILED;
        });
    cli.setParameterExceptionHandler(
        (e, args) -> {
          CommandLine command = e.getCommandLine();
          PrintWriter to = command.getErr();
          to.println("queue-bridge: " + Text.oneLine(e.getMessage()));
          CommandLine.UnmatchedArgumentException.printSuggestions(e, to);
          to.println(
              "Try '"
                  + command.getCommandSpec().qualifiedName()
                  + " --help' for more information.");
          to.flush();
          return USAGE;
        });
    return cli;
  }

  /** The message a failure is reported with: the core's and ours as they are, others named. */
  static String messageOf(Throwable e) {
    if (e instanceof CliException || e instanceof QueueException) {
      return e.getMessage();
    }
    return e.toString();
  }

  StoreOpener opener() {
    return opener;
  }

  Clock clock() {
    return clock;
  }

  /** Without a command: the usage help, as a usage error. */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return USAGE;
  }

  /** {@code --version}: the queue-bridge build on the class path. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"queue-bridge " + QueueBridgeVersion.get()};
    }
  }
}
