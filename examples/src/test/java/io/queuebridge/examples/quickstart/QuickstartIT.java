package io.queuebridge.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs {@code ./quickstart --skip-build} (what the reactor built is what it runs) in a child
 * process, as a user would, and checks what it prints and how it exits; then pastes the command
 * lines it ends with into a shell, as a user would, on the store it left.
 */
class QuickstartIT {
  private static final Pattern PROGRESS =
      Pattern.compile(
          "^ +\\[ *(\\d+)s] produced (\\d+) \\| in stream (\\d+|\\?) \\| orders-replay (\\d+) \\|"
              + " orders-restored (\\d+)(?: \\| starting: .*)?$",
          Pattern.MULTILINE);

  @TempDir Path work;

  @Test
  void verifyingRunShowsProgressComparesRecordByRecordAndExitsZero() throws Exception {
    // a space in the work directory: the suggested command lines must quote the store's path
    Path workDir = work.resolve("quick start");
    // 60 records at 20/s: 20 before the connectors start, 40 more over the next two seconds
    Run run =
        quickstart(
            "--records",
            "60",
            "--rate",
            "20",
            "--timeout",
            "150",
            "--work-dir",
            workDir.toString());

    assertThat(run.exit).as(run.output).isZero();
    assertThat(run.output)
        .contains(
            "[1] Starting a single-node KRaft broker and a Connect worker",
            "GET /connector-plugins: "
                + PluginUnderTest.SINK_CLASS
                + " "
                + PluginUnderTest.version(),
            "GET /connector-plugins: "
                + PluginUnderTest.SOURCE_CLASS
                + " "
                + PluginUnderTest.version(),
            "[2] Creating topic 'orders' (3 partitions) with sample records",
            "20 now, the rest at 20/s while the connectors run (60 in all)",
            "POST /connectors  etc/sink-protected-stream.json  ->  orders-to-stream",
            "POST /connectors  etc/source-replay.json  ->  orders-replay",
            "POST /connectors  etc/source-restore.json  ->  orders-restore",
            "[4] Records flowing",
            "OK   orders-restored: 60/60 records identical",
            "OK   orders-replay: 60/60 records identical",
            "OK   stream 'orders': 60/60 records identical",
            "RESULT: OK - 60 records orders -> stream 'orders' (60 messages)");

    List<long[]> progress = new ArrayList<>();
    Matcher m = PROGRESS.matcher(run.output);
    while (m.find()) {
      long inStream = m.group(3).equals("?") ? -1 : Long.parseLong(m.group(3));
      progress.add(
          new long[] {
            Long.parseLong(m.group(2)),
            inStream,
            Long.parseLong(m.group(4)),
            Long.parseLong(m.group(5))
          });
    }
    assertThat(progress).as("progress lines in:%n%s", run.output).hasSizeGreaterThanOrEqualTo(2);
    assertThat(progress.get(0)[0])
        .as("records still being produced at the first line")
        .isLessThan(60);
    assertThat(progress).extracting(p -> p[0]).as("produced so far, line by line").isSorted();
    assertThat(progress.get(progress.size() - 1))
        .as("the last progress line: everything arrived")
        .containsExactly(60, 60, 60, 60);
    assertThat(workDir.resolve("worker.log")).isNotEmptyFile();

    // the last lines: the operator command lines to try on the store the run left, run from the
    // directory ./quickstart ran in (the repository) exactly as printed
    String store = "'path=" + workDir.resolve("store") + "'";
    List<String> lines = run.output.strip().lines().toList();
    assertThat(lines.subList(lines.size() - 5, lines.size()))
        .as(run.output)
        .containsExactly(
            "Look at the store it left with the operator command line (it only reads; ./quickstart"
                + " built it):",
            "  bin/queue-bridge queues --store-type file --store " + store,
            "  bin/queue-bridge describe orders --store-type file --store " + store,
            "  bin/queue-bridge tail orders --max 5 --store-type file --store " + store,
            "  bin/queue-bridge groups orders --store-type file --store " + store);
    List<Run> pasted = new ArrayList<>();
    for (String line : lines.subList(lines.size() - 4, lines.size())) {
      Run cli = shell(line.strip());
      assertThat(cli.exit).as("%s:%n%s", line, cli.output).isZero();
      pasted.add(cli);
    }
    // queues: the protected stream with every record the run sent; describe: the same stream;
    // tail: its newest five messages; groups: the two sources' stream groups, caught up
    assertThat(pasted.get(0).output).containsPattern("(?m)^orders +stream +yes +yes +60 ");
    assertThat(pasted.get(1).output)
        .containsPattern("(?m)^Queue: +orders$")
        .containsPattern("(?m)^Messages: +60$");
    assertThat(Pattern.compile("(?m)^offset (\\d+) ").matcher(pasted.get(2).output).results())
        .extracting(r -> r.group(1))
        .containsExactly("55", "56", "57", "58", "59");
    assertThat(pasted.get(3).output)
        .containsPattern("(?m)^connect-orders-replay +stream +no +60 +60 +0 ")
        .containsPattern("(?m)^connect-orders-restore +stream +no +60 +60 +0 ");
  }

