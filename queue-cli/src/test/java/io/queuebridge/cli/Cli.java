package io.queuebridge.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Clock;

/** Runs the command line in this JVM, as {@code bin/queue-bridge} would, capturing its output. */
final class Cli {
  /** What one run printed, and its exit status. */
  record Run(int status, String out, String err) {}

  private Cli() {}

  static Run run(StoreOpener opener, Clock clock, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int status =
        QueueBridgeCli.commandLine(opener, clock, new PrintWriter(out), new PrintWriter(err))
            .execute(args);
    return new Run(status, out.toString(), err.toString());
  }

  /** A run with the ordinary opener and the fixture's clock. */
  static Run run(String... args) {
    return run(StoreOpener.existingStores(), StoreFixture.CLOCK, args);
  }
}
