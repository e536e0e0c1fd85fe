package io.queuebridge.examples.quickstart;

import static io.queuebridge.examples.quickstart.ConnectFlows.endOffsets;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.TimestampType;
import io.queuebridge.core.store.QueueStore;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code postgres} store under the sink and the source while its PostgreSQL server crashes
 * ({@code pg_ctl stop -m immediate}: no checkpoint, crash recovery on restart) and comes back,
 * mid-flow: nothing lost, nothing duplicated, the tasks resume by themselves. The server is a
 * cluster of this class's own ({@link PrivatePostgres}), never the shared test server. The
 * connectors are the shipped postgres examples ({@code etc/sink-postgres.json}, {@code
 * etc/source-postgres.json}) with their topics, streams and schemas changed, loaded from the plugin
 * archive on {@code plugin.path} of one worker with {@code exactly.once.source.support=enabled}.
 *
 * <ol>
 *   <li>the sink (2 tasks) through three crashes, each while records are on their way and each
 *       keeping the server down for at least {@link #OUTAGE} while more input arrives;
 *   <li>the source (KIP-618 exactly once) through three crashes the same way;
 *   <li>an outage longer than the retry budget ({@code queue.retry.timeout.ms}): every task of both
 *       connectors fails with a trace naming the store and the last error; once the server is back,
 *       a REST restart of each failed task resumes them.
 * </ol>
 *
 * <p>Every assertion is on data, record by record: each Kafka record is in the stream once, with
 * its key, value, headers, timestamp and source coordinates; each stream message is in the output
 * topic once (read_committed), with its key, value, headers and timestamp. About 95 s (the worker's
 * start included); skipped, with the reason, where no PostgreSQL server can be run.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PostgresCrashIT {
  private static final Duration TIMEOUT = Duration.ofMinutes(2);
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(30);

  /** How long each crash keeps the server down at least: several retry backoffs. */
  private static final Duration OUTAGE = Duration.ofSeconds(2);

  private static final String RETRY_BACKOFF_MS = "300";

  /** The retry budget of the last test: an outage outlasts it. */
  private static final String RETRY_TIMEOUT_MS = "3000";

  private static final String DATABASE = "qb_crash";
  private static final String SINK_EXAMPLE = "sink-postgres.json";
  private static final String SOURCE_EXAMPLE = "source-postgres.json";
  private static final int CRASHES = 3;
  private static final int PHASE = 10_000;
  private static final long BASE_TIMESTAMP = 1_767_225_600_000L;

  @TempDir static Path temp;
  private static PrivatePostgres pg;
  private static EmbeddedConnectCluster cluster;
  private static ConnectRestClient rest;
  private static Map<String, String> placeholders;

  @BeforeAll
  static void start() throws IOException {
    pg = PrivatePostgres.start(DATABASE);
    Path secrets = temp.resolve("queue-bridge-secrets.properties");
    Files.writeString(secrets, "password=" + PrivatePostgres.PASSWORD + "\n");
    placeholders =
        Map.of(
            "PG_URL", pg.url(DATABASE),
            "PG_USER", PrivatePostgres.USER,
            "PG_SECRETS_FILE", secrets.toString());
    Map<String, String> worker = new HashMap<>();
    worker.put("config.providers", "file");
    worker.put(
        "config.providers.file.class",
        "org.apache.kafka.common.config.provider.FileConfigProvider");
    cluster = PluginUnderTest.startWorkers("pg-crash-it", 1, worker);
    rest = new ConnectRestClient(cluster.workers().iterator().next().url());
  }

  @AfterAll
  static void stop() {
    try {
      if (cluster != null) {
        cluster.stop();
      }
    } finally {
      if (pg != null) {
        pg.close();
      }
    }
  }

  // ------------------------------------------------------------------ the sink

  @Test
  @Order(1)
  void sinkTasksRideOutServerCrashesAndStoreEveryRecordExactlyOnce() throws Exception {
    String topic = "crash-in";
    String stream = "crash-stream";
    String schema = "sink_crash";
    String connector = "crash-sink";
    int partitions = 4;
    cluster.kafka().createTopic(topic, partitions, 1, Map.of("retention.ms", "-1"));
    Map<String, String> config = sinkConfig(topic, stream, schema);
    cluster.configureConnector(connector, config);
    awaitRunning(connector, 2);

    List<RecordSnapshot> produced = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> producer = producer();
        Storage reader = readOnly(schema)) {
      QueueStore queues = reader.queues();
      produce(producer, topic, partitions, produced, PHASE);
      for (int crash = 0; crash < CRASHES; crash++) {
        long landed = (long) crash * PHASE + PHASE / 4;
        await("the stream holds " + landed + " records")
            .atMost(TIMEOUT)
            .pollInterval(Duration.ofMillis(20))
            .ignoreExceptions() // the reader's pool heals after a restart too
            .until(() -> queues.tail(stream) >= landed);
        // a crash must find records on their way: a sink that caught up gets another batch first
        long atCrash = queues.tail(stream);
        for (int extra = 0; atCrash >= produced.size(); extra++) {
          assertThat(extra)
              .as("batches produced to catch the sink with records on their way")
              .isLessThan(5);
          produce(producer, topic, partitions, produced, PHASE / 2);
          atCrash = queues.tail(stream);
        }
        log("crash " + (crash + 1) + " at " + atCrash + " of " + produced.size() + " records");
        // the input moves on while the server is down
        outage(() -> produce(producer, topic, partitions, produced, PHASE));
        assertNoTaskFailed(connector);
      }
      int total = produced.size();
      await("the stream holds all " + total + " records")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(200))
          .ignoreExceptions()
          .until(() -> queues.tail(stream) >= total);
      awaitCommitted(connector, total);
      assertTasksRunning(connector, 2);
      cluster.deleteConnector(connector);
      assertStreamHoldsEachRecordOnce(queues, stream, produced);
    }
  }

  // ------------------------------------------------------------------ the source

  @Test
  @Order(2)
  void sourceTaskRidesOutServerCrashesAndPublishesEveryMessageExactlyOnce() throws Exception {
    String stream = "crash-source-stream";
    String topic = "crash-out";
    String schema = "source_crash";
    String connector = "crash-source";
    cluster.kafka().createTopic(topic, 3, 1, Map.of("retention.ms", "-1"));
    try (Storage storage = QueueStores.open("postgres", storeConfig(schema))) {
      QueueManager manager = new QueueManager(storage, QueueManagerConfig.defaults());
      manager.start();
      manager.createQueue(QueueConfig.durable(stream).type(QueueType.STREAM).build());
      manager.stop();
      QueueStore queues = storage.queues();
      Map<String, Message> appended = new LinkedHashMap<>();
      // every phase at once: the source (faster than the appends) has messages on their way at
      // every crash
      append(queues, stream, appended, (CRASHES + 1) * PHASE);

      Map<String, String> config = sourceConfig(stream, topic, schema);
      cluster.configureConnector(connector, config);
      awaitRunning(connector, 1);
      int midFlow = 0;
      try (Admin admin = cluster.kafka().createAdminClient()) {
        for (int crash = 0; crash < CRASHES; crash++) {
          long landed = (long) crash * PHASE + PHASE / 4;
          await(topic + " holds " + landed + " committed offsets")
              .atMost(TIMEOUT)
              .pollInterval(Duration.ofMillis(20))
              .until(() -> stableOffsets(admin, topic) >= landed);
          // the last stable offsets count transaction markers too: below the messages appended
          // means messages were still on their way
          long atCrash = stableOffsets(admin, topic);
          if (atCrash < appended.size()) {
            midFlow++;
          }
          log("crash " + (crash + 1) + " at " + atCrash + " of " + appended.size() + " messages");
          outage(() -> {});
          assertNoTaskFailed(connector);
        }
      }
      int total = appended.size();
      await(topic + " holds all " + total + " messages")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(500))
          .until(() -> readCommitted(topic).size() >= total);
      assertTasksRunning(connector, 1);
      cluster.deleteConnector(connector);
      awaitNoOpenTransaction(topic);

      assertTopicHoldsEachMessageOnce(topic, appended);
      assertThat(midFlow).as("crashes that hit messages on their way").isEqualTo(CRASHES);
    }
  }

  // ------------------------------------------------------------------ past the retry budget

  @Test
  @Order(3)
  void anOutageLongerThanTheRetryBudgetFailsTheTasksNamingTheStoreAndARestartResumesExactlyOnce()
      throws Exception {
    String schema = "outage";
    String inTopic = "outage-in";
    String sinkStream = "outage-stream";
    String sink = "outage-sink";
    String sourceStream = "outage-source-stream";
    String outTopic = "outage-out";
    String source = "outage-source";
    int partitions = 2;
    cluster.kafka().createTopic(inTopic, partitions, 1, Map.of("retention.ms", "-1"));
    cluster.kafka().createTopic(outTopic, 2, 1, Map.of("retention.ms", "-1"));
    Map<String, String> sinkConfig = sinkConfig(inTopic, sinkStream, schema);
    Map<String, String> sourceConfig = sourceConfig(sourceStream, outTopic, schema);
    // queue.store.connect.timeout.ms stays at its default (10 s): above the pool's reconnect
    // backoff (HikariCP's, up to 5 s), so the restarted tasks find the database at once
    for (Map<String, String> c : List.of(sinkConfig, sourceConfig)) {
      c.put("queue.retry.timeout.ms", RETRY_TIMEOUT_MS);
    }
    String store = "postgres:" + pg.url(DATABASE) + "#" + schema + " as " + PrivatePostgres.USER;

    List<RecordSnapshot> produced = new ArrayList<>();
    Map<String, Message> appended = new LinkedHashMap<>();
    try (Storage storage = QueueStores.open("postgres", storeConfig(schema));
        KafkaProducer<byte[], byte[]> producer = producer()) {
      QueueManager manager = new QueueManager(storage, QueueManagerConfig.defaults());
      manager.start();
      manager.createQueue(QueueConfig.durable(sourceStream).type(QueueType.STREAM).build());
      manager.stop();
      QueueStore queues = storage.queues();
      append(queues, sourceStream, appended, PHASE / 2);
      produce(producer, inTopic, partitions, produced, PHASE / 2);
      cluster.configureConnector(sink, sinkConfig);
      cluster.configureConnector(source, sourceConfig);
      awaitRunning(sink, 2);
      awaitRunning(source, 1);
      try (Admin admin = cluster.kafka().createAdminClient()) {
        await("both connectors moved records")
            .atMost(TIMEOUT)
            .pollInterval(Duration.ofMillis(20))
            .until(
                () ->
                    queues.tail(sinkStream) >= PHASE / 8
                        && stableOffsets(admin, outTopic) >= PHASE / 8);
      }

      pg.crash();
      Instant down = Instant.now();
      Map<String, String> traces = new LinkedHashMap<>();
      try {
        produce(producer, inTopic, partitions, produced, PHASE / 2); // the sink has work to fail
        await("every task failed once its retry budget was spent")
            .atMost(TIMEOUT)
            .pollInterval(Duration.ofMillis(200))
            .until(() -> failedTasks(sink).size() == 2 && failedTasks(source).size() == 1);
        traces.putAll(failedTasks(sink));
        traces.putAll(failedTasks(source));
        assertThat(pg.accepting()).as("the server was down all along").isFalse();
      } finally {
        pg.restart();
      }
      log(
          "every task failed; server back after "
              + Duration.between(down, Instant.now()).toMillis()
              + " ms");
      assertThat(traces)
          .hasSize(3)
          .allSatisfy(
              (task, trace) ->
                  assertThat(trace)
                      .as("the trace of %s", task)
                      .contains("giving up on the store " + store + ": ")
                      .contains("past queue.retry.timeout.ms=" + RETRY_TIMEOUT_MS + ";")
                      .contains("Last error: postgres store " + store));

      // the operator restarts the failed tasks over the REST API once the database is back
      for (String task : traces.keySet()) {
        String[] parts = task.split("/");
        cluster.restartTask(parts[0], Integer.parseInt(parts[1]));
      }
      awaitRunning(sink, 2);
      awaitRunning(source, 1);
      produce(producer, inTopic, partitions, produced, PHASE / 2);
      append(queues, sourceStream, appended, PHASE / 2);

      int records = produced.size();
      int messages = appended.size();
      try (Storage reader = readOnly(schema)) {
        QueueStore view = reader.queues();
        await("the stream holds all " + records + " records")
            .atMost(TIMEOUT)
            .pollInterval(Duration.ofMillis(200))
            .until(() -> view.tail(sinkStream) >= records);
        awaitCommitted(sink, records);
        await(outTopic + " holds all " + messages + " messages")
            .atMost(TIMEOUT)
            .pollInterval(Duration.ofMillis(500))
            .until(() -> readCommitted(outTopic).size() >= messages);
        assertTasksRunning(sink, 2);
        assertTasksRunning(source, 1);
        cluster.deleteConnector(sink);
        cluster.deleteConnector(source);
        awaitNoOpenTransaction(outTopic);
        assertStreamHoldsEachRecordOnce(view, sinkStream, produced);
        assertTopicHoldsEachMessageOnce(outTopic, appended);
      }
    }
  }

  // ------------------------------------------------------------------ the assertions

  /**
   * Every Kafka record of {@code produced} is in {@code stream} exactly once, byte-identical: key,
   * value, headers, timestamp and the partition and offset it came from.
   */
  private static void assertStreamHoldsEachRecordOnce(
      QueueStore queues, String stream, List<RecordSnapshot> produced) {
    List<RecordSnapshot> stored = readStream(queues, stream);
    assertThat(QuickstartRun.compareStream(produced, stored))
        .as("stream messages against the Kafka records they carry the coordinates of")
        .isEmpty();
    assertThat(stored).hasSize(produced.size());
  }

  /**
   * Every message of {@code appended} is in {@code topic} exactly once for read_committed
   * consumers, byte-identical: key, value, headers and timestamp.
   */
  private static void assertTopicHoldsEachMessageOnce(String topic, Map<String, Message> appended)
      throws Exception {
    List<ConsumerRecord<byte[], byte[]>> out = readCommitted(topic);
    Map<String, Integer> seen = new HashMap<>();
    List<String> problems = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r : out) {
      String key = new String(r.key(), StandardCharsets.UTF_8);
      if (seen.merge(key, 1, Integer::sum) > 1) {
        problems.add("published twice: " + key);
        continue;
      }
      Message m = appended.get(key);
      if (m == null) {
        problems.add("not in the stream: " + key);
        continue;
      }
      RecordSnapshot expected = RecordSnapshot.stored(m);
      RecordSnapshot actual = RecordSnapshot.consumed(r);
      if (!actual.sameContent(expected) || actual.timestamp() != m.timestamp()) {
        problems.add(key + ": " + actual + " @" + actual.timestamp() + " != " + expected);
      }
    }
    appended.keySet().stream()
        .filter(k -> !seen.containsKey(k))
        .forEach(k -> problems.add("never published: " + k));
    assertThat(problems).as("output records against the stream's messages").isEmpty();
    assertThat(out).hasSize(appended.size());
  }

  // ------------------------------------------------------------------ configs

  private static Map<String, String> sinkConfig(String topic, String stream, String schema) {
    Map<String, String> c = new LinkedHashMap<>(example(SINK_EXAMPLE).config(placeholders));
    c.put("tasks.max", "2");
    c.put("topics", topic);
    c.put("queue.name", stream);
    c.put("queue.topics", stream + "/#");
    c.put("queue.store.schema", schema);
    c.put("queue.retry.backoff.ms", RETRY_BACKOFF_MS);
    return c;
  }

  private static Map<String, String> sourceConfig(String stream, String topic, String schema) {
    Map<String, String> c = new LinkedHashMap<>(example(SOURCE_EXAMPLE).config(placeholders));
    c.put("tasks.max", "1");
    c.put("queue.names", stream);
    c.put("topic", topic);
    c.put("restore.mode", "false");
    c.put("queue.store.schema", schema);
    c.put("queue.retry.backoff.ms", RETRY_BACKOFF_MS);
    c.put("poll.max.records", "200");
    assertThat(c.get("exactly.once.support")).isEqualTo("required");
    return c;
  }

  private static Map<String, String> storeConfig(String schema) {
    Map<String, String> c = new HashMap<>();
    c.put("url", pg.url(DATABASE));
    c.put("user", PrivatePostgres.USER);
    c.put("password", PrivatePostgres.PASSWORD);
    c.put("schema", schema);
    c.put("connect.timeout.ms", "2000");
    return c;
  }

  private static ExampleConfig example(String file) {
    return ExampleConfig.read(PluginUnderTest.dir().resolve("etc").resolve(file));
  }

  // ------------------------------------------------------------------ the crashes

  /**
   * Crashes the server, runs {@code whileDown}, keeps the server down for at least {@link #OUTAGE}
   * and starts it again.
   */
  private static void outage(ThrowingRunnable whileDown) throws Exception {
    pg.crash();
    Instant down = Instant.now();
    try {
      assertThat(pg.accepting()).as("%s accepts logins after the crash", pg).isFalse();
      whileDown.run();
      await("the server stays down for " + OUTAGE)
          .during(OUTAGE)
          .atMost(OUTAGE.plusSeconds(10))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> !pg.accepting());
    } finally {
      pg.restart();
    }
    log("server back after " + Duration.between(down, Instant.now()).toMillis() + " ms");
  }

  @FunctionalInterface
  private interface ThrowingRunnable {
    void run() throws Exception;
  }

  // ------------------------------------------------------------------ Connect

  private static void awaitRunning(String connector, int tasks) {
    await(connector + " running with " + tasks + " task(s)")
        .atMost(TIMEOUT)
        .ignoreExceptionsMatching(e -> e instanceof ConnectRestClient.ConnectRestException)
        .untilAsserted(() -> assertTasksRunning(connector, tasks));
  }

  private static void assertTasksRunning(String connector, int tasks) {
    JsonNode status = rest.status(connector);
    assertThat(status.path("connector").path("state").asText()).isEqualTo("RUNNING");
    List<String> states = new ArrayList<>();
    status.path("tasks").forEach(t -> states.add(t.path("state").asText()));
    assertThat(states).as("task states of %s: %s", connector, status).hasSize(tasks);
    assertThat(states).as("task states of %s: %s", connector, status).containsOnly("RUNNING");
  }

  /** The traces of the failed tasks of {@code connector}, by {@code <connector>/<task id>}. */
  private static Map<String, String> failedTasks(String connector) {
    Map<String, String> out = new LinkedHashMap<>();
    for (JsonNode t : rest.status(connector).path("tasks")) {
      if ("FAILED".equals(t.path("state").asText())) {
        out.put(connector + "/" + t.path("id").asInt(), t.path("trace").asText());
      }
    }
    return out;
  }

  private static void assertNoTaskFailed(String connector) {
    assertThat(rest.failureTrace(connector)).as("failure trace of %s", connector).isEmpty();
  }

  /** Waits until the sink committed {@code total} offsets to Kafka: every record is durable. */
  private static void awaitCommitted(String connector, long total) throws Exception {
    try (Admin admin = cluster.kafka().createAdminClient()) {
      await("the sink committed every offset")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(200))
          .until(
              () ->
                  admin
                          .listConsumerGroupOffsets("connect-" + connector)
                          .partitionsToOffsetAndMetadata()
                          .get()
                          .values()
                          .stream()
                          .mapToLong(o -> o.offset())
                          .sum()
                      == total);
    }
  }

  // ------------------------------------------------------------------ data

  private static KafkaProducer<byte[], byte[]> producer() {
    Map<String, Object> props = new HashMap<>();
    props.put(ProducerConfig.ACKS_CONFIG, "all");
    props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    return cluster.kafka().createProducer(props);
  }

  /**
   * Produces {@code n} more records (keys {@code id-<i>}, a tombstone now and then, repeated,
   * binary and null headers, distinct timestamps) round robin over the partitions, waits for every
   * ack.
   */
  private static void produce(
      KafkaProducer<byte[], byte[]> producer,
      String topic,
      int partitions,
      List<RecordSnapshot> produced,
      int n)
      throws Exception {
    int from = produced.size();
    List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>(n);
    List<Future<RecordMetadata>> sent = new ArrayList<>(n);
    for (int i = from; i < from + n; i++) {
      RecordHeaders headers = new RecordHeaders();
      headers.add("seq", Integer.toString(i).getBytes(StandardCharsets.UTF_8));
      headers.add("bin", new byte[] {0, (byte) i, (byte) (i >> 8), -1});
      headers.add("seq", null);
      byte[] value =
          i % 1000 == 999
              ? null
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
    for (int i = 0; i < n; i++) {
      produced.add(RecordSnapshot.produced(records.get(i), sent.get(i).get()));
    }
  }

  /**
   * Appends {@code n} more messages to {@code stream} in batches of 500 (keys {@code m-<i>}, a null
   * value now and then, repeated, binary and null headers, distinct create-time timestamps). A
   * batch whose commit is in doubt is appended again only if the tail shows it is not there.
   */
  private static void append(
      QueueStore queues, String stream, Map<String, Message> appended, int n) {
    int from = appended.size();
    for (int start = from; start < from + n; start += 500) {
      List<Message> batch = new ArrayList<>(500);
      for (int i = start; i < Math.min(start + 500, from + n); i++) {
        byte[] value =
            i % 1000 == 999
                ? null
                : ("{\"m\":" + i + ",\"pad\":\"" + "y".repeat(i % 89) + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
        batch.add(
            Message.builder()
                .topic(stream + "/in")
                .key(("m-" + i).getBytes(StandardCharsets.UTF_8))
                .value(value)
                .header("seq", Integer.toString(i).getBytes(StandardCharsets.UTF_8))
                .header(Header.of("bin", new byte[] {(byte) i, 0, -1}))
                .header(Header.of("seq", (byte[]) null))
                .timestamp(BASE_TIMESTAMP + i, TimestampType.CREATE_TIME)
                .build());
      }
      long tailAfter = start + batch.size();
      await("messages up to " + tailAfter + " appended to " + stream)
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(100))
          .ignoreExceptions()
          .until(
              () -> {
                if (queues.tail(stream) < tailAfter) {
                  queues.appendBatch(stream, batch);
                }
                return queues.tail(stream) == tailAfter;
              });
      for (Message m : batch) {
        appended.put(new String(m.key(), StandardCharsets.UTF_8), m);
      }
    }
  }

  /** A read-only view of the store's {@code schema}, beside the connectors. */
  private static Storage readOnly(String schema) {
    return QueueStores.provider("postgres").openReadOnly(storeConfig(schema));
  }

  private static List<RecordSnapshot> readStream(QueueStore queues, String stream) {
    List<RecordSnapshot> out = new ArrayList<>();
    long next = queues.head(stream);
    long tail = queues.tail(stream);
    while (next < tail) {
      List<Message> batch = queues.readBatch(stream, next, 1000);
      batch.forEach(m -> out.add(RecordSnapshot.stored(m)));
      next = batch.get(batch.size() - 1).offset() + 1;
    }
    return out;
  }

  private static long stableOffsets(Admin admin, String topic) throws Exception {
    return endOffsets(admin, topic, IsolationLevel.READ_COMMITTED).values().stream()
        .mapToLong(Long::longValue)
        .sum();
  }

  private static void awaitNoOpenTransaction(String topic) throws Exception {
    try (Admin admin = cluster.kafka().createAdminClient()) {
      await(topic + " has no open transaction")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(200))
          .until(
              () ->
                  endOffsets(admin, topic, IsolationLevel.READ_COMMITTED)
                      .equals(endOffsets(admin, topic, IsolationLevel.READ_UNCOMMITTED)));
    }
  }

  /** Every record of {@code topic} read_committed consumers see, up to the last stable offsets. */
  private static List<ConsumerRecord<byte[], byte[]>> readCommitted(String topic) throws Exception {
    Map<TopicPartition, Long> stable;
    try (Admin admin = cluster.kafka().createAdminClient()) {
      stable = endOffsets(admin, topic, IsolationLevel.READ_COMMITTED);
    }
    return ReadCommitted.upTo(cluster.kafka(), topic, stable, READ_TIMEOUT);
  }

  private static void log(String message) {
    System.out.println(Instant.now() + " " + message);
  }
}