  @Test
  void followEndsWithTheConsolesAddressAndTheConsoleShowsTheRunningBridge() throws Exception {
    Path repo = PluginUnderTest.repo();
    ProcessBuilder pb =
        new ProcessBuilder(
                "bash",
                repo.resolve("quickstart").toString(),
                "--skip-build",
                "--follow",
                "--records",
                "20",
                "--rate",
                "20",
                "--work-dir",
                work.resolve("follow").toString())
            .directory(repo.toFile())
            .redirectErrorStream(true);
    String javaBin = Path.of(System.getProperty("java.home"), "bin").toString();
    pb.environment().merge("PATH", javaBin, (old, bin) -> bin + File.pathSeparator + old);
    pb.environment().put("QUICKSTART_JAVA_OPTS", "-Xmx768m");
    Process process = pb.start();
    StringBuilder output = new StringBuilder();
    String prefix =
        "Web console (read-only; the store, the lag of each hop, the connectors' states): ";
    try (java.io.BufferedReader lines = process.inputReader(StandardCharsets.UTF_8)) {
      String url = null;
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        output.append(line).append('\n');
        if (line.startsWith(prefix)) {
          url = line.substring(prefix.length());
          break;
        }
      }
      assertThat(url).as("the console's address in:%n%s", output).startsWith("http://127.0.0.1:");
      java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
      String overview = get(http, url);
      assertThat(overview)
          .contains("orders-to-stream", "orders-replay", "orders-restore", ">orders<");
      String lag = get(http, url + "lag");
      assertThat(lag).contains("RUNNING", "orders-replay");
    } finally {
      process.destroy(); // Ctrl-C: the worker, the broker and the console stop
      boolean exited = process.waitFor(90, TimeUnit.SECONDS);
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      assertThat(exited).as("the quickstart stops on SIGTERM").isTrue();
    }
  }

  private static String get(java.net.http.HttpClient http, String url) throws Exception {
    java.net.http.HttpResponse<String> r =
        http.send(
            java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).build(),
            java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("GET %s: %s", url, r.body()).isEqualTo(200);
    return r.body();
  }

  @Test
  void missingPluginFailsWithAClearMessageAndExitStatusThree() throws Exception {
    Path nowhere = work.resolve("no-such-plugin");
    Run run = quickstart("--plugin-dir", nowhere.toString(), "--work-dir", work.toString());

    assertThat(run.exit).as(run.output).isEqualTo(Quickstart.SETUP_FAILED);
    assertThat(run.output)
        .contains("RESULT: FAILED - no plugin at " + nowhere)
        .contains("mvn -DskipTests package");
  }

  @Test
  void tooFewRecordsIsAUsageError() throws Exception {
    Run run = quickstart("--records", "2", "--work-dir", work.toString());

    assertThat(run.exit).as(run.output).isEqualTo(2);
    assertThat(run.output).contains("--records must be at least " + SampleRecords.MIN_RECORDS);
  }

  private record Run(int exit, String output) {}

  /** {@code line} run by bash in the repository, as pasted into a terminal there. */
  private static Run shell(String line) throws IOException, InterruptedException {
    ProcessBuilder pb =
        new ProcessBuilder("bash", "-c", line)
            .directory(PluginUnderTest.repo().toFile())
            .redirectErrorStream(true);
    String javaBin = Path.of(System.getProperty("java.home"), "bin").toString();
    pb.environment().merge("PATH", javaBin, (old, bin) -> bin + File.pathSeparator + old);
    Path log = Files.createTempFile("quickstart-it-cli-", ".out");
    pb.redirectOutput(log.toFile());
    Process process = pb.start();
    boolean done = process.waitFor(1, TimeUnit.MINUTES);
    if (!done) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    Files.deleteIfExists(log);
    assertThat(done).as("%s finished within a minute; output so far:%n%s", line, output).isTrue();
    System.out.println("$ " + line + "\n" + output);
    return new Run(process.exitValue(), output);
  }

  private static Run quickstart(String... args) throws IOException, InterruptedException {
    Path repo = PluginUnderTest.repo();
    List<String> command = new ArrayList<>(List.of("bash", repo.resolve("quickstart").toString()));
    command.add("--skip-build");
    command.addAll(List.of(args));
    ProcessBuilder pb =
        new ProcessBuilder(command).directory(repo.toFile()).redirectErrorStream(true);
    String javaBin = Path.of(System.getProperty("java.home"), "bin").toString();
    pb.environment().merge("PATH", javaBin, (old, bin) -> bin + File.pathSeparator + old);
    pb.environment().put("QUICKSTART_JAVA_OPTS", "-Xmx768m");
    Path log = Files.createTempFile("quickstart-it-", ".out");
    pb.redirectOutput(log.toFile());
    Process process = pb.start();
    boolean done = process.waitFor(5, TimeUnit.MINUTES);
    if (!done) {
      process.descendants().forEach(ProcessHandle::destroy);
      process.destroy();
      process.waitFor(30, TimeUnit.SECONDS);
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    Files.deleteIfExists(log);
    assertThat(done)
        .as("quickstart finished within 5 minutes; output so far:%n%s", output)
        .isTrue();
    // the failsafe report keeps what the user would have seen
    System.out.println(output);
    return new Run(process.exitValue(), output);
  }
}
