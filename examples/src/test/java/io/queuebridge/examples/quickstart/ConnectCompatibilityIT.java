package io.queuebridge.examples.quickstart;

import static io.queuebridge.examples.quickstart.ConnectFlows.awaitRunning;
import static io.queuebridge.examples.quickstart.ConnectFlows.example;
import static io.queuebridge.examples.quickstart.ConnectFlows.post;
import static io.queuebridge.examples.quickstart.ConnectFlows.streamSize;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The plugin archive as built, on Connect workers of other Kafka releases: each worker a child JVM
 * ({@link ChildConnectWorker}) whose class path is that release's {@code connect-runtime} and its
 * dependencies as Maven resolves them (the {@code compat/connect-*} modules, one folder each), the
 * archive on its {@code plugin.path}. The release this project builds against is the worker of
 * every other child-JVM test ({@link WorkerKillIT} among them).
 *
 * <p>On each worker: topic → sink ({@code tasks.max=2}) → {@code file}-store stream → source
 * (restore mode, exactly once required) → topic, the worker {@code SIGKILL}ed while both flow,
 * records produced while it is away, and the worker started again; then every record is in the
 * stream once and in the restored topic once, byte-identical, and the connectors' metrics are read
 * over JMX from the worker: registered by the worker where it has plugin metrics (Connect 4.1 and
 * later), by the tasks themselves as MBeans of the same names before that.
 *
 * <p>Run time: about a minute per worker release.
 */
class ConnectCompatibilityIT {
  private static final Duration TIMEOUT = Duration.ofMinutes(2);
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(60);
  private static final int PARTITIONS = 4;
  private static final int PER_PART = 1_000;
  private static final Pattern RUNTIME_JAR =
      Pattern.compile("connect-runtime-(\\d+)\\.(\\d+)\\..*");

  /** The log line of a task that registers its metrics itself (see TaskMetrics). */
  private static final String OWN_MBEANS = "This Connect worker has no plugin metrics";

  @TempDir static Path temp;
  private static EmbeddedKafkaCluster kafka;

  /** One Connect release the plugin runs on: its version and its class path. */
  record Worker(String version, int major, int minor, List<String> classPath) {
    @Override
    public String toString() {
      return "Connect " + version;
    }

    /** Whether this release gives connectors plugin metrics (KIP-877). */
    boolean hasPluginMetrics() {
      return major > 4 || (major == 4 && minor >= 1);
    }

    String id() {
      return version.replace('.', '-');
    }
  }

  @BeforeAll
  static void startBroker() {
    kafka = ConnectFlows.startBroker(Map.of());
  }

  @AfterAll
  static void stopBroker() {
    if (kafka != null) {
      kafka.stop();
    }
  }

  /** Every worker under {@code compat/}: its {@code target/worker/} folder, read as it is. */
  static List<Worker> workers() throws IOException {
    Path compat = Path.of(System.getProperty("queuebridge.compat.dir", "../compat"));
    List<Worker> out = new ArrayList<>();
    try (Stream<Path> modules = Files.list(compat)) {
      for (Path module :
          modules
              .filter(m -> m.getFileName().toString().startsWith("connect-"))
              .sorted()
              .toList()) {
        Path lib = module.resolve("target").resolve("worker");
        List<Path> jars;
        try (Stream<Path> files = Files.list(lib)) {
          jars = files.filter(f -> f.toString().endsWith(".jar")).sorted().toList();
        }
        Path runtime =
            jars.stream()
                .filter(j -> RUNTIME_JAR.matcher(j.getFileName().toString()).matches())
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no connect-runtime jar in " + lib));
        String file = runtime.getFileName().toString();
        Matcher m = RUNTIME_JAR.matcher(file);
        assertThat(m.matches()).isTrue();
        String version =
            file.substring("connect-runtime-".length(), file.length() - ".jar".length());
        out.add(
            new Worker(
                version,
                Integer.parseInt(m.group(1)),
                Integer.parseInt(m.group(2)),
                jars.stream().map(Path::toString).toList()));
      }
    }
    return out;
  }

