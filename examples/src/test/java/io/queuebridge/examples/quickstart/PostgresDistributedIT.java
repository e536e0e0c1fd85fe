package io.queuebridge.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.message.PublishRequest;
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
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
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
import org.awaitility.core.ConditionTimeoutException;
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
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);
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
    // the records carry timestamps from 2026-01-01: with the default retention.ms (7 days) the
    // broker's first retention check (30 s after it starts, then every 5 minutes) deletes them
    cluster.kafka().createTopic(input, partitions, 1, Map.of("retention.ms", "-1"));
    assertThat(sourceConfig.get("topic.creation.default.retention.ms"))
        .as("a restore keeps the original timestamps, so its topic must not expire them")
        .isEqualTo("-1");

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

    awaitCommittedRecords(output, partitions, RECORDS, produced);
    log("all " + RECORDS + " records are in " + output);
    rest.deleteConnector(source.name());
    rest.deleteConnector(sink.name());
    // the source is gone: every transaction it began is committed or aborted by now
    awaitNoOpenTransaction(output, partitions, produced);

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
  void aPauseFromAnotherProcessStopsTheSourceOfAStreamAndAResumeDeliversTheRestOnce()
      throws Exception {
    String stream = "pausable";
    String group = "pausable-readers";
    String output = "pausable-out";
    String connector = "pausable-to-kafka-pg";
    // more published while paused than the source can read before it sees the pause
    int total = 1100;
    Map<String, String> config = new LinkedHashMap<>(example(SOURCE_EXAMPLE).config(placeholders));
    config.put("tasks.max", "1");
    config.put("queue.names", stream);
    config.put("queue.group", group);
    config.put("restore.mode", "false");
    config.put("topic", output);
    config.put("topic.creation.default.partitions", "1");
    config.put("queue.commit.interval.ms", "200");
    cluster.kafka().createTopic(output, 1, 1, Map.of());

    // the operator's process: a store instance of its own, as the command line would open it
    try (Storage operator = QueueStores.open("postgres", store)) {
      QueueManager app = new QueueManager(operator, QueueManagerConfig.defaults());
      app.start();
      try {
        app.createQueue(
            QueueConfig.durable(stream).type(QueueType.STREAM).topics(stream + "/#").build());
        publishNumbered(app, stream, 0, 100);
        cluster.configureConnector(connector, config);
        cluster
            .assertions()
            .assertConnectorAndExactlyNumTasksAreRunning(connector, 1, "stream source running");
        await("the first 100 written")
            .atMost(TIMEOUT)
            .pollInterval(Duration.ofMillis(500))
            .until(() -> committedRecords(output) == 100);

        assertThat(app.consumerGroups().pause(stream, group)).isTrue();
        publishNumbered(app, stream, 100, total);
        // the source sees the flag with its next progress flush: a few messages may pass before
        await("the source stopped with messages left unread")
            .atMost(TIMEOUT)
            .pollInterval(Duration.ofMillis(500))
            .during(Duration.ofSeconds(5))
            .until(() -> committedRecords(output) < total);
        long whilePaused = committedRecords(output);
        log("records written while the group was paused: " + (whilePaused - 100));

        assertThat(app.consumerGroups().resume(stream, group)).isTrue();
        await("the rest written after the resume")
            .atMost(TIMEOUT)
            .pollInterval(Duration.ofMillis(500))
            .until(() -> committedRecords(output) >= total);
        cluster.deleteConnector(connector);
        List<String> keys =
            readAllCommitted(output).stream().map(r -> RecordSnapshot.show(r.key())).toList();
        assertThat(keys)
            .as("every message once, in stream order")
            .containsExactlyElementsOf(IntStream.range(0, total).mapToObj(i -> "m-" + i).toList());
      } finally {
        app.stop();
      }
    }
  }

  /** Publishes {@code m-from} ... {@code m-(to-1)} to {@code stream} (also ConsoleIT's). */
  static void publishNumbered(QueueManager app, String stream, int from, int to)
      throws InterruptedException {
    for (int i = from; i < to; i++) {
      app.publish(
          PublishRequest.builder(stream + "/item")
              .key(("m-" + i).getBytes(StandardCharsets.UTF_8))
              .value(("payload-" + i).getBytes(StandardCharsets.UTF_8))
              .build());
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

  /** Connect's stored offsets of every source connector still there, for diagnostics. */
  private static String storedSourceOffsets() {
    StringBuilder b = new StringBuilder();
    for (String name : cluster.connectors()) {
      try {
        b.append(name).append('=').append(cluster.connectorOffsets(name).offsets()).append(' ');
      } catch (RuntimeException e) {
        b.append(name).append(": ").append(e.getMessage()).append(' ');
      }
    }
    return b.toString();
  }

  /** Records in {@code topic} visible to read_committed consumers, by reading them. */
  private static long committedRecords(String topic) throws Exception {
    return readAllCommitted(topic).size();
  }

  /**
   * Waits until {@code topic} holds {@code n} committed records, counted by reading them with
   * read_committed up to the last stable offsets. On a timeout it prints, per partition, the high
   * watermark, the last stable offset, the records read, the open transactions, and the ids of
   * {@code produced} that are missing.
   */
  private static void awaitCommittedRecords(
      String topic, int partitions, int n, List<RecordSnapshot> produced) throws Exception {
    AtomicReference<Object> last = new AtomicReference<>();
    try {
      await(topic + " holds " + n + " committed records")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofSeconds(1))
          .until(
              () -> {
                try {
                  int read = readAllCommitted(topic).size();
                  last.set(read);
                  return read >= n;
                } catch (Exception e) { // e.g. until the topic is there; shown on a timeout
                  last.set(e);
                  return false;
                }
              });
    } catch (ConditionTimeoutException e) {
      log("the last count (or failure) reading " + topic + ": " + last.get());
      log(committedState(topic, partitions, produced));
      throw e;
    }
  }

  /**
   * Waits until no transaction is open on {@code topic}: the last stable offset of every partition
   * is its high watermark, so what read_committed reads is all the topic will ever show.
   */
  private static void awaitNoOpenTransaction(
      String topic, int partitions, List<RecordSnapshot> produced) throws Exception {
    try (Admin admin = cluster.kafka().createAdminClient()) {
      await(topic + " has no open transaction")
          .atMost(TIMEOUT)
          .ignoreExceptions()
          .pollInterval(Duration.ofMillis(200))
          .until(
              () ->
                  endOffsets(admin, topic, partitions, IsolationLevel.READ_COMMITTED)
                      .equals(
                          endOffsets(admin, topic, partitions, IsolationLevel.READ_UNCOMMITTED)));
    } catch (ConditionTimeoutException e) {
      log(committedState(topic, partitions, produced));
      throw e;
    }
  }

  /** What decides a missing-records timeout: offsets, open transactions, records, missing ids. */
  private static String committedState(
      String topic, int partitions, List<RecordSnapshot> produced) {
    StringBuilder b = new StringBuilder("state of ").append(topic).append(':');
    try (Admin admin = cluster.kafka().createAdminClient()) {
      Map<TopicPartition, Long> hw =
          endOffsets(admin, topic, partitions, IsolationLevel.READ_UNCOMMITTED);
      Map<TopicPartition, Long> lso =
          endOffsets(admin, topic, partitions, IsolationLevel.READ_COMMITTED);
      Map<TopicPartition, OffsetSpec> earliest = new HashMap<>();
      hw.keySet().forEach(tp -> earliest.put(tp, OffsetSpec.earliest()));
      var logStart = admin.listOffsets(earliest).all().get();
      var producers = admin.describeProducers(hw.keySet()).all().get();
      List<RecordSnapshot> read = readAllCommitted(topic);
      Map<Integer, Long> perPartition =
          read.stream()
              .collect(Collectors.groupingBy(RecordSnapshot::partition, Collectors.counting()));
      for (int p = 0; p < partitions; p++) {
        TopicPartition tp = new TopicPartition(topic, p);
        b.append("\n  partition ")
            .append(p)
            .append(": log start offset ")
            .append(logStart.get(tp).offset())
            .append(", high watermark ")
            .append(hw.get(tp))
            .append(", last stable offset ")
            .append(lso.get(tp))
            .append(", read_committed records ")
            .append(perPartition.getOrDefault(p, 0L))
            .append(", producers ");
        producers
            .get(tp)
            .activeProducers()
            .forEach(
                s ->
                    b.append("[id ")
                        .append(s.producerId())
                        .append(" epoch ")
                        .append(s.producerEpoch())
                        .append(" last seq ")
                        .append(s.lastSequence())
                        .append(" open transaction from ")
                        .append(s.currentTransactionStartOffset())
                        .append("] "));
      }
      Set<String> seen =
          read.stream().map(r -> RecordSnapshot.show(r.key())).collect(Collectors.toSet());
      List<String> missing =
          produced == null
              ? List.of()
              : produced.stream()
                  .map(r -> RecordSnapshot.show(r.key()))
                  .filter(k -> !seen.contains(k))
                  .toList();
      b.append("\n  Connect's stored source offset ").append(storedSourceOffsets());
      b.append("\n  read ")
          .append(read.size())
          .append(" records; missing ")
          .append(missing.size())
          .append(": ")
          .append(missing.size() > 40 ? missing.subList(0, 40) + " ..." : missing);
      if (!missing.isEmpty()) {
        b.append(
                "\n  where read_uncommitted finds the missing ones (partition: first..last offset,"
                    + " count): ")
            .append(uncommittedPlaces(hw, new HashSet<>(missing)));
      }
    } catch (Exception e) {
      b.append("\n  (could not read it all: ").append(e).append(')');
    }
    return b.toString();
  }

  /** Per partition, the offsets at which read_uncommitted finds records with {@code keys}. */
  private static Map<Integer, String> uncommittedPlaces(
      Map<TopicPartition, Long> highWatermarks, Set<String> keys) {
    Map<Integer, long[]> places = new TreeMap<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        cluster
            .kafka()
            .createConsumer(Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted"))) {
      consumer.assign(highWatermarks.keySet());
      consumer.seekToBeginning(highWatermarks.keySet());
      long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
      while (System.nanoTime() - deadline < 0
          && highWatermarks.entrySet().stream()
              .anyMatch(e -> consumer.position(e.getKey()) < e.getValue())) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          if (keys.contains(RecordSnapshot.show(r.key()))) {
            long[] p =
                places.computeIfAbsent(r.partition(), k -> new long[] {Long.MAX_VALUE, -1, 0});
            p[0] = Math.min(p[0], r.offset());
            p[1] = Math.max(p[1], r.offset());
            p[2]++;
          }
        }
      }
    }
    Map<Integer, String> out = new TreeMap<>();
    places.forEach((k, p) -> out.put(k, p[0] + ".." + p[1] + " (" + p[2] + ")"));
    return out;
  }

  private static long lastStableOffsets(Admin admin, String topic, int partitions)
      throws Exception {
    return endOffsets(admin, topic, partitions, IsolationLevel.READ_COMMITTED).values().stream()
        .mapToLong(Long::longValue)
        .sum();
  }

  /**
   * The end offsets of {@code topic}: the last stable offsets for read_committed, the high
   * watermarks for read_uncommitted.
   */
  private static Map<TopicPartition, Long> endOffsets(
      Admin admin, String topic, int partitions, IsolationLevel isolation) throws Exception {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    for (int p = 0; p < partitions; p++) {
      latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
    }
    Map<TopicPartition, Long> out =
        new TreeMap<>(Comparator.comparingInt(TopicPartition::partition));
    admin
        .listOffsets(latest, new ListOffsetsOptions(isolation))
        .all()
        .get()
        .forEach((tp, info) -> out.put(tp, info.offset()));
    return out;
  }

  /**
   * The records of {@code topic} that read_committed consumers see: each partition read from its
   * beginning up to its last stable offset, listed first. Never waits for a high watermark, which a
   * read_committed consumer cannot pass while a transaction is open.
   */
  private static List<RecordSnapshot> readAllCommitted(String topic) throws Exception {
    Map<TopicPartition, Long> stable;
    try (Admin admin = cluster.kafka().createAdminClient()) {
      int partitions =
          admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic).partitions().size();
      stable = endOffsets(admin, topic, partitions, IsolationLevel.READ_COMMITTED);
    }
    return ReadCommitted.upTo(cluster.kafka(), topic, stable, READ_TIMEOUT).stream()
        .map(RecordSnapshot::consumed)
        .toList();
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
