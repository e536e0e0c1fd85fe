package io.queuebridge.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The command lines the quickstart ends with: paths as the caller would type them, quoted. */
class CliHintsTest {
  private static final Path REPO = Path.of("/home/me/queue-bridge");
  private static final Path LAUNCHER = REPO.resolve("bin/queue-bridge");

  @Test
  void underTheCallersDirectoryPathsAreRelative() {
    CliHints hints = new CliHints(LAUNCHER, REPO);

    assertThat(hints.commands(REPO.resolve("examples/target/quickstart/store"), "orders"))
        .containsExactly(
            "bin/queue-bridge queues --store-type file --store path=examples/target/quickstart/store",
            "bin/queue-bridge describe orders --store-type file --store"
                + " path=examples/target/quickstart/store",
            "bin/queue-bridge tail orders --max 5 --store-type file --store"
                + " path=examples/target/quickstart/store",
            "bin/queue-bridge groups orders --store-type file --store"
                + " path=examples/target/quickstart/store");
  }

  @Test
  void elsewhereTheyAreAbsolute() {
    CliHints hints = new CliHints(LAUNCHER, Path.of("/tmp/somewhere"));

    assertThat(hints.commands(Path.of("/var/tmp/qs/store"), "orders").get(0))
        .isEqualTo(
            "/home/me/queue-bridge/bin/queue-bridge queues --store-type file --store"
                + " path=/var/tmp/qs/store");
    // the caller's directory itself, and a directory merely sharing its name's prefix
    assertThat(hints.shown(Path.of("/tmp/somewhere"))).isEqualTo("/tmp/somewhere");
    assertThat(hints.shown(Path.of("/tmp/somewhere-else/x"))).isEqualTo("/tmp/somewhere-else/x");
  }

  @Test
  void aBareNameGetsDotSlashSoThatTheShellDoesNotSearchThePath() {
    CliHints hints = new CliHints(LAUNCHER, REPO.resolve("bin"));

    assertThat(hints.shown(LAUNCHER)).isEqualTo("./queue-bridge");
    assertThat(hints.shown(REPO.resolve("bin/a/b"))).isEqualTo("a/b");
  }

  @Test
  void wordsAShellWouldSplitOrExpandAreSingleQuoted() {
    assertThat(CliHints.word("path=/a/b-c_d.e:f@g%h+i,j")).isEqualTo("path=/a/b-c_d.e:f@g%h+i,j");
    assertThat(CliHints.word("path=/tmp/quick start")).isEqualTo("'path=/tmp/quick start'");
    assertThat(CliHints.word("it's")).isEqualTo("'it'\\''s'");
    assertThat(CliHints.word("$dlq/jobs")).isEqualTo("'$dlq/jobs'");
    assertThat(CliHints.word("a*")).isEqualTo("'a*'");
    assertThat(CliHints.word("")).isEqualTo("''");

    CliHints hints = new CliHints(LAUNCHER, REPO);
    assertThat(hints.commands(Path.of("/tmp/quick start/store"), "$dlq/jobs").get(1))
        .isEqualTo(
            "bin/queue-bridge describe '$dlq/jobs' --store-type file --store"
                + " 'path=/tmp/quick start/store'");
  }
}
