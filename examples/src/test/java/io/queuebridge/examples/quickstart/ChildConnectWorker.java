package io.queuebridge.examples.quickstart;

import static org.awaitility.Awaitility.await;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A distributed Kafka Connect worker in a child JVM, deployed the way a user deploys one: {@code
 * org.apache.kafka.connect.cli.ConnectDistributed} on a properties file, a class path holding Kafka
 * Connect and nothing of this project, and the plugin archive on {@code plugin.path} (found with
 * {@code plugin.discovery=service_load}). Connectors are posted as JSON over its REST API.
 *
 * <p>{@link #kill()} is {@code SIGKILL} ({@link Process#destroyForcibly()} on Linux): no shutdown
 * hook, no task stop, no offset flush, no file lock released by the JVM itself (the kernel drops it
 * with the process). {@link #start()} starts it again on the same properties file: the same {@code
 * group.id}, internal topics and REST port, so it is the same worker coming back.
 *
 * <p>The worker's standard output and error go to {@link #log()}, appended across restarts, each
 * start and kill marked with a line of its own.
 *
 * <p>Not thread-safe: one test thread drives it.
 */
final class ChildConnectWorker implements AutoCloseable {
  static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  /**
   * Kafka Connect's own dependency, shipped in a Kafka distribution's {@code libs/} too (its REST
   * API uses it): stays on the worker's class path although the plugin archive ships a copy.
   */
  private static final String KAFKA_SHIPS_TOO = "jackson-";

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private final String name;
  private final Path properties;
  private final Path log;
  private final List<String> classPath;
  private final List<String> jvmOptions;
  private final int port;
  private Process process;
  private int starts;
  private long lastStartMillis;

  private ChildConnectWorker(
      String name,
      Path properties,
      Path log,
      List<String> classPath,
      List<String> jvmOptions,
      int port) {
    this.name = name;
    this.properties = properties;
    this.log = log;
    this.classPath = classPath;
    this.jvmOptions = jvmOptions;
    this.port = port;
  }

  /**
   * Writes the worker properties file of {@code name} into {@code dir} (not started yet).
   *
   * @param bootstrapServers the broker the worker and its connectors use
   * @param dir where the properties file goes
   * @param extra worker properties on top of (or replacing) the defaults
   */
  static ChildConnectWorker create(
      String name, String bootstrapServers, Path dir, Map<String, String> extra)
      throws IOException {
    return create(name, name, bootstrapServers, dir, extra);
  }

  /**
   * Like {@link #create(String, String, Path, Map)}, for one of several workers of the Connect
   * cluster {@code group} (its {@code group.id} and the prefix of its internal topics).
   */
  static ChildConnectWorker create(
      String name, String group, String bootstrapServers, Path dir, Map<String, String> extra)
      throws IOException {
    return create(name, group, bootstrapServers, dir, extra, workerClassPath(), List.of());
  }

  /**
   * Like {@link #create(String, String, Path, Map)}, for a worker of another Kafka Connect release:
   * {@code classPath} is that release's runtime (and nothing of this project), {@code jvmOptions}
   * go before the main class.
   */
  static ChildConnectWorker create(
      String name,
      String group,
      String bootstrapServers,
      Path dir,
      Map<String, String> extra,
      List<String> classPath,
      List<String> jvmOptions)
      throws IOException {
    int port = freePort();
    Map<String, String> p = new TreeMap<>();
    p.put("bootstrap.servers", bootstrapServers);
    p.put("group.id", group);
    p.put("config.storage.topic", group + "-configs");
    p.put("offset.storage.topic", group + "-offsets");
    p.put("status.storage.topic", group + "-status");
    p.put("config.storage.replication.factor", "1");
    p.put("offset.storage.replication.factor", "1");
    p.put("status.storage.replication.factor", "1");
    p.put("offset.storage.partitions", "5");
    p.put("status.storage.partitions", "1");
    p.put("key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
    p.put("value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
    p.put("plugin.path", PluginUnderTest.dir().getParent().toString());
    p.put("plugin.discovery", "service_load");
    p.put("listeners", "http://127.0.0.1:" + port);
    p.put("rest.advertised.host.name", "127.0.0.1");
    p.put("rest.advertised.port", Integer.toString(port));
    // a vanished worker's tasks are held for this long before they are reassigned (default 5 min)
    p.put("scheduled.rebalance.max.delay.ms", "5000");
    p.put("exactly.once.source.support", "enabled");
    p.put("offset.flush.interval.ms", "1000");
    // how soon the group coordinators notice a killed worker (the broker's minimum is 6 s): the
    // worker's own group, and the consumer groups of its sink tasks (45 s by default)
    p.put("session.timeout.ms", "6000");
    p.put("heartbeat.interval.ms", "1000");
    p.put("consumer.session.timeout.ms", "6000");
    p.put("consumer.heartbeat.interval.ms", "1000");
    p.putAll(extra);

    Files.createDirectories(dir);
    Path file = dir.resolve(name + ".properties");
    Properties props = new Properties();
    props.putAll(p);
    try (OutputStream out = Files.newOutputStream(file)) {
      props.store(out, "Connect worker " + name + " (ChildConnectWorker)");
    }
    Path log = PluginUnderTest.examplesTarget().resolve("worker-logs").resolve(name + ".log");
    Files.createDirectories(log.getParent());
    Files.deleteIfExists(log);
    return new ChildConnectWorker(
        name, file, log, List.copyOf(classPath), List.copyOf(jvmOptions), port);
  }

  /**
   * The class path of a Kafka Connect installation, taken from this JVM's: everything but this
   * project's own modules (the reactor's {@code target/} directories and jars, and any {@code
   * io.queuebridge} artifact), the jars the plugin archive brings itself (its {@code lib/}: the
   * stores' drivers, caffeine, ...) but for Kafka's own {@code jackson-*}, and Kafka's test jars.
   */
  static List<String> workerClassPath() {
    Path repo = PluginUnderTest.repo().toAbsolutePath().normalize();
    Set<String> pluginJars;
    try (Stream<Path> jars = Files.list(PluginUnderTest.dir().resolve("lib"))) {
      pluginJars = jars.map(j -> j.getFileName().toString()).collect(Collectors.toSet());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list the plugin's lib/", e);
    }
    List<String> out = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (entry.isBlank()) {
        continue;
      }
      Path path = Path.of(entry).toAbsolutePath().normalize();
      String file = path.getFileName().toString();
      boolean ours =
          path.startsWith(repo) || path.toString().replace('\\', '/').contains("/io/queuebridge/");
      boolean fromThePlugin = pluginJars.contains(file) && !file.startsWith(KAFKA_SHIPS_TOO);
      // Kafka's test jars (the broker harness of this JVM): a Kafka distribution ships none
      boolean testJar = file.endsWith("-test.jar") || file.endsWith("-tests.jar");
      if (!ours && !fromThePlugin && !testJar) {
        out.add(path.toString());
      }
    }
    if (out.stream().noneMatch(e -> Path.of(e).getFileName().toString().startsWith("connect-"))) {
      throw new IllegalStateException(
          "no Kafka Connect runtime on this JVM's class path "
              + System.getProperty("java.class.path"));
    }
    return List.copyOf(out);
  }

  /** The worker's REST root, {@code http://127.0.0.1:<port>/}. */
  URI url() {
    return URI.create("http://127.0.0.1:" + port + "/");
  }

  /** The worker's REST port; its worker id in the status API is {@code 127.0.0.1:<port>}. */
  int port() {
    return port;
  }

  /** A client of the worker's REST API. */
  ConnectRestClient rest() {
    return new ConnectRestClient(url());
  }

  /** The worker's properties file. */
  Path properties() {
    return properties;
  }

  /** Where the worker's output goes (all its runs). */
  Path log() {
    return log;
  }

  /** The class path the worker runs on. */
  List<String> classPath() {
    return classPath;
  }

  /** Whether a worker process of this instance is alive. */
  boolean isAlive() {
    return process != null && process.isAlive();
  }

  /**
   * Starts the worker process and waits until it is ready: {@code GET /health} answers 200, which
   * the worker does once it has read its internal topics (config, offsets, status) and its herder
   * runs (before Connect 3.9, which has no {@code /health}: {@code GET /connectors} answers 200).
   * Its connectors and tasks start after that, once it has joined its group.
   *
   * @throws IllegalStateException if one is running already, or if it exits or is not ready in
   *     {@link #START_TIMEOUT} (the message names the log)
   */
  void start() throws IOException {
    if (isAlive()) {
      throw new IllegalStateException("worker " + name + " is running already (pid " + pid() + ")");
    }
    starts++;
    mark("start #" + starts);
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx768m");
    command.add("-XX:+UseSerialGC");
    command.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=info");
    command.add("-Dorg.slf4j.simpleLogger.showDateTime=true");
    command.add("-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS");
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(String.join(File.pathSeparator, classPath));
    command.add("org.apache.kafka.connect.cli.ConnectDistributed");
    command.add(properties.toString());
    long startedAt = System.nanoTime();
    process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    Process started = process;
    HttpRequest connectors =
        HttpRequest.newBuilder(url().resolve("connectors"))
            .timeout(Duration.ofSeconds(15))
            .GET()
            .build();
    HttpRequest health =
        HttpRequest.newBuilder(url().resolve("health"))
            .timeout(Duration.ofSeconds(15))
            .GET()
            .build();
    try {
      await("worker " + name + " answers GET /health with 200")
          .atMost(START_TIMEOUT)
          .pollInterval(Duration.ofMillis(250))
          .ignoreExceptions()
          .until(
              () -> {
                if (!started.isAlive()) {
                  throw new IllegalStateException(
                      "worker " + name + " exited with status " + started.exitValue());
                }
                int status = HTTP.send(health, HttpResponse.BodyHandlers.discarding()).statusCode();
                if (status == 404) {
                  // a worker before Connect 3.9 (KIP-1017) has no /health: its herder answers
                  // GET /connectors once it has read its internal topics
                  return HTTP.send(connectors, HttpResponse.BodyHandlers.discarding()).statusCode()
                      == 200;
                }
                return status == 200;
              });
    } catch (ConditionTimeoutException e) {
      if (!started.isAlive()) {
        throw new IllegalStateException(
            "worker " + name + " exited with status " + started.exitValue() + "; see " + log, e);
      }
      throw new IllegalStateException(
          "worker " + name + " was not ready on " + url() + " in " + START_TIMEOUT + "; see " + log,
          e);
    }
    lastStartMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedAt);
    mark("ready after " + lastStartMillis + " ms");
  }

  /** How long the last {@link #start()} took until the worker was ready, in milliseconds. */
  long lastStartMillis() {
    return lastStartMillis;
  }

  /**
   * {@code SIGKILL}s the worker process and waits until it is gone.
   *
   * @throws IllegalStateException if none is running or it does not die within 30 s
   */
  void kill() throws InterruptedException {
    if (!isAlive()) {
      throw new IllegalStateException("worker " + name + " is not running");
    }
    long pid = pid();
    process.destroyForcibly(); // SIGKILL on Linux
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("worker " + name + " (pid " + pid + ") survived SIGKILL");
    }
    mark("SIGKILLed pid " + pid + " (exit status " + process.exitValue() + ")");
  }

  /**
   * Stops the worker the orderly way ({@code SIGTERM}: Connect's shutdown hook stops the tasks and
   * closes their stores) and waits for it, killing it after {@code timeout}.
   */
  void stop(Duration timeout) throws InterruptedException {
    if (!isAlive()) {
      return;
    }
    process.destroy();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
      mark("did not stop in " + timeout + ": SIGKILLed");
    } else {
      mark("stopped (exit status " + process.exitValue() + ")");
    }
  }

  private long pid() {
    return process.pid();
  }

  private void mark(String what) {
    String line = "\n===== " + Instant.now() + " ChildConnectWorker " + name + ": " + what + "\n";
    try {
      Files.writeString(
          log, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + log, e);
    }
  }

  @Override
  public void close() {
    if (isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      mark("killed on close");
    }
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      socket.setReuseAddress(true);
      return socket.getLocalPort();
    }
  }
}