  @Test
  void theMatrixHoldsTheOldestSupportedReleaseAndEveryWorkerIsAlone() throws IOException {
    List<Worker> workers = workers();
    assertThat(workers).extracting(Worker::version).anyMatch(v -> v.startsWith("3.6."));
    for (Worker w : workers) {
      List<String> kafkaJars =
          w.classPath().stream()
              .map(e -> Path.of(e).getFileName().toString())
              .filter(j -> j.startsWith("connect-") || j.startsWith("kafka-"))
              .toList();
      assertThat(kafkaJars)
          .as("%s: Kafka's own jars are all of that release", w)
          .isNotEmpty()
          .allMatch(j -> j.contains("-" + w.version() + ".jar"));
      assertThat(w.classPath())
          .as("%s: nothing of this project on the worker's class path", w)
          .noneMatch(e -> e.contains("queuebridge") || e.contains("queue-bridge"));
    }
  }

  @Test
  void theDocsAndThePluginManifestStateWhatIsTested() throws IOException {
    String deployment = Files.readString(PluginUnderTest.repo().resolve("docs/DEPLOYMENT.md"));
    String table = deployment.substring(deployment.indexOf("## Compatibility"));
    int next = table.indexOf("\n## ", 1);
    table = next < 0 ? table : table.substring(0, next);
    List<String> rows = table.lines().filter(l -> l.matches("\\| \\d+\\.\\d+\\.\\d+ .*")).toList();
    List<String> versions = rows.stream().map(r -> r.split(" ")[1]).toList();
    List<String> tested = workers().stream().map(Worker::version).toList();
    assertThat(versions)
        .as("docs/DEPLOYMENT.md's Compatibility table: the workers tested here and the build's own")
        .containsExactlyInAnyOrderElementsOf(
            Stream.concat(tested.stream(), Stream.of(PluginUnderTest.dependencyVersion("kafka")))
                .toList());
    String oldest = tested.stream().sorted().findFirst().orElseThrow();
    String floor = oldest.substring(0, oldest.lastIndexOf('.')) + ".0";
    assertThat(Files.readString(PluginUnderTest.dir().resolve("manifest.json")))
        .as("the plugin's manifest states the supported range")
        .contains("\"Apache Kafka Connect " + floor + " or later\"");
    assertThat(table).contains("from **" + floor + "** on");
    assertThat(Files.readString(PluginUnderTest.repo().resolve("README.md")))
        .as("the README states the oldest supported worker")
        .contains("from **" + floor + "** on");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("workers")
  void sinkAndExactlyOnceSourceKeepEveryRecordOnceThroughAWorkerKill(Worker w) throws Exception {
    String topic = "compat-" + w.id() + "-in";
    String stream = "compat-" + w.id();
    String restored = "compat-" + w.id() + "-restored";
    String sink = "compat-sink-" + w.id();
    String source = "compat-source-" + w.id();
    Path store = temp.resolve(w.id()).resolve("store").toAbsolutePath();
    kafka.createTopic(topic, PARTITIONS, 1, Map.of());
    awaitLeaders(topic);
    int jmxPort = ChildConnectWorker.freePort();

    Map<String, String> sinkConfig =
        example(QuickstartRun.SINK_EXAMPLE).config(Map.of("STORE_DIR", store.toString()));
    sinkConfig.put("tasks.max", "2");
    sinkConfig.put("topics", topic);
    sinkConfig.put("queue.name", stream);
    sinkConfig.put("queue.topics", stream + "/#");
    sinkConfig.put("consumer.override.max.poll.records", "50");
    Map<String, String> sourceConfig =
        example(QuickstartRun.RESTORE_EXAMPLE).config(Map.of("STORE_DIR", store.toString()));
    sourceConfig.put("queue.names", stream);
    sourceConfig.put("topic", restored);
    sourceConfig.put("topic.creation.default.partitions", Integer.toString(PARTITIONS));
    sourceConfig.put("exactly.once.support", "required");
    sourceConfig.put("poll.max.records", "100");
    sourceConfig.put("queue.refresh.interval.ms", "1000");
    // a transaction the kill leaves open holds the restarted worker up until the broker aborts it
    sourceConfig.put("producer.override.transaction.timeout.ms", "10000");

    List<RecordSnapshot> produced = new ArrayList<>();
    try (ChildConnectWorker worker =
            ChildConnectWorker.create(
                "compat-" + w.id(),
                "compat-" + w.id(),
                kafka.bootstrapServers(),
                temp.resolve(w.id()),
                Map.of(),
                w.classPath(),
                jmxOptions(jmxPort));
        KafkaProducer<byte[], byte[]> producer =
            kafka.createProducer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
      produced.addAll(produce(producer, topic, 0, PER_PART));
      worker.start();
      assertThat(worker.rest().connectorPlugins())
          .as("%s: the connectors the worker loaded from plugin.path", w)
          .contains(
              new ConnectRestClient.Plugin(
                  PluginUnderTest.SINK_CLASS, "sink", PluginUnderTest.version()),
              new ConnectRestClient.Plugin(
                  PluginUnderTest.SOURCE_CLASS, "source", PluginUnderTest.version()));
      post(worker, sink, sinkConfig);
      awaitRunning(worker, sink, 2, TIMEOUT);
      await(stream + " exists and grows")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(100))
          .ignoreExceptions() // until the sink has created the store
          .until(() -> streamSize(store, stream) > 0);
      post(worker, source, sourceConfig);
      awaitRunning(worker, source, 1, TIMEOUT);
      await(restored + " has committed records")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(100))
          .until(() -> ConnectFlows.committedRecords(kafka, restored, READ_TIMEOUT) > 0);

      // the second part arrives while both flow, and the kill comes as the sink takes it in
      produced.addAll(produce(producer, topic, PER_PART, PER_PART));
      await(stream + " grows past the first part")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(10))
          .until(() -> streamSize(store, stream) > PER_PART);
      worker.kill();
      long inStreamAtKill = streamSize(store, stream);
      long restoredAtKill = ConnectFlows.committedRecords(kafka, restored, READ_TIMEOUT);
      log(
          w
              + ": killed with "
              + inStreamAtKill
              + " of "
              + produced.size()
              + " in the stream, "
              + restoredAtKill
              + " restored");
      assertThat(restoredAtKill)
          .as("%s: the source was in the middle of the flow", w)
          .isLessThan(produced.size());
      // the third part arrives while the worker is away
      produced.addAll(produce(producer, topic, 2 * PER_PART, PER_PART));
      worker.start();
      awaitRunning(worker, sink, 2, TIMEOUT);
      awaitRunning(worker, source, 1, TIMEOUT);
      int all = produced.size();
      await(stream + " holds all " + all + " records")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(200))
          .until(() -> streamSize(store, stream) >= all);
      await(restored + " holds all " + all + " records, committed")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(500))
          .until(() -> ConnectFlows.committedRecords(kafka, restored, READ_TIMEOUT) >= all);

      // the connectors' metrics, as an operator's JMX dashboard reads them from the worker
      try (JMXConnector jmx = jmx(jmxPort)) {
        MBeanServerConnection beans = jmx.getMBeanServerConnection();
        double appended = 0;
        for (int task = 0; task < 2; task++) {
          ObjectName bean = pluginBean(sink, task);
          assertThat(beans.isRegistered(bean)).as("%s: %s", w, bean).isTrue();
          appended += ((Number) beans.getAttribute(bean, "records-appended-total")).doubleValue();
        }
        assertThat(appended)
            .as("%s: records-appended-total of the sink's tasks since the restart", w)
            .isGreaterThan(0)
            .isLessThanOrEqualTo(all);
        ObjectName sourceBean = pluginBean(source, 0);
        assertThat(((Number) beans.getAttribute(sourceBean, "records-polled-total")).doubleValue())
            .as("%s: records-polled-total of the source since the restart", w)
            .isGreaterThan(0);
        await(w + ": the source's lag gauge drops to 0")
            .atMost(TIMEOUT)
            .pollInterval(Duration.ofMillis(200))
            .until(() -> ((Number) beans.getAttribute(sourceBean, "lag")).longValue() == 0);
      }
      String log = Files.readString(worker.log(), StandardCharsets.UTF_8);
      if (w.hasPluginMetrics()) {
        assertThat(log)
            .as("%s gives plugin metrics: the tasks use them", w)
            .doesNotContain(OWN_MBEANS);
      } else {
        assertThat(log).as("%s has no plugin metrics: the tasks say so", w).contains(OWN_MBEANS);
      }
      assertThat(log)
          .as("%s: no task met an API the worker lacks", w)
          .doesNotContain("NoSuchMethodError")
          .doesNotContain("NoClassDefFoundError");

      worker.rest().deleteConnector(source);
      worker.rest().deleteConnector(sink);
      ConnectFlows.awaitNoOpenTransaction(kafka, restored, TIMEOUT);
      worker.stop(Duration.ofSeconds(60));
    }

    List<RecordSnapshot> stored = StreamContents.read(store, stream, READ_TIMEOUT);
    assertThat(QuickstartRun.compareStream(produced, stored))
        .as("%s: stream messages vs the Kafka records they were captured from", w)
        .isEmpty();
    assertThat(stored).as("%s: the stream, each record once", w).hasSize(produced.size());
    List<RecordSnapshot> out = ConnectFlows.readAllCommitted(kafka, restored, READ_TIMEOUT);
    Map<String, Integer> seen = new HashMap<>();
    out.forEach(r -> seen.merge(r.showKey(), 1, Integer::sum));
    assertThat(seen.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey))
        .as("%s: records restored more than once", w)
        .isEmpty();
    assertThat(QuickstartRun.compareRestored(stored, out))
        .as("%s: restored vs stream", w)
        .isEmpty();
    assertThat(out).as("%s: the restored topic, each record once", w).hasSize(produced.size());
  }

  private static List<RecordSnapshot> produce(
      KafkaProducer<byte[], byte[]> producer, String topic, int from, int n) throws Exception {
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(n);
    List<Future<RecordMetadata>> sent = new ArrayList<>(n);
    long now = System.currentTimeMillis();
    for (int i = from; i < from + n; i++) {
      RecordHeaders headers = new RecordHeaders();
      headers.add("seq", utf8(Integer.toString(i)));
      headers.add("bin", new byte[] {0, (byte) i, -1});
      byte[] value =
          i % 500 == 499 ? null : utf8("{\"id\":" + i + ",\"pad\":\"" + "x".repeat(i % 37) + "\"}");
      ProducerRecord<byte[], byte[]> r =
          new ProducerRecord<>(topic, i % PARTITIONS, now + i, utf8("id-" + i), value, headers);
      records.add(r);
      sent.add(producer.send(r));
    }
    producer.flush();
    List<RecordSnapshot> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(RecordSnapshot.produced(records.get(i), sent.get(i).get()));
    }
    return out;
  }

  /**
   * Waits until every partition of a new {@code topic} has a leader: an idempotent producer that
   * meets a partition without one can be left failing its retries with out-of-order sequences.
   */
  private static void awaitLeaders(String topic) {
    try (Admin admin = kafka.createAdminClient()) {
      await(topic + " has a leader for each partition")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(50))
          .ignoreExceptions()
          .until(
              () ->
                  admin
                          .describeTopics(List.of(topic))
                          .allTopicNames()
                          .get()
                          .get(topic)
                          .partitions()
                          .stream()
                          .filter(p -> p.leader() != null && !p.leader().isEmpty())
                          .count()
                      == PARTITIONS);
    }
  }

  /** The MBean a task's plugin metrics are attributes of, on every worker release. */
  private static ObjectName pluginBean(String connector, int task) throws Exception {
    return new ObjectName("kafka.connect:type=plugins,connector=" + connector + ",task=" + task);
  }

  /** A JMX remote port on loopback, no authentication: how an operator's agent reads a worker. */
  private static List<String> jmxOptions(int port) {
    return List.of(
        "-Dcom.sun.management.jmxremote.port=" + port,
        "-Dcom.sun.management.jmxremote.rmi.port=" + port,
        "-Dcom.sun.management.jmxremote.host=127.0.0.1",
        "-Djava.rmi.server.hostname=127.0.0.1",
        "-Dcom.sun.management.jmxremote.authenticate=false",
        "-Dcom.sun.management.jmxremote.ssl=false");
  }

  private static JMXConnector jmx(int port) {
    try {
      return JMXConnectorFactory.connect(
          new JMXServiceURL("service:jmx:rmi:///jndi/rmi://127.0.0.1:" + port + "/jmxrmi"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot reach the worker's JMX port " + port, e);
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void log(String message) {
    System.out.println(Instant.now() + " ConnectCompatibilityIT " + message);
  }
}
