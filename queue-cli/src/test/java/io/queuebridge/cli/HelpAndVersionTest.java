package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.QueueBridgeVersion;
import java.util.List;
import org.junit.jupiter.api.Test;

class HelpAndVersionTest {
  private static final List<String> COMMANDS =
      List.of("queues", "describe", "groups", "pending", "tail");

  @Test
  void helpListsEveryCommand() {
    Cli.Run run = Cli.run("--help");

    assertThat(run.status()).isZero();
    assertThat(run.out()).startsWith("Usage: queue-bridge ").contains("Exit status: 0 success");
    for (String command : COMMANDS) {
      assertThat(run.out()).contains("\n  " + command + " ");
    }
    assertThat(run.out()).contains("\n  lag ");
  }

  @Test
  void lagHasHelpWithExamples() {
    Cli.Run run = Cli.run("lag", "--help");

    assertThat(run.status()).isZero();
    assertThat(run.out())
        .startsWith("Usage: queue-bridge lag ")
        .contains("--config=FILE")
        .contains("--bootstrap-server=HOST:PORT")
        .contains("--source-config=FILE")
        .contains("--connect-url=URL")
        .contains("\nExamples:\n  queue-bridge lag ");
  }

  @Test
  void everyCommandHasHelpWithExamples() {
    for (String command : COMMANDS) {
      Cli.Run run = Cli.run(command, "--help");

      assertThat(run.status()).as(command).isZero();
      assertThat(run.out())
          .as(command)
          .startsWith("Usage: queue-bridge " + command + " ")
          .contains("--config=FILE")
          .contains("--store-type=TYPE")
          .contains("--store=KEY=VALUE")
          .contains("\nExamples:\n  queue-bridge " + command + " ");
    }
  }

  @Test
  void versionIsTheBuildsVersion() {
    Cli.Run run = Cli.run("--version");

    assertThat(run.status()).isZero();
    assertThat(run.out()).isEqualTo("queue-bridge " + QueueBridgeVersion.get() + "\n");
  }

  @Test
  void usageErrorsExitWithTwo() {
    Cli.Run noCommand = Cli.run();
    assertThat(noCommand.status()).isEqualTo(2);
    assertThat(noCommand.err()).startsWith("Usage: queue-bridge ");

    Cli.Run unknownCommand = Cli.run("qeueus");
    assertThat(unknownCommand.status()).isEqualTo(2);
    assertThat(unknownCommand.err())
        .startsWith("queue-bridge: Unmatched argument at index 0: 'qeueus'\n")
        .contains("queues");

    assertThat(Cli.run("queues", "--store-type", "memory", "--bogus").status()).isEqualTo(2);
    Cli.Run badFormat = Cli.run("queues", "--store-type", "memory", "-o", "xml");
    assertThat(badFormat.status()).isEqualTo(2);
    assertThat(badFormat.err()).contains("xml");
    Cli.Run upperCase = Cli.run("queues", "--store-type", "memory", "-o", "JSON");
    assertThat(upperCase.err())
        .as("formats in any case: past parsing, to the (absent) store")
        .contains("does not exist");
    assertThat(upperCase.status()).isEqualTo(1);
  }
}
