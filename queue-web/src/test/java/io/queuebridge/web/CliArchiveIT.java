package io.queuebridge.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The distribution archive as an operator installs it: {@code queue-bridge-<version>-cli.tar.gz}
 * unpacked with {@code tar} into a temporary directory, its layout, and its {@code
 * bin/queue-bridge} run as a child process with nothing but bash and java on the {@code PATH}.
 * Beside it the repository's {@code bin/queue-bridge} (the same script, in the other layout) runs
 * from the build output, on the same store, with the same output.
 *
 * <p>Failsafe passes the paths the build wrote as system properties ({@code queuebridge.*}, see the
 * pom); every child process is bounded by {@link #PROCESS_TIMEOUT}.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CliArchiveIT {
  private static final Duration PROCESS_TIMEOUT = Duration.ofSeconds(60);
  private static final int INVOICES = 7;
  private static final int AUDIT = 3;

  @TempDir static Path temp;

  /** The unpacked archive: {@code <temp>/unpacked/queue-bridge-<version>-cli}. */
  private static Path home;

  /** A file store the test wrote: {@code invoices} (7 messages) and {@code audit} (3). */
  private static Path store;

  /** A directory holding only {@code bash}: with the JDK's bin/, the whole PATH of a run. */
  private static Path bashOnly;

  @BeforeAll
  static void unpackTheArchiveAndWriteAStore() throws Exception {
    Path archive = Path.of(property("queuebridge.cli.archive"));
    assertThat(archive)
        .as("the archive queue-web builds in package (run mvn verify, not only the ITs)")
        .isRegularFile();
    Path into = Files.createDirectories(temp.resolve("unpacked"));
    Run untar =
        run(List.of("tar", "-xzf", archive.toString(), "-C", into.toString()), null, Map.of());
    assertThat(untar.status()).as("tar -xzf %s: %s", archive, untar.err()).isZero();
    home = into.resolve("queue-bridge-" + version() + "-cli");

    bashOnly = Files.createDirectories(temp.resolve("bash-only"));
    Files.createSymbolicLink(bashOnly.resolve("bash"), onThePath("bash"));

    store = temp.resolve("store");
    try (Storage storage = QueueStores.file(store)) {
      QueueManager manager = new QueueManager(storage, QueueManagerConfig.defaults());
      manager.start();
      try {
        fill(manager, "invoices", INVOICES);
        fill(manager, "audit", AUDIT);
      } finally {
        manager.stop();
      }
    }
  }

  @Test
  void theArchiveHoldsTheLauncherTheJarsAndTheDocs() throws IOException {
    String version = version();
    Path repo = repo();
    assertThat(names(home.getParent())).containsExactly("queue-bridge-" + version + "-cli");
    assertThat(names(home))
        .containsExactlyInAnyOrder("bin", "lib", "docs", "README.md", "CHANGELOG.md", "LICENSE");
    assertThat(names(home.resolve("bin"))).containsExactly("queue-bridge");
    assertThat(home.resolve("bin/queue-bridge"))
        .isExecutable()
        .hasSameTextualContentAs(repo.resolve("bin/queue-bridge"));
    assertThat(home.resolve("README.md")).hasSameTextualContentAs(repo.resolve("README.md"));
    assertThat(home.resolve("LICENSE")).hasSameTextualContentAs(repo.resolve("LICENSE"));
    assertThat(home.resolve("CHANGELOG.md")).hasSameTextualContentAs(repo.resolve("CHANGELOG.md"));
    // docs/ beside README.md, as in the repository: every published page, byte for byte
    try (Stream<Path> shipped = Files.walk(home.resolve("docs"));
        Stream<Path> published = Files.walk(repo.resolve("docs"))) {
      assertThat(shipped.filter(Files::isRegularFile).map(p -> home.resolve("docs").relativize(p)))
          .containsExactlyInAnyOrderElementsOf(
              published
                  .filter(p -> p.toString().endsWith(".md") || p.toString().endsWith(".png"))
                  .map(p -> repo.resolve("docs").relativize(p))
                  .toList())
          .contains(Path.of("CLI.md"), Path.of("STORES.md"), Path.of("CONSOLE.md"))
          .contains(Path.of("console/overview.png"))
          .allSatisfy(
              p ->
                  assertThat(home.resolve("docs").resolve(p))
                      .hasSameBinaryContentAs(repo.resolve("docs").resolve(p)));
    }

    // lib/ is this module's jar and exactly what the repository launcher runs on
    Set<String> classpath = new TreeSet<>();
    for (String entry :
        Files.readString(Path.of(property("queuebridge.cli.classpath")))
            .split(File.pathSeparator)) {
      classpath.add(Path.of(entry.strip()).getFileName().toString());
    }
    classpath.add("queue-web-" + version + ".jar");
    Set<String> lib = names(home.resolve("lib"));
    assertThat(lib).isEqualTo(classpath);
    assertThat(lib)
        .contains(
            "queue-web-" + version + ".jar",
            "queue-cli-" + version + ".jar",
            "queue-core-" + version + ".jar",
            "queue-store-postgres-" + version + ".jar")
        .anySatisfy(jar -> assertThat(jar).startsWith("postgresql-"))
        .anySatisfy(jar -> assertThat(jar).startsWith("picocli-"))
        .anySatisfy(jar -> assertThat(jar).startsWith("jackson-databind-"))
        .anySatisfy(jar -> assertThat(jar).startsWith("kafka-clients-"))
        .anySatisfy(jar -> assertThat(jar).startsWith("slf4j-simple-"))
        .anySatisfy(jar -> assertThat(jar).startsWith("javalin-"))
        .anySatisfy(jar -> assertThat(jar).startsWith("uplot-"))
        .noneSatisfy(jar -> assertThat(jar).startsWith("selenium-"))
        .allSatisfy(jar -> assertThat(jar).endsWith(".jar"))
        .noneSatisfy(jar -> assertThat(jar).startsWith("junit-"))
        .noneSatisfy(jar -> assertThat(jar).startsWith("connect-runtime-"));
  }

  @Test
  void theZipHoldsTheSameFilesWithTheSameModesAsTheTarGz() throws Exception {
    Path archive = Path.of(property("queuebridge.cli.archive"));
    Run listing = run(List.of("tar", "-tvzf", archive.toString()), null, Map.of());
    assertThat(listing.status()).as(listing.err()).isZero();
    // "-rwxr-xr-x user/group size date time name": the permissions and the name of each file
    Map<String, String> tarred = new TreeMap<>();
    for (String line : listing.out().split("\n")) {
      String[] fields = line.strip().split("\\s+");
      if (fields[0].startsWith("-")) {
        tarred.put(fields[fields.length - 1], fields[0].substring(1));
      }
    }
    Map<String, String> zipped = new TreeMap<>();
    zipModes(Path.of(property("queuebridge.cli.zip")))
        .forEach(
            (name, mode) -> {
              if (!name.endsWith("/")) {
                zipped.put(name, permissions(mode));
              }
            });

    String bin = "queue-bridge-" + version() + "-cli/bin/queue-bridge";
    assertThat(tarred).containsEntry(bin, "rwxr-xr-x");
    assertThat(zipped).isEqualTo(tarred);
  }

  @Test
  void versionPrintsTheBuildsVersionWithOnlyBashAndJavaOnThePath() throws Exception {
    Run run = launcher("--version");

    assertThat(run.err()).isEmpty();
    assertThat(run.status()).isZero();
    assertThat(run.out()).isEqualTo("queue-bridge " + version() + "\n");
  }

  @Test
  void helpListsTheCommands() throws Exception {
    Run run = launcher("--help");

    assertThat(run.err()).isEmpty();
    assertThat(run.status()).isZero();
    assertThat(run.out())
        .startsWith("Usage: queue-bridge ")
        .contains("\n  queues ", "\n  describe ", "\n  tail ", "\n  lag ", "\n  serve ")
        .contains("Exit status: 0 success");
  }

  @Test
  void queuesListsTheStoreTheTestWroteWithTheExactMessageCounts() throws Exception {
    Run run = launcher("queues", "--store-type", "file", "--store", "path=" + store);

    assertThat(run.err()).isEmpty();
    assertThat(run.status()).isZero();
    Map<String, Map<String, String>> rows = table(run.out());
    assertThat(rows).containsOnlyKeys("audit", "invoices");
    assertThat(rows.get("invoices"))
        .containsEntry("TYPE", "classic")
        .containsEntry("MESSAGES", Integer.toString(INVOICES))
        .containsEntry("FIRST-OFFSET", "0")
        .containsEntry("LAST-OFFSET", Integer.toString(INVOICES - 1));
    assertThat(rows.get("audit")).containsEntry("MESSAGES", Integer.toString(AUDIT));

    // the launcher does not change directory: a relative path is the caller's
    Run relative =
        run(
            List.of(
                home.resolve("bin/queue-bridge").toString(),
                "queues",
                "--store-type",
                "file",
                "--store",
                "path=" + store.getFileName()),
            store.getParent(),
            bashAndJava());
    assertThat(relative.status()).as(relative.err()).isZero();
    assertThat(withoutAges(table(relative.out()))).isEqualTo(withoutAges(rows));
  }

  @Test
  void aMissingStorePathExitsOneWithOneLineNamingIt() throws Exception {
    Path absent = temp.resolve("no-such-store");

    Run run = launcher("queues", "--store-type", "file", "--store", "path=" + absent);

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.out()).isEmpty();
    assertThat(run.err())
        .isEqualTo(
            "queue-bridge: store file:"
                + absent
                + " does not exist: the directory does not exist (expected an existing store)\n");
    assertThat(absent).doesNotExist();
  }

  @Test
  void javaHomeIsUsedWhenSetAndNoJavaIsOneLineNamingWhatIsMissing() throws Exception {
    String launcher = home.resolve("bin/queue-bridge").toString();
    Map<String, String> bashOnlyPath = Map.of("PATH", bashOnly.toString());

    Run withJavaHome =
        run(
            List.of(launcher, "--version"),
            null,
            with(bashOnlyPath, "JAVA_HOME", System.getProperty("java.home")));
    assertThat(withJavaHome.status()).as(withJavaHome.err()).isZero();
    assertThat(withJavaHome.out()).isEqualTo("queue-bridge " + version() + "\n");

    Run noJava = run(List.of(launcher, "--version"), null, bashOnlyPath);
    assertThat(noJava.status()).isEqualTo(1);
    assertThat(noJava.out()).isEmpty();
    assertThat(noJava.err())
        .isEqualTo(
            "queue-bridge: java is not on the PATH and JAVA_HOME is not set"
                + " (Java 17 or later is needed)\n");

    Path notAJdk = Files.createDirectories(temp.resolve("not-a-jdk"));
    Run badJavaHome =
        run(
            List.of(launcher, "--version"),
            null,
            with(bashAndJava(), "JAVA_HOME", notAJdk.toString()));
    assertThat(badJavaHome.status()).isEqualTo(1);
    assertThat(badJavaHome.err())
        .startsWith(
            "queue-bridge: JAVA_HOME is "
                + notAJdk
                + ", but "
                + notAJdk.resolve("bin/java")
                + " is not an executable")
        .hasLineCount(1);
  }

  @Test
  void aSymbolicLinkToTheLauncherRunsTheArchiveItPointsInto() throws Exception {
    Path links = Files.createDirectories(temp.resolve("links"));
    Path link = links.resolve("queue-bridge");
    Files.createSymbolicLink(link, home.resolve("bin/queue-bridge"));
    // readlink resolves the link: on the PATH beside bash and java
    Path withReadlink = Files.createDirectories(temp.resolve("bash-and-readlink"));
    Files.createSymbolicLink(withReadlink.resolve("bash"), onThePath("bash"));
    Files.createSymbolicLink(withReadlink.resolve("readlink"), onThePath("readlink"));

    Run run =
        run(
            List.of(link.toString(), "--version"),
            null,
            Map.of("PATH", withReadlink + File.pathSeparator + javaBin()));

    assertThat(run.status()).as(run.err()).isZero();
    assertThat(run.out()).isEqualTo("queue-bridge " + version() + "\n");
  }

  @Test
  void serveFromTheArchiveAnswersInABrowsersPlaceAndStopsOnATerm() throws Exception {
    Path config = temp.resolve("serve-source.json");
    Files.writeString(
        config,
        "{\"name\": \"invoices-source\", \"config\": {\"queue.store.type\": \"file\","
            + " \"queue.store.path\": \""
            + store
            + "\"}}");
    ProcessBuilder pb =
        new ProcessBuilder(
            home.resolve("bin/queue-bridge").toString(),
            "serve",
            "--config",
            config.toString(),
            "--port",
            "0");
    pb.environment().clear();
    pb.environment().putAll(bashAndJava());
    pb.redirectErrorStream(true);
    Process serve = pb.start();
    try (java.io.BufferedReader out =
        new java.io.BufferedReader(
            new java.io.InputStreamReader(serve.getInputStream(), StandardCharsets.UTF_8))) {
      String first = out.readLine();
      assertThat(first).startsWith("Queue Bridge console: http://127.0.0.1:");
      assertThat(out.readLine()).startsWith("Read-only");
      String url = first.substring("Queue Bridge console: ".length());
      java.net.http.HttpResponse<String> page =
          java.net.http.HttpClient.newHttpClient()
              .send(
                  java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString());
      assertThat(page.statusCode()).isEqualTo(200);
      assertThat(page.body()).contains("invoices-source", ">invoices<", ">audit<");
      serve.destroy(); // SIGTERM: the shutdown hook stops the server
      assertThat(serve.waitFor(30, TimeUnit.SECONDS)).as("serve exits on SIGTERM").isTrue();
    } finally {
      serve.destroyForcibly();
    }
  }

  @Test
  void theRepositoryLauncherRunsTheBuildOutputWithTheSameOutput() throws Exception {
    String launcher = repo().resolve("bin/queue-bridge").toString();

    Run version = run(List.of(launcher, "--version"), null, bashAndJava());
    assertThat(version.status()).as(version.err()).isZero();
    assertThat(version.out()).isEqualTo("queue-bridge " + version() + "\n");

    List<String> queues = List.of("queues", "--store-type", "file", "--store", "path=" + store);
    List<String> command = new ArrayList<>(List.of(launcher));
    command.addAll(queues);
    Run fromRepo = run(command, null, bashAndJava());
    Run fromArchive = launcher(queues.toArray(String[]::new));
    assertThat(fromRepo.status()).as(fromRepo.err()).isZero();
    assertThat(fromArchive.status()).as(fromArchive.err()).isZero();
    assertThat(withoutAges(table(fromRepo.out())))
        .isEqualTo(withoutAges(table(fromArchive.out())))
        .containsOnlyKeys("audit", "invoices");
  }

  // ---- the archive's launcher and child processes

  private record Run(int status, String out, String err) {}

  /** The unpacked archive's {@code bin/queue-bridge} with {@code args}, PATH = bash and java. */
  private static Run launcher(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(home.resolve("bin/queue-bridge").toString()));
    command.addAll(Arrays.asList(args));
    return run(command, null, bashAndJava());
  }

  /** PATH: a directory with bash alone, and the JDK's bin/ this test runs on. */
  private static Map<String, String> bashAndJava() {
    return Map.of("PATH", bashOnly + File.pathSeparator + javaBin());
  }

  private static Map<String, String> with(Map<String, String> env, String key, String value) {
    Map<String, String> out = new HashMap<>(env);
    out.put(key, value);
    return out;
  }

  /**
   * Runs {@code command} in {@code dir} (null: this JVM's) and waits at most {@link
   * #PROCESS_TIMEOUT}. With a non-empty {@code env} the child gets exactly that environment (and
   * {@code HOME}, {@code TMPDIR}); with an empty one, this JVM's.
   */
  private static Run run(List<String> command, Path dir, Map<String, String> env)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(command);
    if (dir != null) {
      pb.directory(dir.toFile());
    }
    if (!env.isEmpty()) {
      Map<String, String> inherited = new HashMap<>(pb.environment());
      pb.environment().clear();
      for (String keep : List.of("HOME", "TMPDIR")) {
        if (inherited.containsKey(keep)) {
          pb.environment().put(keep, inherited.get(keep));
        }
      }
      pb.environment().putAll(env);
    }
    Path out = Files.createTempFile(temp, "out-", ".txt");
    Path err = Files.createTempFile(temp, "err-", ".txt");
    pb.redirectOutput(out.toFile()).redirectError(err.toFile());
    Process process = pb.start();
    boolean done = process.waitFor(PROCESS_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    if (!done) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
    Run run =
        new Run(
            done ? process.exitValue() : -1,
            Files.readString(out, StandardCharsets.UTF_8),
            Files.readString(err, StandardCharsets.UTF_8));
    assertThat(done)
        .as(
            "%s finished within %s; stdout: %s stderr: %s",
            command, PROCESS_TIMEOUT, run.out(), run.err())
        .isTrue();
    return run;
  }

  // ---- the store

  private static void fill(QueueManager manager, String queue, int messages)
      throws InterruptedException {
    manager.createQueue(QueueConfig.durable(queue).topics(queue + "/#").build());
    for (int i = 0; i < messages; i++) {
      manager.publish(
          PublishRequest.builder(queue + "/new")
              .value((queue + "-" + i).getBytes(StandardCharsets.UTF_8))
              .build());
    }
  }

  /** A {@code queues} table: each row's cells by column name, the rows by NAME. */
  private static Map<String, Map<String, String>> table(String text) {
    List<String> lines = text.lines().toList();
    assertThat(lines).as("a header line in:%n%s", text).isNotEmpty();
    List<String> header = List.of(lines.get(0).strip().split("\\s+"));
    Map<String, Map<String, String>> rows = new LinkedHashMap<>();
    for (String line : lines.subList(1, lines.size())) {
      List<String> cells = List.of(line.strip().split("\\s+"));
      assertThat(cells).as("cells of %s under %s", line, header).hasSameSizeAs(header);
      Map<String, String> row = new LinkedHashMap<>();
      for (int i = 0; i < header.size(); i++) {
        row.put(header.get(i), cells.get(i));
      }
      rows.put(row.get("NAME"), row);
    }
    return rows;
  }

  /** {@code rows} without OLDEST-AGE, which grows with the wall clock between two runs. */
  private static Map<String, Map<String, String>> withoutAges(
      Map<String, Map<String, String>> rows) {
    Map<String, Map<String, String>> out = new LinkedHashMap<>();
    rows.forEach(
        (name, row) -> {
          Map<String, String> copy = new LinkedHashMap<>(row);
          assertThat(copy.remove("OLDEST-AGE")).as("OLDEST-AGE of %s", name).isNotNull();
          out.put(name, copy);
        });
    return out;
  }

  // ---- the zip's central directory: each entry's Unix mode (the high half of its external
  // attributes), which java.util.zip does not expose

  private static Map<String, Integer> zipModes(Path zip) throws IOException {
    ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(zip)).order(ByteOrder.LITTLE_ENDIAN);
    int end = bytes.limit() - 22;
    while (end >= 0 && bytes.getInt(end) != 0x06054b50) {
      end--;
    }
    assertThat(end).as("the end of the central directory of %s", zip).isNotNegative();
    int entries = Short.toUnsignedInt(bytes.getShort(end + 10));
    int at = bytes.getInt(end + 16);
    Map<String, Integer> modes = new TreeMap<>();
    for (int i = 0; i < entries; i++) {
      assertThat(bytes.getInt(at))
          .as("central directory entry %d of %s", i, zip)
          .isEqualTo(0x02014b50);
      int nameLength = Short.toUnsignedInt(bytes.getShort(at + 28));
      int extraLength = Short.toUnsignedInt(bytes.getShort(at + 30));
      int commentLength = Short.toUnsignedInt(bytes.getShort(at + 32));
      int external = bytes.getInt(at + 38);
      byte[] name = new byte[nameLength];
      bytes.get(at + 46, name);
      modes.put(new String(name, StandardCharsets.UTF_8), (external >>> 16) & 0777);
      at += 46 + nameLength + extraLength + commentLength;
    }
    return modes;
  }

  /** {@code 0755} as {@code rwxr-xr-x}. */
  private static String permissions(int mode) {
    StringBuilder out = new StringBuilder();
    for (int shift = 6; shift >= 0; shift -= 3) {
      int bits = mode >> shift;
      out.append((bits & 4) != 0 ? 'r' : '-')
          .append((bits & 2) != 0 ? 'w' : '-')
          .append((bits & 1) != 0 ? 'x' : '-');
    }
    return out.toString();
  }

  // ---- where things are

  private static String version() {
    return property("queuebridge.version");
  }

  private static Path repo() {
    return Path.of(property("queuebridge.repo.dir")).toAbsolutePath().normalize();
  }

  private static Path javaBin() {
    return Path.of(System.getProperty("java.home"), "bin");
  }

  /** The first {@code tool} on this JVM's PATH. */
  private static Path onThePath(String tool) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path candidate = Path.of(dir, tool);
      if (!dir.isEmpty() && Files.isExecutable(candidate)) {
        return candidate.toAbsolutePath();
      }
    }
    throw new IllegalStateException(
        "no " + tool + " on the PATH (" + System.getenv("PATH") + "): expected one to run with");
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    if (value == null || value.isBlank()) {
      throw new IllegalStateException(
          "system property " + name + " is not set: failsafe sets it (see queue-web/pom.xml)");
    }
    return value;
  }

  private static Set<String> names(Path dir) throws IOException {
    try (Stream<Path> entries = Files.list(dir)) {
      return entries
          .map(p -> p.getFileName().toString())
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }
}
