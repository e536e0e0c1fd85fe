package io.queuebridge.examples.quickstart;

import static io.queuebridge.examples.quickstart.PluginUnderTest.SINK_CLASS;
import static io.queuebridge.examples.quickstart.PluginUnderTest.SOURCE_CLASS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.examples.PublishedDocs;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plugin archive as a user installs it: its layout, and a real worker that loads it from {@code
 * plugin.path} with {@code plugin.discovery=service_load} and runs the shipped example configs.
 *
 * <p>This module's class path holds neither connector (see {@link #connectorsAreNotOnTheClassPath}
 * ): whatever the worker runs came out of the archive.
 */
class PluginArchiveIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(120);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long BASE_TIMESTAMP = 1_767_225_600_000L;
  private static final String DLQ_EXAMPLE = "source-classic-queue-dlq.json";

  @TempDir static Path temp;
  private static EmbeddedConnectCluster cluster;
  private static ConnectRestClient rest;

  @BeforeAll
  static void start() {
    cluster = PluginUnderTest.startWorker("plugin-archive-it");
    rest = new ConnectRestClient(cluster.workers().iterator().next().url());
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.stop();
    }
  }

  @Test
  void connectorsAreNotOnTheClassPath() {
    for (String connector : List.of(SINK_CLASS, SOURCE_CLASS)) {
      assertThatThrownBy(
              () -> Class.forName(connector, false, PluginArchiveIT.class.getClassLoader()))
          .as("%s must come from the archive, not from the test class path", connector)
          .isInstanceOf(ClassNotFoundException.class);
    }
  }

  @Test
  void archiveHasTheConfluentHubLayout() throws IOException {
    Path dir = PluginUnderTest.dir();
    String version = PluginUnderTest.version();
    assertThat(dir.getFileName().toString()).isEqualTo("queue-bridge-" + version);
    assertThat(names(dir)).containsExactlyInAnyOrder("manifest.json", "lib", "doc", "etc");

    JsonNode manifest = JSON.readTree(dir.resolve("manifest.json").toFile());
    assertThat(manifest.path("name").asText()).isEqualTo("queue-bridge");
    assertThat(manifest.path("version").asText()).isEqualTo(version);
    assertThat(manifest.path("component_types"))
        .extracting(JsonNode::asText)
        .containsExactlyInAnyOrder("sink", "source");

    assertThat(names(dir.resolve("lib")))
        .contains(
            "connect-sink-" + version + ".jar",
            "connect-source-" + version + ".jar",
            "connect-common-" + version + ".jar",
            "queue-core-" + version + ".jar",
            // the shared store, so that queue.store.type=postgres works from plugin.path
            "queue-store-postgres-" + version + ".jar",
            "postgresql-" + PluginUnderTest.dependencyVersion("postgresql") + ".jar",
            "HikariCP-" + PluginUnderTest.dependencyVersion("hikaricp") + ".jar")
        .allSatisfy(jar -> assertThat(jar).endsWith(".jar"));
    assertThat(names(dir.resolve("doc")))
        .containsExactlyInAnyOrder("README.md", "CHANGELOG.md", "LICENSE", "docs");
  }

  @Test
  void docHoldsThePublishedDocsAsTheyAreInTheRepository() throws IOException {
    Path doc = PluginUnderTest.dir().resolve("doc");
    Path repo = PluginUnderTest.repo();
    for (String file : List.of("README.md", "CHANGELOG.md", "LICENSE")) {
      assertThat(doc.resolve(file)).hasSameBinaryContentAs(repo.resolve(file));
    }
    List<Path> shipped = PublishedDocs.markdownFiles(doc.resolve("docs"));
    assertThat(shipped.stream().map(p -> doc.resolve("docs").relativize(p)))
        .as("doc/docs/: every page of the repository's docs/, and nothing else")
        .containsExactlyInAnyOrderElementsOf(
            PublishedDocs.markdownFiles(repo.resolve("docs")).stream()
                .map(p -> repo.resolve("docs").relativize(p))
                .toList())
        .contains(Path.of("PERFORMANCE.md"), Path.of("perf", "sink.md"));
    for (Path page : shipped) {
      assertThat(page)
          .hasSameBinaryContentAs(
              repo.resolve("docs").resolve(doc.resolve("docs").relativize(page)));
    }
    assertThat(PublishedDocs.vocabularyUnder(doc))
        .as("development-process words or build-machine paths in the archive's doc/")
        .isEmpty();
  }

  @Test
  void libHoldsNoKafkaConnectOrSlf4jClasses() throws IOException {
    // the worker provides them and loads them parent-first: a copy in lib/ is dead weight at best
    List<String> offending = new ArrayList<>();
    try (Stream<Path> jars = Files.list(PluginUnderTest.dir().resolve("lib"))) {
      for (Path jar : jars.toList()) {
        try (JarFile file = new JarFile(jar.toFile())) {
          file.stream()
              .map(ZipEntry::getName)
              .filter(n -> n.startsWith("org/apache/kafka/") || n.startsWith("org/slf4j/"))
              .findFirst()
              .ifPresent(n -> offending.add(jar.getFileName() + ": " + n));
        }
      }
    }
    assertThat(offending).isEmpty();
  }

  @Test
  void postgresStoreJarRegistersItsProviderForServiceLoading() throws IOException {
    Path jar =
        PluginUnderTest.dir()
            .resolve("lib")
            .resolve("queue-store-postgres-" + PluginUnderTest.version() + ".jar");
    assertThat(serviceEntries(jar, "io.queuebridge.core.store.QueueStoreProvider"))
        .containsExactly("io.queuebridge.store.postgres.PostgresStoreProvider");
  }

  @Test
  void eachConnectorJarRegistersItsConnectorForServiceLoading() throws IOException {
    String version = PluginUnderTest.version();
    Path lib = PluginUnderTest.dir().resolve("lib");
    assertThat(
            serviceEntries(
                lib.resolve("connect-sink-" + version + ".jar"),
                "org.apache.kafka.connect.sink.SinkConnector"))
        .containsExactly(SINK_CLASS);
    assertThat(
            serviceEntries(
                lib.resolve("connect-source-" + version + ".jar"),
                "org.apache.kafka.connect.source.SourceConnector"))
        .containsExactly(SOURCE_CLASS);
  }

  @Test
  void etcShipsEveryExampleConfigUnchanged() throws IOException {
    Path etc = PluginUnderTest.dir().resolve("etc");
    Set<String> sources = names(PluginUnderTest.exampleSources());
    assertThat(sources)
        .contains(
            QuickstartRun.SINK_EXAMPLE,
            QuickstartRun.REPLAY_EXAMPLE,
            QuickstartRun.RESTORE_EXAMPLE,
            DLQ_EXAMPLE);
    assertThat(names(etc)).isEqualTo(union(sources, Set.of("README.md")));
    assertThat(sources).contains("sink-postgres.json", "source-postgres.json");
    for (String example : sources) {
      assertThat(etc.resolve(example))
          .as(example)
          .hasSameBinaryContentAs(PluginUnderTest.exampleSources().resolve(example));
      assertThat(ExampleConfig.read(etc.resolve(example)).placeholders())
          .as("placeholders of %s", example)
          .containsAnyOf("STORE_DIR", "PG_URL");
    }
  }

  @Test
  void zipHoldsTheSameFilesAsTheUnpackedDirectory() throws IOException {
    Path dir = PluginUnderTest.dir();
    Set<String> unpacked;
    try (Stream<Path> files = Files.walk(dir)) {
      unpacked =
          files
              .filter(Files::isRegularFile)
              .map(p -> dir.getFileName() + "/" + dir.relativize(p).toString().replace('\\', '/'))
              .collect(Collectors.toCollection(TreeSet::new));
    }
    Set<String> zipped = new TreeSet<>();
    try (ZipFile zip = new ZipFile(PluginUnderTest.zip().toFile())) {
      zip.stream().filter(e -> !e.isDirectory()).forEach(e -> zipped.add(e.getName()));
    }
    assertThat(zipped).isEqualTo(unpacked);
  }

  @Test
  void workerListsBothConnectorsFromTheArchiveWithTheProjectVersion() {
    List<ConnectRestClient.Plugin> plugins = rest.connectorPlugins();
    assertThat(plugins)
        .contains(
            new ConnectRestClient.Plugin(SINK_CLASS, "sink", PluginUnderTest.version()),
            new ConnectRestClient.Plugin(SOURCE_CLASS, "source", PluginUnderTest.version()));
  }

  @Test
  void shippedExamplesCarryRecordsFromTopicThroughStreamBackToTopics() throws Exception {
    Path etc = PluginUnderTest.dir().resolve("etc");
    Path store = temp.resolve("round-trip-store");
    Map<String, String> placeholders = Map.of("STORE_DIR", store.toString());
    ExampleConfig sink = ExampleConfig.read(etc.resolve(QuickstartRun.SINK_EXAMPLE));
    ExampleConfig replay = ExampleConfig.read(etc.resolve(QuickstartRun.REPLAY_EXAMPLE));
    ExampleConfig restore = ExampleConfig.read(etc.resolve(QuickstartRun.RESTORE_EXAMPLE));
    String input = sink.config(placeholders).get("topics");
    String stream = sink.config(placeholders).get("queue.name");
    String replayTopic = replay.config(placeholders).get("topic");
    String restoreTopic = restore.config(placeholders).get("topic");
    int partitions =
        Integer.parseInt(restore.config(placeholders).get("topic.creation.default.partitions"));

    cluster.kafka().createTopic(input, partitions, 1, Map.of("retention.ms", "-1"));
    List<RecordSnapshot> produced = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> producer =
        cluster.kafka().createProducer(Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
      for (ProducerRecord<byte[], byte[]> r :
          SampleRecords.build(input, 12, partitions, BASE_TIMESTAMP)) {
        produced.add(RecordSnapshot.produced(r, producer.send(r).get()));
      }
    }

    // posted as shipped, placeholders resolved, nothing else changed
    for (ExampleConfig example : List.of(sink, replay, restore)) {
      assertThat(rest.createConnector(example.resolve(placeholders))).isEqualTo(example.name());
    }
    for (ExampleConfig example : List.of(sink, replay, restore)) {
      await(example.name() + " running")
          .atMost(TIMEOUT)
          .untilAsserted(
              () -> {
                assertThat(rest.failureTrace(example.name())).isEmpty();
                assertThat(rest.isRunning(example.name())).isTrue();
              });
    }

    List<RecordSnapshot> restored = consume(restoreTopic, produced.size());
    List<RecordSnapshot> replayed = consume(replayTopic, produced.size());
    assertThat(QuickstartRun.compareRestored(produced, restored)).isEmpty();
    assertThat(QuickstartRun.compareReplayed(produced, replayed)).isEmpty();

    for (ExampleConfig example : List.of(restore, replay, sink)) {
      rest.deleteConnector(example.name());
    }
    List<RecordSnapshot> stored = StreamContents.read(store, stream, TIMEOUT);
    assertThat(QuickstartRun.compareStream(produced, stored)).isEmpty();
    assertThat(stored).hasSize(produced.size());
  }

  @Test
  void shippedClassicQueueExampleDeliversJobsAndDeadLettersAPoisonOneToTheKafkaDlqTopic()
      throws Exception {
    ExampleConfig example =
        ExampleConfig.read(PluginUnderTest.dir().resolve("etc").resolve(DLQ_EXAMPLE));
    Path store = temp.resolve("classic-store");
    Map<String, String> placeholders = Map.of("STORE_DIR", store.toString());
    Map<String, String> config = example.config(placeholders);
    String queue = config.get("queue.names");
    String topic = config.get("topic");
    String dlqTopic = config.get("kafka.dlq.topic");
    int maxDeliveries = Integer.parseInt(config.get("max.deliveries"));
    String group = "connect-" + example.name();

    // An application fills the classic queue before the worker opens the store (a file store has
    // one opener): five jobs, and one that was already delivered max.deliveries times to the
    // connector's group without ever being acknowledged (a poison message).
    try (Storage storage = QueueStores.file(store)) {
      QueueManager manager = new QueueManager(storage, QueueManagerConfig.defaults());
      manager.start();
      try {
        manager.createQueue(QueueConfig.durable(queue).topics(queue + "/#").build());
        publish(manager, queue + "/poison", "poison");
        ConsumerGroups groups = manager.consumerGroups();
        groups.join(queue, null, group, "crashed-worker", CursorOption.earliest(GroupMode.QUEUE));
        for (int i = 0; i < maxDeliveries; i++) {
          groups.claimNext(queue, group, "crashed-worker").orElseThrow().nack(Duration.ZERO);
        }
        groups.leave(queue, null, group, "crashed-worker");
        for (int i = 1; i <= 5; i++) {
          publish(manager, queue + "/resize", "job-" + i);
        }
      } finally {
        manager.stop();
      }
    }

    assertThat(rest.createConnector(example.resolve(placeholders))).isEqualTo(example.name());
    List<RecordSnapshot> delivered = consume(topic, 5);
    List<RecordSnapshot> dead = consume(dlqTopic, 1);

    assertThat(delivered)
        .extracting(r -> RecordSnapshot.show(r.value()))
        .containsExactlyInAnyOrder("job-1", "job-2", "job-3", "job-4", "job-5");
    assertThat(dead)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(RecordSnapshot.show(r.value())).isEqualTo("poison");
              assertThat(header(r, "__connect.errors.queue.name")).isEqualTo(queue);
              assertThat(header(r, "__connect.errors.queue.offset")).isEqualTo("0");
              assertThat(header(r, "__connect.errors.reason")).contains("max.deliveries");
            });

    rest.deleteConnector(example.name());
    // and the queue's own dead-letter queue has it, once the worker let go of the store
    List<RecordSnapshot> deadLetters = StreamContents.read(store, "$dlq/" + queue, TIMEOUT);
    assertThat(deadLetters)
        .singleElement()
        .satisfies(r -> assertThat(RecordSnapshot.show(r.value())).isEqualTo("poison"));
  }

  private static void publish(QueueManager manager, String topic, String value)
      throws InterruptedException {
    manager.publish(
        PublishRequest.builder(topic).value(value.getBytes(StandardCharsets.UTF_8)).build());
  }

  private static String header(RecordSnapshot r, String key) {
    return r.headers().stream()
        .filter(h -> h.key().equals(key))
        .map(h -> RecordSnapshot.show(h.value()))
        .findFirst()
        .orElse(null);
  }

  private static List<RecordSnapshot> consume(String topic, int count) {
    List<RecordSnapshot> out = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r :
        cluster
            .kafka()
            .consume(
                count,
                TIMEOUT.toMillis(),
                Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
                topic)) {
      out.add(RecordSnapshot.consumed(r));
    }
    return out;
  }

  private static Set<String> serviceEntries(Path jar, String service) throws IOException {
    try (JarFile file = new JarFile(jar.toFile())) {
      ZipEntry entry = file.getEntry("META-INF/services/" + service);
      assertThat(entry).as("META-INF/services/%s in %s", service, jar.getFileName()).isNotNull();
      String text = new String(file.getInputStream(entry).readAllBytes(), StandardCharsets.UTF_8);
      return text.lines()
          .map(l -> l.replaceAll("#.*", "").trim())
          .filter(l -> !l.isEmpty())
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }

  private static Set<String> names(Path dir) throws IOException {
    try (Stream<Path> entries = Files.list(dir)) {
      return entries
          .map(p -> p.getFileName().toString())
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }

  private static Set<String> union(Set<String> a, Set<String> b) {
    Set<String> out = new TreeSet<>(a);
    out.addAll(b);
    return out;
  }
}
