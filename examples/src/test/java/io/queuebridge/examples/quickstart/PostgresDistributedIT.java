package io.queuebridge.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.core.PublishRequest;
import io.queuebridge.core.QueueConfig;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.store.postgres.PostgresTestDatabase;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfos;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.apache.kafka.connect.util.clusters.WorkerHandle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A distributed Connect cluster of three workers on one shared PostgreSQL store, loading the plugin
 * archive from {@code plugin.path}, with the shipped postgres example configs ({@code
 * etc/sink-postgres.json}, {@code etc/source-postgres.json}) posted as written but for their
 * placeholders. The store password reaches the connectors through Connect's {@code
 * FileConfigProvider}, never through the REST API or the config topic.
 *
 * <ul>
 *   <li>topic → sink (3 tasks) → protected stream → source (restore mode, KIP-618) → topic, while
 *       the worker running the source task leaves mid-flow: every record arrives exactly once,
 *       byte-identical, judged by a unique id in its key and by its partition order.
 *   <li>a classic work queue consumed at the same time, in one queue-mode group, by the source
 *       connector in shared mode (2 competing tasks) and by a consumer application in a child JVM:
 *       every message is handled by exactly one of them.
 * </ul>
 */
class PostgresDistributedIT {
  private static final Duration TIMEOUT = Duration.ofMinutes(3);
  private static final String CLUSTER = "pg-distributed-it";
  private static final String CONFIG_TOPIC = CLUSTER + "-configs";
  private static final String SINK_EXAMPLE = "sink-postgres.json";
  private static final String SOURCE_EXAMPLE = "source-postgres.json";
  private static final int RECORDS = 24_000;
  private static final int JOBS = 3_000;
  private static final long BASE_TIMESTAMP = 1_767_225_600_000L;
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path temp;
  private static PostgresTestDatabase database;
  private static Map<String, String> store;
  private static Map<String, String> placeholders;
  private static EmbeddedConnectCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    database = PostgresTestDatabase.create();
    store = database.config();
    Path secrets = temp.resolve("queue-bridge-secrets.properties");
    Files.writeString(secrets, "password=" + store.get("password") + "\n");
    placeholders =
        Map.of(
            "PG_URL", store.get("url"),
            "PG_USER", store.get("user"),
            "PG_SECRETS_FILE", secrets.toString());
    Map<String, String> worker = new HashMap<>();
    worker.put("config.providers", "file");
    worker.put(
        "config.providers.file.class",
        "org.apache.kafka.common.config.provider.FileConfigProvider");
    worker.put("config.storage.topic", CONFIG_TOPIC);
    cluster = PluginUnderTest.startWorkers(CLUSTER, 3, worker);
  }

  @AfterAll
  static void stop() {
    try {
      if (cluster != null) {
        cluster.stop();
      }
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }

  @Test
  void everyRecordCrossesTopicStreamTopicExactlyOnceWhileTheSourceTasksWorkerLeaves()
      throws Exception {
    ExampleConfig sink = example(SINK_EXAMPLE);
    ExampleConfig source = example(SOURCE_EXAMPLE);
    Map<String, String> sinkConfig = sink.config(placeholders);
    Map<String, String> sourceConfig = source.config(placeholders);
    String input = sinkConfig.get("topics");
    String output = sourceConfig.get("topic");
    int partitions = Integer.parseInt(sourceConfig.get("topic.creation.default.partitions"));
    assertThat(Integer.parseInt(sinkConfig.get("tasks.max"))).isGreaterThan(1);
    cluster.kafka().createTopic(input, partitions, 1, Map.of());

    ConnectRestClient rest = restOf(anyWorker());
    assertThat(rest.createConnector(sink.resolve(placeholders))).isEqualTo(sink.name());
    awaitRunning(rest, sink.name());
    assertThat(rest.createConnector(source.resolve(placeholders))).isEqualTo(source.name());
    awaitRunning(rest, source.name());

    Map<String, Object> producerProps = new HashMap<>();
    producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
    producerProps.put(ProducerConfig.LINGER_MS_CONFIG, 10);
    // the input is produced in the background while a worker leaves
    CompletableFuture<List<RecordSnapshot>> producing =
        CompletableFuture.supplyAsync(
            () -> {
              List<RecordSnapshot> sent = new ArrayList<>(RECORDS);
              try (KafkaProducer<byte[], byte[]> producer =
                  cluster.kafka().createProducer(producerProps)) {
                produce(producer, input, partitions, 0, RECORDS, sent);
              } catch (Exception e) {
                throw new IllegalStateException("producing the input failed", e);
              }
              return sent;
            });
    long flowed;
    try (Admin admin = cluster.kafka().createAdminClient()) {
      await("the first records came out of the source")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(50))
          .ignoreExceptions() // until the source has created the topic
          .until(() -> lastStableOffsets(admin, output, partitions) >= RECORDS / 40);
      WorkerHandle leaving = workerRunningTask(rest, source.name());
      assertThat(leaving).as("the worker running the source task").isNotNull();
      String leavingUrl = String.valueOf(leaving.url());
      flowed = lastStableOffsets(admin, output, partitions);
      cluster.removeWorker(leaving);
      log(
          "removed worker "
              + leavingUrl
              + " (it ran the source task) at "
              + flowed
              + " committed offsets in "
              + output
              + " of "
              + RECORDS
              + " records");
      rest = restOf(anyWorker());
      // its tasks move: the source task restarts on another worker (and fences the old producer)
      ConnectRestClient moved = rest;
      await("the source task runs on another worker")
          .atMost(TIMEOUT)
          .ignoreExceptions()
          .until(
              () -> {
                WorkerHandle now = workerRunningTask(moved, source.name());
                return now != null && now != leaving;
              });
    }
    assertThat(flowed)
        .as("records were still on their way when the worker left")
        .isLessThan(RECORDS);
    List<RecordSnapshot> produced = producing.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    ConnectRestClient survivor = rest;
    await("the departed worker's tasks run elsewhere")
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(survivor.isRunning(sink.name())).isTrue();
              assertThat(survivor.isRunning(source.name())).isTrue();
            });

    awaitCommittedRecords(output, partitions, RECORDS);
    log("all " + RECORDS + " records are in " + output);
    rest.deleteConnector(source.name());
    rest.deleteConnector(sink.name());

    List<RecordSnapshot> restored = readAllCommitted(output);
    // each original record exactly once, by the unique id in its key
    Map<String, Integer> seen = new HashMap<>();
    restored.forEach(r -> seen.merge(RecordSnapshot.show(r.key()), 1, Integer::sum));
    assertThat(seen.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey))
        .as("records written to %s more than once", output)
        .isEmpty();
    assertThat(
            produced.stream()
                .map(r -> RecordSnapshot.show(r.key()))
                .filter(k -> !seen.containsKey(k)))
        .as("records lost on the way to %s", output)
        .isEmpty();
    // ... and byte-identical, in the same partition, in the original order
    assertThat(QuickstartRun.compareRestored(produced, restored)).isEmpty();
    assertThat(restored).hasSize(RECORDS);

    // connector and task configs alike: the reference, never the resolved password
    assertThat(storePasswordsInTheConfigTopic())
        .as("queue.store.password values in the config topic")
        .isNotEmpty()
        .allSatisfy(
            v ->
                assertThat(v)
                    .startsWith("${file:")
                    .endsWith("queue-bridge-secrets.properties:password}"));
  }

  @Test
  void aChildJvmConsumerAndTheSharedModeSourceHandleEachJobOfOneGroupExactlyOnce()
      throws Exception {
    String queue = "jobs";
    String group = "job-workers";
    String output = "jobs-out";
    String connector = "jobs-to-kafka-pg";
    Map<String, String> config = new LinkedHashMap<>(example(SOURCE_EXAMPLE).config(placeholders));
    config.keySet().removeAll(List.of("exactly.once.support", "transaction.boundary"));
    config.put("tasks.max", "2");
    config.put("queue.names", queue);
    config.put("queue.group", group);
    config.put("consumer.mode", "shared");
    config.put("restore.mode", "false");
    config.put("topic", output);
    config.put("topic.creation.default.partitions", "1");
    cluster.kafka().createTopic(output, 1, 1, Map.of());

    try (Storage storage = QueueStores.open("postgres", store)) {
      QueueManager app = new QueueManager(storage, QueueManagerConfig.defaults());
      app.start();
      try {
        app.createQueue(
            QueueConfig.durable(queue)
                .topics(queue + "/#")
                .deliveryTimeout(Duration.ofSeconds(20))
                .build());

        cluster.configureConnector(connector, config);
        cluster
            .assertions()
            .assertConnectorAndExactlyNumTasksAreRunning(connector, 2, "shared source running");

        Path storeFile = temp.resolve("child-store.properties");
        Properties p = new Properties();
        p.putAll(store);
        try (OutputStream out = Files.newOutputStream(storeFile)) {
          p.store(out, null);
        }
        try (Child child = Child.start(storeFile, queue, group, "child-app")) {
          await("child joined").atMost(TIMEOUT).until(() -> child.lines().contains("READY"));
          for (int i = 0; i < JOBS; i++) {
            app.publish(
                PublishRequest.builder(queue + "/work")
                    .key(("job-" + i).getBytes(StandardCharsets.UTF_8))
                    .value(("payload-" + i).getBytes(StandardCharsets.UTF_8))
                    .build());
          }
          await("every job handled by the child or written to " + output)
              .atMost(TIMEOUT)
              .pollInterval(Duration.ofMillis(500))
              .until(() -> child.acked().size() + committedRecords(output) >= JOBS);
          child.stopAndAwaitExit(TIMEOUT);
          cluster.deleteConnector(connector);

          List<String> byChild = child.acked();
          List<String> bySource =
              readAllCommitted(output).stream().map(r -> RecordSnapshot.show(r.key())).toList();
          log("child acknowledged " + byChild.size() + ", source wrote " + bySource.size());
          assertThat(byChild).as("the child acknowledged a job twice").doesNotHaveDuplicates();
          assertThat(bySource).as("the source wrote a job twice").doesNotHaveDuplicates();
          Set<String> both = new TreeSet<>(byChild);
          both.retainAll(new HashSet<>(bySource));
          assertThat(both).as("jobs handled by both the child and the source").isEmpty();
          Set<String> all = new HashSet<>(byChild);
          all.addAll(bySource);
          assertThat(all)
              .containsExactlyInAnyOrderElementsOf(
                  IntStream.range(0, JOBS).mapToObj(i -> "job-" + i).toList());
          assertThat(byChild).as("the child took part").isNotEmpty();
          assertThat(bySource).as("the source took part").isNotEmpty();
        }
      } finally {
        app.stop();
      }
    }
  }

  @Test
  void restValidationNeverEchoesALiteralStorePassword() throws Exception {
    String literal = "Wr0ng-Literal-Pa55word";
    Map<String, String> config = new LinkedHashMap<>(example(SINK_EXAMPLE).config(placeholders));
    config.put("queue.store.password", literal);
    // another schema, so that the worker opens a store of its own rather than sharing one that
    // another connector opened with the right password (open stores are shared by url + schema)
    config.put("queue.store.schema", "validate_only");
    config.put("name", "validate-only");
    ConfigInfos answer = cluster.validateConnectorConfig("QueueSinkConnector", config);
    String json = JSON.writeValueAsString(answer);
    assertThat(answer.errorCount()).as(json).isPositive();
    assertThat(json)
        .as("the worker's validation answer")
        .contains("cannot open the store")
        .doesNotContain(literal);
  }

  // ------------------------------------------------------------------ helpers

  private static ExampleConfig example(String file) {
    return ExampleConfig.read(PluginUnderTest.dir().resolve("etc").resolve(file));
  }

  private static WorkerHandle anyWorker() {
    return cluster.workers().iterator().next();
  }

  private static ConnectRestClient restOf(WorkerHandle worker) {
    return new ConnectRestClient(worker.url());
  }

  private static void awaitRunning(ConnectRestClient rest, String name) {
    await(name + " running")
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(rest.failureTrace(name)).isEmpty();
              assertThat(rest.isRunning(name)).isTrue();
            });
  }

  /**
   * The worker that runs task 0 of {@code connector}, by the port in its status's worker id; null
   * while the status names a worker that is no longer in the cluster.
   */
  private static WorkerHandle workerRunningTask(ConnectRestClient rest, String connector) {
    JsonNode tasks = rest.status(connector).path("tasks");
    assertThat(tasks.size()).as("tasks of %s", connector).isGreaterThan(0);
    String workerId = tasks.get(0).path("worker_id").asText();
    int port = Integer.parseInt(workerId.substring(workerId.lastIndexOf(':') + 1));
    return cluster.workers().stream()
        .filter(w -> w.url().getPort() == port)
        .findFirst()
        .orElse(null);
  }

  private static void produce(
      KafkaProducer<byte[], byte[]> producer,
      String topic,
      int partitions,
      int from,
      int to,
      List<RecordSnapshot> produced)
      throws Exception {
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(to - from);
    List<Future<RecordMetadata>> sent = new ArrayList<>(to - from);
    for (int i = from; i < to; i++) {
      RecordHeaders headers = new RecordHeaders();
      headers.add("seq", Integer.toString(i).getBytes(StandardCharsets.UTF_8));
      headers.add("bin", new byte[] {0, (byte) i, (byte) (i >> 8), -1});
      headers.add("seq", null);
      byte[] value =
          i % 1000 == 999
              ? null // a tombstone now and then
              : ("{\"id\":" + i + ",\"pad\":\"" + "x".repeat(i % 97) + "\"}")
                  .getBytes(StandardCharsets.UTF_8);
      ProducerRecord<byte[], byte[]> r =
          new ProducerRecord<>(
              topic,
              i % partitions,
              BASE_TIMESTAMP + i,
              ("id-" + i).getBytes(StandardCharsets.UTF_8),
              value,
              headers);
      records.add(r);
      sent.add(producer.send(r));
    }
    producer.flush();
    for (int i = 0; i < records.size(); i++) {
      produced.add(RecordSnapshot.produced(records.get(i), sent.get(i).get()));
    }
  }

  /** Records in {@code topic} visible to read_committed consumers, by reading them. */
  private static long committedRecords(String topic) throws Exception {
    return readAllCommitted(topic).size();
  }

  /**
   * Waits until {@code topic} holds {@code n} committed records. The last stable offsets count
   * transaction markers too, so they are only the cue to read and count.
   */
  private static void awaitCommittedRecords(String topic, int partitions, int n) {
    await(topic + " holds " + n + " committed records")
        .atMost(TIMEOUT)
        .ignoreExceptions()
        .pollInterval(Duration.ofSeconds(1))
        .until(
            () -> lastStableOffsets(topic, partitions) >= n && readAllCommitted(topic).size() >= n);
  }

  private static long lastStableOffsets(String topic, int partitions) throws Exception {
    try (Admin admin = cluster.kafka().createAdminClient()) {
      return lastStableOffsets(admin, topic, partitions);
    }
  }

  /** The sum of the last stable offsets (read_committed end offsets) of {@code topic}. */
  private static long lastStableOffsets(Admin admin, String topic, int partitions)
      throws Exception {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
    }
    return admin
        .listOffsets(latest, new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
        .all()
        .get()
        .values()
        .stream()
        .mapToLong(i -> i.offset())
        .sum();
  }

  private static List<RecordSnapshot> readAllCommitted(String topic) throws Exception {
    ConsumerRecords<byte[], byte[]> records =
        cluster
            .kafka()
            .consumeAll(
                TIMEOUT.toMillis(),
                Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"),
                null,
                topic);
    List<RecordSnapshot> out = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r : records) {
      out.add(RecordSnapshot.consumed(r));
    }
    return out;
  }

  /** Every {@code queue.store.password} value of every config record of the Connect cluster. */
  private static List<String> storePasswordsInTheConfigTopic() throws Exception {
    List<String> values = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r :
        cluster.kafka().consumeAll(TIMEOUT.toMillis(), CONFIG_TOPIC)) {
      if (r.value() != null) {
        JsonNode password =
            JSON.readTree(r.value()).path("properties").path("queue.store.password");
        if (!password.isMissingNode()) {
          values.add(password.asText());
        }
      }
    }
    return values;
  }

  private static void log(String message) {
    System.out.println(Instant.now() + " " + message);
  }

  /** The consumer application in a child JVM, on this test's class path. */
  private static final class Child implements AutoCloseable {
    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Thread reader;

    private Child(Process process) {
      this.process = process;
      this.reader =
          new Thread(
              () -> {
                try (BufferedReader in = process.inputReader(StandardCharsets.UTF_8)) {
                  for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.add(line);
                  }
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              },
              "child-output");
      reader.setDaemon(true);
      reader.start();
    }

    static Child start(Path storeFile, String queue, String group, String consumer)
        throws IOException {
      Path java = Path.of(System.getProperty("java.home"), "bin", "java");
      Process p =
          new ProcessBuilder(
                  java.toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  SharedQueueConsumerMain.class.getName(),
                  storeFile.toString(),
                  queue,
                  group,
                  consumer)
              .redirectError(temp.resolve("child-" + consumer + ".err").toFile())
              .start();
      return new Child(p);
    }

    List<String> lines() {
      return lines;
    }

    /** The keys of the jobs whose acknowledgement the store accepted. */
    List<String> acked() {
      return lines.stream()
          .filter(l -> l.startsWith("ACKED "))
          .map(l -> l.substring(l.lastIndexOf(' ') + 1))
          .collect(Collectors.toList());
    }

    void stopAndAwaitExit(Duration timeout) throws Exception {
      process.getOutputStream().close();
      assertThat(process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS))
          .as("the child exits when its standard input closes")
          .isTrue();
      reader.join(timeout.toMillis());
      assertThat(process.exitValue())
          .as("child exit status; its stderr: %s", temp.resolve("child-child-app.err"))
          .isZero();
      assertThat(lines).anyMatch(l -> l.startsWith("DONE "));
    }

    @Override
    public void close() {
      process.destroyForcibly();
    }
  }
}
