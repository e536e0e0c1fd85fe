package io.queuebridge.examples.quickstart;

import io.queuebridge.core.QueueBridgeVersion;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code ./quickstart}: a single-node KRaft broker and a Kafka Connect worker in this JVM, the
 * plugin archive on {@code plugin.path} ({@code plugin.discovery=service_load}), sample records
 * through the sink into a protected stream and back out through two source connectors, checked
 * record by record. See {@link QuickstartRun} for the steps.
 *
 * <p>Exit status: {@value #OK} when the round trip is verified, {@value #FLOW_FAILED} when the data
 * did not flow as expected (the message says what differed), {@value #SETUP_FAILED} when something
 * needed is missing (no plugin directory, the worker did not start), 2 for bad arguments.
 */
@Command(
    name = "quickstart",
    mixinStandardHelpOptions = true,
    versionProvider = Quickstart.Version.class,
    sortOptions = false,
    description = {
      "Runs a single-node KRaft broker and a Kafka Connect worker in one JVM with the Queue Bridge"
          + " plugin on plugin.path, sends sample records topic -> sink -> protected stream ->"
          + " source -> topics, shows progress, and verifies the round trip record by record.",
      ""
    },
    footer = {
      "",
      "The ./quickstart script builds the plugin and bin/queue-bridge first (--skip-build: reuse"
          + " the last build) and passes --work-dir examples/target/quickstart unless given one.",
      "Exit status: 0 round trip verified, 1 the data did not flow as expected, 2 bad arguments,"
          + " 3 something needed is missing (plugin not built, broker or worker did not start)."
    })
public final class Quickstart implements Callable<Integer> {
  /** The round trip was verified. */
  public static final int OK = 0;

  /** The data did not flow as expected. */
  public static final int FLOW_FAILED = 1;

  /** Something the run needs is missing or did not start. */
  public static final int SETUP_FAILED = 3;

  @Option(
      names = "--plugin-dir",
      paramLabel = "DIR",
      description =
          "The unpacked plugin archive (manifest.json, lib/, etc/). Default:"
              + " connect-plugin/target/plugin/queue-bridge-<version> under the current directory.")
  Path pluginDir;

  @Option(
      names = "--work-dir",
      paramLabel = "DIR",
      description =
          "Where the store (store/) and the broker and worker log (worker.log) go; emptied"
              + " first. Default: a new temporary directory.")
  Path workDir;

  @Option(
      names = "--records",
      paramLabel = "N",
      defaultValue = "300",
      description = "Sample records to send (at least 6). Default: ${DEFAULT-VALUE}.")
  int records;

  @Option(
      names = "--rate",
      paramLabel = "N",
      defaultValue = "100",
      description =
          "Records sent per second: the first second's worth before the connectors start, the"
              + " rest while they run. Default: ${DEFAULT-VALUE}.")
  int rate;

  @Option(
      names = "--follow",
      description =
          "After the round trip is verified, keep everything running, send one more record a"
              + " second and print the counts, until Ctrl-C.")
  boolean follow;

  @Option(
      names = "--timeout",
      paramLabel = "SECONDS",
      defaultValue = "120",
      description = "Longest wait for the records to flow through. Default: ${DEFAULT-VALUE}.")
  int timeoutSeconds;

  @Option(
      names = "--show",
      paramLabel = "N",
      defaultValue = "8",
      description = "Rows shown per table (0 = all). Default: ${DEFAULT-VALUE}.")
  int show;

  private final PrintStream out;

  public Quickstart() {
    this(System.out);
  }

  Quickstart(PrintStream out) {
    this.out = out;
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new Quickstart()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (records < SampleRecords.MIN_RECORDS) {
      throw new CommandLine.ParameterException(
          new CommandLine(this),
          "--records must be at least " + SampleRecords.MIN_RECORDS + ": " + records);
    }
    if (timeoutSeconds < 1 || rate < 1 || show < 0) {
      throw new CommandLine.ParameterException(
          new CommandLine(this), "--timeout and --rate must be at least 1, --show at least 0");
    }
    Path plugin =
        pluginDir != null
            ? pluginDir
            : Paths.get(
                "connect-plugin", "target", "plugin", "queue-bridge-" + QueueBridgeVersion.get());
    Path work = prepareWorkDir(workDir);
    // before any Kafka class asks for a logger: the broker's and the worker's chatter go to a file
    configureLogging(work.resolve("worker.log"));
    // the test harness prints a few lines of its own to System.out; this run prints to `out`
    if (out == System.out) {
      System.setOut(
          new PrintStream(
              Files.newOutputStream(work.resolve("harness-stdout.log")),
              true,
              StandardCharsets.UTF_8));
    }
    QuickstartRun run =
        new QuickstartRun(
            out,
            plugin.toAbsolutePath().normalize(),
            work,
            records,
            rate,
            Duration.ofSeconds(timeoutSeconds),
            show == 0 ? Integer.MAX_VALUE : show,
            follow,
            CliHints.fromSystemProperties());
    try {
      return run.execute();
    } finally {
      out.flush();
    }
  }

  private static Path prepareWorkDir(Path requested) throws IOException {
    if (requested == null) {
      return Files.createTempDirectory("queue-bridge-quickstart-").toAbsolutePath();
    }
    Path dir = requested.toAbsolutePath().normalize();
    if (Files.exists(dir)) {
      try (Stream<Path> all = Files.walk(dir)) {
        all.sorted(Comparator.reverseOrder())
            .filter(p -> !p.equals(dir))
            .forEach(
                p -> {
                  try {
                    Files.delete(p);
                  } catch (IOException e) {
                    throw new UncheckedIOException("cannot empty the work directory " + dir, e);
                  }
                });
      }
    }
    Files.createDirectories(dir);
    return dir;
  }

  private static void configureLogging(Path logFile) {
    setIfAbsent("org.slf4j.simpleLogger.logFile", logFile.toString());
    setIfAbsent("org.slf4j.simpleLogger.defaultLogLevel", "info");
    setIfAbsent("org.slf4j.simpleLogger.showDateTime", "true");
    setIfAbsent("org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS");
  }

  private static void setIfAbsent(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }

  /** The version of the queue-bridge build on the class path. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"Queue Bridge quickstart " + QueueBridgeVersion.get()};
    }
  }
}
