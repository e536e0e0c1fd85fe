package io.queuebridge.web;

import io.queuebridge.cli.CliException;
import io.queuebridge.cli.CommandRunner;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code queue-bridge serve}: the web console, until interrupted. */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = {
      "Serves the web console: the queues, streams, consumer groups, messages and dead letters of"
          + " the stores the connector configs name, with charts of depth, rates and lag sampled"
          + " while it runs, and the bridge-lag table. Read-only unless --allow-changes; then"
          + " redrive, delete, pause and resume need the login token it prints. Runs until"
          + " interrupted (Ctrl-C).",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  queue-bridge serve --config sink.json --config source.json",
      "  queue-bridge serve --config source.json --allow-changes --token-file /etc/qb/console-token",
      "  queue-bridge serve --config sink.json --config source.json --bootstrap-server kafka:9092"
          + " --connect-url http://connect:8083"
    })
final class ServeCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--config",
      required = true,
      paramLabel = "FILE",
      description =
          "A connector config file (the JSON posted to Connect, or its bare config map); repeat it"
              + " for each connector. Configs naming one store show it once.")
  List<Path> configs = new ArrayList<>();

  @Option(
      names = "--bind",
      paramLabel = "ADDRESS",
      defaultValue = "127.0.0.1",
      description =
          "The address to listen on. Default: ${DEFAULT-VALUE} (this machine only); 0.0.0.0 for"
              + " every interface.")
  String bind;

  @Option(
      names = "--port",
      paramLabel = "PORT",
      defaultValue = "8380",
      description = "The port to listen on; 0 for any free one. Default: ${DEFAULT-VALUE}.")
  int port;

  @Option(
      names = "--allow-changes",
      description =
          "Offer and accept changes: dead-letter redrive, delete (purge), pause and resume. Each"
              + " needs a login with the token.")
  boolean allowChanges;

  @Option(
      names = "--token-file",
      paramLabel = "FILE",
      description =
          "Read the login token from FILE (its first line) instead of generating one and printing"
              + " it. Needs --allow-changes.")
  Path tokenFile;

  @Option(
      names = "--sample-interval",
      paramLabel = "DURATION",
      defaultValue = "10s",
      description = "How often every queue is sampled for the charts. Default: ${DEFAULT-VALUE}.")
  String sampleInterval;

  @Option(
      names = "--history",
      paramLabel = "DURATION",
      defaultValue = "1h",
      description =
          "How far back the charts go (samples older than that are dropped; nothing is kept"
              + " across restarts). Default: ${DEFAULT-VALUE}.")
  String history;

  @Option(
      names = "--bootstrap-server",
      paramLabel = "HOST:PORT",
      description = "The Kafka cluster the sink reads: turns on the bridge-lag page (as lag).")
  String bootstrapServer;

  @Option(
      names = "--connect-url",
      paramLabel = "URL",
      description = "The Connect worker's REST address, for the connector states on the lag page.")
  String connectUrl;

  @Option(
      names = "--command-config",
      paramLabel = "FILE",
      description = "Java properties for the Kafka Admin client of the lag page (as lag).")
  Path commandConfig;

  /** Counted down when the console should stop (tests); the JVM's shutdown otherwise. */
  private final CountDownLatch stop = new CountDownLatch(1);

  @Override
  public Integer call() throws InterruptedException {
    ConsoleSettings settings = settings();
    PrintWriter out = spec.commandLine().getOut();
    Bridge bridge;
    try {
      bridge = Bridge.of(settings.configs(), CommandRunner.create(Clock.systemUTC()));
    } catch (CliException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage());
    }
    Console console = Console.start(settings, bridge, Clock.systemUTC());
    Thread hook = new Thread(() -> stopConsole(console), "queue-bridge-console-stop");
    Runtime.getRuntime().addShutdownHook(hook);
    out.println("Queue Bridge console: " + console.url());
    if (settings.allowChanges()) {
      out.println(
          tokenFile == null
              ? "Login token (changes need it; shown only now): " + settings.token()
              : "Login token: the first line of " + tokenFile);
    } else {
      out.println("Read-only (start with --allow-changes to redrive, delete, pause and resume).");
    }
    out.flush();
    try {
      stop.await();
    } finally {
      stopConsole(console);
    }
    return 0;
  }

  private void stopConsole(Console console) {
    stop.countDown();
    console.close();
  }

  private ConsoleSettings settings() {
    if (port < 0 || port > 65535) {
      throw usage("--port " + port + ": expected 0 (any free port) to 65535");
    }
    if (tokenFile != null && !allowChanges) {
      throw usage("--token-file needs --allow-changes (a read-only console has no login)");
    }
    Duration interval = duration("--sample-interval", sampleInterval);
    Duration kept = duration("--history", history);
    if (interval.toSeconds() < 1) {
      throw usage("--sample-interval " + sampleInterval + ": expected at least 1s");
    }
    if (kept.compareTo(interval) < 0) {
      throw usage("--history " + history + " is shorter than --sample-interval " + sampleInterval);
    }
    if ((connectUrl != null || commandConfig != null) && bootstrapServer == null) {
      throw usage("--connect-url and --command-config need --bootstrap-server (the lag page)");
    }
    String token = null;
    if (allowChanges) {
      token = tokenFile == null ? Sessions.randomToken() : readToken(tokenFile);
    }
    ConsoleSettings.LagSettings lag =
        bootstrapServer == null
            ? null
            : new ConsoleSettings.LagSettings(bootstrapServer, connectUrl, commandConfig);
    return new ConsoleSettings(configs, bind, port, allowChanges, token, interval, kept, lag);
  }

  private String readToken(Path file) {
    String token;
    try {
      token = Files.readAllLines(file, StandardCharsets.UTF_8).stream().findFirst().orElse("");
    } catch (IOException e) {
      throw usage("--token-file " + file + ": cannot read it (" + e.getMessage() + ")");
    }
    token = token.strip();
    if (token.length() < 16) {
      throw usage(
          "--token-file "
              + file
              + ": its first line holds "
              + token.length()
              + " characters (expected a token of at least 16)");
    }
    return token;
  }

  /** {@code 500ms}, {@code 10s}, {@code 5m}, {@code 2h}, or ISO-8601 ({@code PT10S}). */
  private Duration duration(String option, String text) {
    String t = text.strip().toLowerCase(Locale.ROOT);
    try {
      if (t.startsWith("pt") || t.startsWith("p")) {
        return positive(option, text, Duration.parse(text.strip().toUpperCase(Locale.ROOT)));
      }
      if (t.endsWith("ms")) {
        return positive(
            option, text, Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2))));
      }
      long n = Long.parseLong(t.substring(0, t.length() - 1));
      switch (t.charAt(t.length() - 1)) {
        case 's':
          return positive(option, text, Duration.ofSeconds(n));
        case 'm':
          return positive(option, text, Duration.ofMinutes(n));
        case 'h':
          return positive(option, text, Duration.ofHours(n));
        default:
          break;
      }
    } catch (RuntimeException e) {
      // refused below
    }
    throw usage(option + " " + text + ": expected a duration such as 10s, 5m or 2h");
  }

  private Duration positive(String option, String text, Duration d) {
    if (d.isNegative() || d.isZero()) {
      throw usage(option + " " + text + ": expected a duration > 0");
    }
    return d;
  }

  private ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }
}
