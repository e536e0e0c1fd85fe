package io.queuebridge.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code dlq}: the dead-letter queue commands. */
@Command(
    name = "dlq",
    mixinStandardHelpOptions = true,
    subcommands = {RedriveCommand.class},
    description = {"Works on dead-letter queues.", ""},
    footer = {"", "Examples:", "  queue-bridge dlq redrive '$dlq/jobs' --config source.json"})
final class DlqCommand implements Runnable {
  @Spec CommandSpec spec;

  /** Without a subcommand: the usage help, as a usage error. */
  @Override
  public void run() {
    throw new picocli.CommandLine.ParameterException(
        spec.commandLine(), "a dlq command is required (expected: redrive)");
  }
}
