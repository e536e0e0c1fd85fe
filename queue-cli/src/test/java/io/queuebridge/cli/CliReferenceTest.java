package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The command reference in docs/CLI.md is the usage help of every command, generated from the
 * picocli model; this fails when the committed text drifts. To regenerate: {@code mvn -B -pl
 * queue-cli -am test -Dtest=CliReferenceTest -Dqueuebridge.docs.update=true
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class CliReferenceTest {
  private static final Path DOC = Path.of("..", "docs", "CLI.md");
  private static final String BEGIN = "<!-- BEGIN usage (generated: do not edit) -->";
  private static final String END = "<!-- END usage -->";
  private static final String REGENERATE =
      "mvn -B -pl queue-cli -am test -Dtest=CliReferenceTest -Dqueuebridge.docs.update=true"
          + " -Dsurefire.failIfNoSpecifiedTests=false";

  @Test
  void docsCliMdShowsTheUsageHelpOfEveryCommand() throws IOException {
    String generated = reference();
    if (Boolean.getBoolean("queuebridge.docs.update")) {
      String text = Files.readString(DOC, StandardCharsets.UTF_8);
      Files.writeString(
          DOC,
          text.substring(0, text.indexOf(BEGIN) + BEGIN.length())
              + "\n"
              + generated
              + text.substring(text.indexOf(END)),
          StandardCharsets.UTF_8);
    }
    assertThat(section())
        .as("docs/CLI.md's command reference is out of date; regenerate it with: " + REGENERATE)
        .isEqualTo(generated);
  }

  /** The usage help of the root command and of each subcommand, in Markdown. */
  static String reference() {
    CommandLine root =
        QueueBridgeCli.commandLine(
            StoreOpener.existingStores(),
            Clock.systemUTC(),
            new PrintWriter(new StringWriter()),
            new PrintWriter(new StringWriter()));
    StringBuilder out = new StringBuilder();
    append(out, root);
    root.getSubcommands().values().forEach(sub -> append(out, sub));
    return out.toString();
  }

  private static void append(StringBuilder out, CommandLine command) {
    String usage =
        command.getUsageMessage(CommandLine.Help.Ansi.OFF).replaceAll("[ \\t]+\\n", "\n");
    out.append("### `")
        .append(command.getCommandSpec().qualifiedName())
        .append("`\n\n```text\n")
        .append(usage.strip())
        .append("\n```\n\n");
  }

  private static String section() throws IOException {
    String text = Files.readString(DOC, StandardCharsets.UTF_8);
    int begin = text.indexOf(BEGIN);
    int end = text.indexOf(END);
    if (begin < 0 || end < begin) {
      throw new IllegalStateException(DOC + " lacks the markers " + BEGIN + " and " + END);
    }
    return text.substring(begin + BEGIN.length() + 1, end);
  }
}
