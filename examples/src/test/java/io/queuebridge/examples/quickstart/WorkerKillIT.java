package io.queuebridge.examples.quickstart;

import static io.queuebridge.examples.quickstart.ConnectFlows.endOffsetSum;
import static io.queuebridge.examples.quickstart.ConnectFlows.example;
import static io.queuebridge.examples.quickstart.ConnectFlows.post;
import static io.queuebridge.examples.quickstart.ConnectFlows.streamSize;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.message.TimestampType;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.store.postgres.PostgresTestDatabase;
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
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Connect worker {@code SIGKILL}ed mid-flow, again and again, and started again on the same
 * worker properties: the deployment of the README (the plugin archive on {@code plugin.path},
 * {@code plugin.discovery=service_load}, connectors posted as JSON over REST), with the worker in a
 * child JVM ({@link ChildConnectWorker}) and one broker in this JVM for the whole class.
 *
 * <ul>
 *   <li>topic → sink ({@code tasks.max=2}, 4 partitions) → {@code file}-store stream while records
 *       are produced the whole time: every Kafka record is in the stream exactly once, with its
 *       key, value, headers, timestamp and its source topic, partition and offset.
 *   <li>{@code file}-store stream → source (restore mode, {@code exactly.once.source.support} on
 *       the worker, {@code exactly.once.support=required}) → topic: a {@code read_committed}
 *       consumer reads every message exactly once, byte-identical, in the partition the message
 *       names, in stream order. A task killed inside a transaction leaves it open (its source
 *       offsets in Connect's offsets topic included) until the broker aborts it, and a worker reads
 *       that topic {@code read_committed} to its end before it starts: the restart waits up to the
 *       producer's {@code transaction.timeout.ms} (60 s by default, 10 s here).
 *   <li>two workers of one cluster on a shared {@code postgres} store, the one that is not the
 *       leader killed while it runs an exactly-once source task: its task stays where it was, as
 *       far as the status API shows, for the session timeout and then {@code
 *       scheduled.rebalance.max.delay.ms}, and then runs on the leader; every message of both
 *       streams is committed exactly once, byte-identical.
 * </ul>
 *
 * <p>A killed worker stays a member of Connect's group until its session times out ({@code
 * session.timeout.ms}, 6 s here, 10 s by default); the leader then holds its connectors and tasks
 * for {@code scheduled.rebalance.max.delay.ms} (5 s here, 5 min by default) before it hands them to
 * the workers left. Nobody writes their status meanwhile: {@code GET /connectors/<name>/status}
 * keeps showing them {@code RUNNING} on the dead worker. A single worker started again is a new
 * leader, which assigns everything at once.
 *
 * <p>Run time: about 2 minutes for the class (each kill and restart costs about 6 s).
 */
class WorkerKillIT {
  private static final Duration TIMEOUT = Duration.ofMinutes(2);
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(60);
  private static final long BASE_TIMESTAMP = 1_767_225_600_000L; // 2026-01-01T00:00:00Z
  private static final int KILLS = 3;

  @TempDir static Path temp;
  private static EmbeddedKafkaCluster kafka;

  @BeforeAll
  static void startBroker() {
    // the records carry timestamps of 2026-01-01: the default 7-day retention would delete them
    kafka = ConnectFlows.startBroker(Map.of("log.retention.ms", "-1"));
  }

  @AfterAll
  static void stopBroker() {
    if (kafka != null) {
      kafka.stop();
    }
  }

  // ------------------------------------------------------------------ sink

  @Test
  void theWorkerRunsOnKafkaConnectAloneWithThePluginOnlyOnItsPluginPath() throws Exception {
    List<String> classPath = ChildConnectWorker.workerClassPath();
    List<String> jars = classPath.stream().map(e -> Path.of(e).getFileName().toString()).toList();
    assertThat(jars).anyMatch(j -> j.startsWith("connect-runtime-"));
    assertThat(jars)
        .as("test jars on the worker's class path")
        .noneMatch(j -> j.endsWith("-test.jar"));
    Path repo = PluginUnderTest.repo().toAbsolutePath().normalize();
    assertThat(classPath)
        .as("the worker's class path holds nothing of this project's build")
        .noneMatch(e -> Path.of(e).toAbsolutePath().normalize().startsWith(repo));
    try (var lib = Files.list(PluginUnderTest.dir().resolve("lib"))) {
      List<String> plugin =
          lib.map(j -> j.getFileName().toString()).filter(j -> !j.startsWith("jackson-")).toList();
      assertThat(plugin).anyMatch(j -> j.startsWith("connect-sink-"));
      assertThat(jars)
          .as("jars of the plugin archive on the worker's class path")
          .doesNotContainAnyElementsOf(plugin);
    }
  }

  @Test
  void sinkWorkerKilledMidFlowThreeTimesStoresEveryRecordExactlyOnce() throws Exception {
    String topic = "wk-orders";
    String stream = "wk-orders";
    String connector = "wk-orders-to-stream";
    int partitions = 4;
    Path store = temp.resolve("sink-store").toAbsolutePath();
    kafka.createTopic(topic, partitions, 1, Map.of("retention.ms", "-1"));

    Map<String, String> config =
        example(QuickstartRun.SINK_EXAMPLE).config(Map.of("STORE_DIR", store.toString()));
    config.put("tasks.max", "2");
    config.put("topics", topic);
    config.put("queue.name", stream);
    config.put("queue.topics", stream + "/#");
    // small polls: many batches, each its own append + barrier, so a kill lands inside the flow
    config.put("consumer.override.max.poll.records", "50");

    try (ChildConnectWorker worker =
            ChildConnectWorker.create("wk-sink", kafka.bootstrapServers(), temp, Map.of());
        Producing producing = new Producing(topic, partitions)) {
      // records arrive the whole time, also while the worker starts and while it is away
      producing.start();
      worker.start();
      assertThat(worker.rest().connectorPlugins())
          .as("the connectors the worker loaded from plugin.path")
          .contains(
              new ConnectRestClient.Plugin(
                  PluginUnderTest.SINK_CLASS, "sink", PluginUnderTest.version()),
              new ConnectRestClient.Plugin(
                  PluginUnderTest.SOURCE_CLASS, "source", PluginUnderTest.version()));
      post(worker, connector, config);
      awaitRunning(worker, connector, 2);

      List<SinkKill> kills = new ArrayList<>();
      for (int kill = 1; kill <= KILLS; kill++) {
        long before = streamSize(store, stream);
        // each kill while the tasks catch up with what was produced while the worker was away
        // (starting or killed), a little further into it each time
        long growth = 1 + (kill - 1) * 1_000L;
        awaitFlowing(
            worker,
            connector,
            "stream " + stream + " grew by " + growth + " from " + before,
            () -> streamSize(store, stream) >= before + growth);
        worker.kill();
        SinkKill k = new SinkKill(kill, streamSize(store, stream), producing.acknowledged());
        kills.add(k);
        log(k.toString());
        assertThat(k.inStream())
            .as("%s: the stream grew since the last start", k)
            .isGreaterThan(before);
        assertThat(k.produced())
            .as("%s: records produced but not yet in the stream", k)
            .isGreaterThan(k.inStream());
        worker.start();
      }
      // a while longer, then the input stops: everything produced must end up in the stream
      long last = streamSize(store, stream);
      awaitFlowing(
          worker,
          connector,
          "stream " + stream + " grew after the last restart",
          () -> streamSize(store, stream) >= last + 2_000);
      List<RecordSnapshot> produced = producing.finish();
      log(produced.size() + " records produced; " + kills);
      await("stream " + stream + " holds all " + produced.size() + " records")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(200))
          .until(() -> streamSize(store, stream) >= produced.size());
      // stopped the orderly way, so the store is free to open here
      worker.stop(Duration.ofSeconds(60));

      List<RecordSnapshot> stored = StreamContents.read(store, stream, READ_TIMEOUT);
      assertThat(QuickstartRun.compareStream(produced, stored))
          .as("stream messages vs the Kafka records they were captured from")
          .isEmpty();
      assertThat(stored).hasSize(produced.size());
    }
  }

  /** What the stream held, and how many records the broker had acknowledged, at a kill. */
  private record SinkKill(int n, long inStream, long produced) {
    @Override
    public String toString() {
      return "kill " + n + ": " + inStream + " in the stream, " + produced + " produced";
    }
  }

  /** Produces records in the background, 50 every 25 ms, into every partition in turn. */
  private static final class Producing implements AutoCloseable {
    private static final int PER_TICK = 50;
    private final String topic;
    private final int partitions;
    private final KafkaProducer<byte[], byte[]> producer;
    private final ScheduledExecutorService ticks = Executors.newSingleThreadScheduledExecutor();
    private final List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
    private final List<Future<RecordMetadata>> sent = new ArrayList<>();
    private final AtomicInteger acknowledged = new AtomicInteger();

    Producing(String topic, int partitions) {
      this.topic = topic;
      this.partitions = partitions;
      this.producer =
          kafka.createProducer(
              Map.of(ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.LINGER_MS_CONFIG, 5));
    }

    void start() {
      ticks.scheduleAtFixedRate(this::tick, 0, 25, TimeUnit.MILLISECONDS);
    }

    private void tick() {
      synchronized (records) {
        for (int n = 0; n < PER_TICK; n++) {
          int i = records.size();
          ProducerRecord<byte[], byte[]> r = record(topic, i % partitions, i);
          records.add(r);
          sent.add(
              producer.send(
                  r,
                  (meta, e) -> {
                    if (e == null) {
                      acknowledged.incrementAndGet();
                    }
                  }));
        }
      }
    }

    /** Records the broker has acknowledged so far. */
    long acknowledged() {
      return acknowledged.get();
    }

    /** Stops producing; every record sent, with the coordinates the broker gave it. */
    List<RecordSnapshot> finish() throws Exception {
      ticks.shutdown();
      assertThat(ticks.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      producer.flush();
      List<RecordSnapshot> out = new ArrayList<>(records.size());
      synchronized (records) {
        for (int i = 0; i < records.size(); i++) {
          out.add(RecordSnapshot.produced(records.get(i), sent.get(i).get()));
        }
      }
      return out;
    }

    @Override
    public void close() {
      ticks.shutdownNow();
      producer.close();
    }
  }

  private static ProducerRecord<byte[], byte[]> record(String topic, int partition, int i) {
    RecordHeaders headers = new RecordHeaders();
    headers.add("seq", utf8(Integer.toString(i)));
    headers.add("bin", new byte[] {0, (byte) i, (byte) (i >> 8), -1});
    headers.add("seq", null); // a repeated key, a null value
    byte[] value =
        i % 500 == 499
            ? null // a tombstone now and then
            : utf8("{\"id\":" + i + ",\"pad\":\"" + "x".repeat(i % 61) + "\"}");
    return new ProducerRecord<>(
        topic, partition, BASE_TIMESTAMP + i, utf8("id-" + i), value, headers);
  }

  // ------------------------------------------------------------------ source

  @Test
  void exactlyOnceSourceWorkerKilledMidFlowThreeTimesWritesEveryMessageOnce() throws Exception {
    String stream = "wk-events";
    String topic = "wk-events-restored";
    String connector = "wk-events-restore";
    int partitions = 3;
    int messages = 40_000;
    Path store = temp.resolve("source-store").toAbsolutePath();
    fillStream(store, stream, messages, partitions);
    List<RecordSnapshot> expected = StreamContents.read(store, stream, READ_TIMEOUT);
    assertThat(expected).hasSize(messages);

    Map<String, String> config =
        example(QuickstartRun.RESTORE_EXAMPLE).config(Map.of("STORE_DIR", store.toString()));
    config.put("queue.names", stream);
    config.put("topic", topic);
    config.put("topic.creation.default.partitions", Integer.toString(partitions));
    config.put("exactly.once.support", "required");
    config.put("transaction.boundary", "poll");
    // one transaction per 100 records: many commits, so a kill lands inside the flow
    config.put("poll.max.records", "100");
    // A task killed inside a transaction leaves it open, its source offsets in the offsets topic
    // included, until the broker aborts it after the producer's transaction.timeout.ms (60 s by
    // default): a worker starting meanwhile waits for it, since it reads the offsets topic
    // read_committed to its end before it starts anything. 10 s keeps the restarts short.
    config.put("producer.override.transaction.timeout.ms", "10000");

    try (ChildConnectWorker worker =
        ChildConnectWorker.create("wk-source", kafka.bootstrapServers(), temp, Map.of())) {
      worker.start();
      post(worker, connector, config);
      awaitRunning(worker, connector, 1);

      List<String> kills = new ArrayList<>();
      try (Admin admin = kafka.createAdminClient()) {
        for (int kill = 1; kill <= KILLS; kill++) {
          long before = committedRecords(topic);
          await(topic + " grew from " + before + " committed records")
              .atMost(TIMEOUT)
              .pollInterval(Duration.ofMillis(20))
              .ignoreExceptions() // until the source has created the topic
              .until(
                  () -> endOffsetSum(admin, topic, IsolationLevel.READ_COMMITTED) > before + 500);
          worker.kill();
          long committed = committedRecords(topic);
          boolean open =
              endOffsetSum(admin, topic, IsolationLevel.READ_UNCOMMITTED)
                  > endOffsetSum(admin, topic, IsolationLevel.READ_COMMITTED);
          kills.add(
              "kill "
                  + kill
                  + ": "
                  + committed
                  + " of "
                  + messages
                  + " committed"
                  + (open ? ", a transaction open" : ""));
          log(kills.get(kills.size() - 1));
          assertThat(committed)
              .as("kill %d: in the middle of the flow", kill)
              .isGreaterThan(before)
              .isLessThan(messages);
          worker.start();
          kills.set(
              kills.size() - 1,
              kills.get(kills.size() - 1)
                  + ", worker ready again after "
                  + worker.lastStartMillis()
                  + " ms");
        }
      }
      await(topic + " holds all " + messages + " committed")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(500))
          .until(() -> committedRecords(topic) >= messages);
      worker.rest().deleteConnector(connector);
      awaitNoOpenTransaction(topic);
      List<RecordSnapshot> restored = readAllCommitted(topic);
      log(restored.size() + " records restored; " + String.join("; ", kills));

      Map<String, Integer> seen = new HashMap<>();
      restored.forEach(r -> seen.merge(r.showKey(), 1, Integer::sum));
      assertThat(seen.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey))
          .as("messages written to %s more than once", topic)
          .isEmpty();
      // byte-identical, in the partition each message names, in stream order
      assertThat(QuickstartRun.compareRestored(expected, restored)).isEmpty();
      assertThat(restored).hasSize(messages);
      worker.stop(Duration.ofSeconds(60));
    }
  }

  /**
   * {@code n} messages in a new stream of a {@code file} store, as the sink would have captured
   * them from a topic of {@code partitions} partitions: key, value (now and then null), headers
   * (repeated keys, null and binary values), a create-time timestamp, and the Kafka coordinates.
   */
  private static void fillStream(Path store, String stream, int n, int partitions)
      throws InterruptedException {
    try (Storage storage = QueueStores.file(store)) {
      fillStream(storage, stream, n, partitions);
    }
  }

  private static void fillStream(Storage storage, String stream, int n, int partitions)
      throws InterruptedException {
    QueueManager manager = new QueueManager(storage, QueueManagerConfig.defaults());
    manager.start();
    try {
      manager.createQueue(
          QueueConfig.durable(stream)
              .type(QueueType.STREAM)
              .topics(stream + "/#")
              .messageTtl(Duration.ZERO)
              .build());
      List<PublishRequest> batch = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int partition = i % partitions;
        batch.add(
            PublishRequest.builder(stream + "/captured")
                .key(utf8("ev-" + i))
                .value(
                    i % 700 == 699
                        ? null
                        : utf8("{\"event\":" + i + ",\"pad\":\"" + "y".repeat(i % 53) + "\"}"))
                .headers(
                    List.of(
                        Header.of("seq", utf8(Integer.toString(i))),
                        Header.of("bin", new byte[] {(byte) i, 0, -1}),
                        Header.of("seq", (byte[]) null)))
                .timestamp(BASE_TIMESTAMP + i, TimestampType.CREATE_TIME)
                .property(KafkaCoordinates.TOPIC, "wk-events-original")
                .property(KafkaCoordinates.PARTITION, Integer.toString(partition))
                .property(KafkaCoordinates.OFFSET, Integer.toString(i / partitions))
                .build());
        if (batch.size() == 1_000 || i == n - 1) {
          manager.publishBatchDurably(stream, batch, Map.of());
          batch.clear();
        }
      }
    } finally {
      manager.stop();
    }
  }

  // ------------------------------------------------------------------ two workers

  /**
   * Two workers of one Connect cluster on a shared {@code postgres} store; the one that is not the
   * group's leader is killed while it runs an exactly-once source task. The leader holds the task
   * for {@code scheduled.rebalance.max.delay.ms} after the killed worker's session timed out, then
   * runs it itself: every message of both streams is committed exactly once, byte-identical.
   */
  @Test
  void sourceTaskOfAKilledWorkerIsHeldForTheRebalanceDelayThenRunsElsewhereExactlyOnce()
      throws Exception {
    List<String> streams = List.of("wk-pg-a", "wk-pg-b");
    int messages = 30_000;
    int partitions = 3;
    String connector = "wk-pg-restore";
    try (PostgresTestDatabase database = PostgresTestDatabase.create()) {
      Map<String, String> store = database.config();
      Path secrets = temp.resolve("wk-pg-secrets.properties");
      Files.writeString(secrets, "password=" + store.get("password") + "\n");
      Map<String, List<RecordSnapshot>> expected = new LinkedHashMap<>();
      try (Storage storage = QueueStores.open("postgres", store)) {
        for (String stream : streams) {
          fillStream(storage, stream, messages, partitions);
          expected.put(stream, readStream(storage, stream));
          assertThat(expected.get(stream)).hasSize(messages);
        }
      }
      Map<String, String> config =
          example("source-postgres.json")
              .config(
                  Map.of(
                      "PG_URL", store.get("url"),
                      "PG_USER", store.get("user"),
                      "PG_SECRETS_FILE", secrets.toString()));
      config.remove("topic");
      config.put("topic.template", "${queue}-restored");
      config.put("queue.names", String.join(",", streams));
      config.put("tasks.max", "2");
      config.put("topic.creation.default.partitions", Integer.toString(partitions));
      config.put("poll.max.records", "20");
      // transaction.timeout.ms stays at its 60 s default here, unlike the one-worker test: the
      // killed worker's open transaction is aborted by the moved task's producer when it starts
      // (it fences the transactional id) about 11 s after the kill. A timeout near that moment
      // lets the broker's own abort of that transaction race the new producer's first
      // transaction; under transactions V2 in Kafka 4.3 a commit that meets a broker-side abort
      // fails with the fatal InvalidTxnStateException. With 10 s here, a CI run failed that way.
      Map<String, String> workerProps =
          Map.of(
              "config.providers",
              "file",
              "config.providers.file.class",
              "org.apache.kafka.common.config.provider.FileConfigProvider");

      try (ChildConnectWorker leader =
              ChildConnectWorker.create(
                  "wk-pair-1", "wk-pair", kafka.bootstrapServers(), temp, workerProps);
          ChildConnectWorker other =
              ChildConnectWorker.create(
                  "wk-pair-2", "wk-pair", kafka.bootstrapServers(), temp, workerProps);
          Admin admin = kafka.createAdminClient()) {
        // the first worker of the group is its leader, and stays it while it lives: it has
        // joined once it runs the connector, and the second worker joins after that
        leader.start();
        post(leader, connector, config);
        awaitRunning(leader, connector, 2);
        other.start();
        ConnectRestClient rest = leader.rest();
        String otherId = "127.0.0.1:" + other.port();
        String[] topics = streams.stream().map(q -> q + "-restored").toArray(String[]::new);
        awaitFlowing(
            leader,
            connector,
            "a task of " + connector + " runs on the second worker",
            () -> tasksOn(rest, connector, otherId) > 0 && runningTasks(rest, connector) == 2);
        long base = committedOffsets(admin, topics);
        awaitFlowing(
            leader,
            connector,
            "records flow from " + base + " committed offsets",
            () -> committedOffsets(admin, topics) > base + 500);
        long committedAtKill = 0;
        for (String stream : streams) {
          committedAtKill += committedRecords(stream + "-restored");
        }
        other.kill();
        long killed = System.nanoTime();
        log("killed the second worker at " + committedAtKill + " committed records");
        assertThat(committedAtKill)
            .as("records still to come at the kill")
            .isLessThan(2L * messages);
        awaitFlowing(
            leader,
            connector,
            "both tasks run on the leader",
            () ->
                tasksOn(rest, connector, "127.0.0.1:" + leader.port()) == 2
                    && runningTasks(rest, connector) == 2);
        long movedAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
        log("the killed worker's task runs on the leader " + movedAfter + " ms after the kill");
        assertThat(movedAfter)
            .as("ms from the kill until the leader runs the killed worker's task")
            .isGreaterThanOrEqualTo(5_000);

        for (String stream : streams) {
          String topic = stream + "-restored";
          await(topic + " holds all " + messages + " committed")
              .atMost(TIMEOUT)
              .pollInterval(Duration.ofMillis(500))
              .until(() -> committedRecords(topic) >= messages);
        }
        rest.deleteConnector(connector);
        for (String stream : streams) {
          String topic = stream + "-restored";
          awaitNoOpenTransaction(topic);
          List<RecordSnapshot> restored = readAllCommitted(topic);
          assertThat(QuickstartRun.compareRestored(expected.get(stream), restored))
              .as("%s vs stream %s", topic, stream)
              .isEmpty();
          assertThat(restored).hasSize(messages);
        }
        leader.stop(Duration.ofSeconds(60));
      }
    }
  }

  /** The sum of the last stable offsets of {@code topics} (0 for a topic not there yet). */
  private static long committedOffsets(Admin admin, String... topics) throws Exception {
    long sum = 0;
    for (String topic : topics) {
      try {
        sum += endOffsetSum(admin, topic, IsolationLevel.READ_COMMITTED);
      } catch (ExecutionException notYet) {
        // the source creates it with its first record
      }
    }
    return sum;
  }

  /** How many tasks of {@code name} the status API places on {@code workerId}. */
  private static long tasksOn(ConnectRestClient rest, String name, String workerId) {
    JsonNode tasks = rest.status(name).path("tasks");
    long n = 0;
    for (JsonNode t : tasks) {
      if (workerId.equals(t.path("worker_id").asText())
          && "RUNNING".equals(t.path("state").asText())) {
        n++;
      }
    }
    return n;
  }

  private static long runningTasks(ConnectRestClient rest, String name) {
    long n = 0;
    for (JsonNode t : rest.status(name).path("tasks")) {
      if ("RUNNING".equals(t.path("state").asText())) {
        n++;
      }
    }
    return n;
  }

  /** Every message of {@code stream}, in offset order. */
  private static List<RecordSnapshot> readStream(Storage storage, String stream) {
    List<RecordSnapshot> out = new ArrayList<>();
    long next = storage.queues().head(stream);
    long tail = storage.queues().tail(stream);
    while (next < tail) {
      List<Message> batch = storage.queues().readBatch(stream, next, 1_000);
      if (batch.isEmpty()) {
        break;
      }
      batch.forEach(m -> out.add(RecordSnapshot.stored(m)));
      next = batch.get(batch.size() - 1).offset() + 1;
    }
    return out;
  }

  // ------------------------------------------------------------------ Connect

  private static void awaitRunning(ChildConnectWorker worker, String name, int tasks) {
    ConnectFlows.awaitRunning(worker, name, tasks, TIMEOUT);
  }

  /**
   * Waits until {@code condition} holds while no task of {@code name} has failed, logging each
   * state the status API shows meanwhile (what a user polling it sees, e.g. after a worker crash),
   * with the worker each connector and task is on.
   */
  private static void awaitFlowing(
      ChildConnectWorker worker, String name, String what, Callable<Boolean> condition) {
    Instant started = Instant.now();
    List<String> seen = new ArrayList<>();
    ConnectRestClient rest = worker.rest();
    try {
      await(what)
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(50))
          .ignoreExceptions()
          .untilAsserted(
              () -> {
                String state = statusLine(rest, name);
                if (seen.isEmpty() || !seen.get(seen.size() - 1).endsWith(": " + state)) {
                  seen.add(Duration.between(started, Instant.now()).toMillis() + " ms: " + state);
                }
                assertThat(rest.failureTrace(name)).as("failure of %s", name).isEmpty();
                assertThat(condition.call()).as(what).isTrue();
              });
    } finally {
      log(what + " -- status of " + name + " meanwhile: " + String.join(" | ", seen));
    }
  }

  /** {@code connector STATE@worker, tasks [STATE@worker, ...]}, or why there is none. */
  private static String statusLine(ConnectRestClient rest, String name) {
    JsonNode status;
    try {
      status = rest.status(name);
    } catch (RuntimeException e) {
      return "no status (" + e.getMessage().replaceAll(".* answered ", "") + ")";
    }
    List<String> tasks = new ArrayList<>();
    for (JsonNode t : status.path("tasks")) {
      tasks.add(t.path("state").asText() + "@" + t.path("worker_id").asText());
    }
    JsonNode c = status.path("connector");
    return "connector "
        + c.path("state").asText()
        + "@"
        + c.path("worker_id").asText()
        + ", tasks "
        + tasks;
  }

  // ------------------------------------------------------------------ Kafka reads

  private static long committedRecords(String topic) throws Exception {
    return ConnectFlows.committedRecords(kafka, topic, READ_TIMEOUT);
  }

  private static List<RecordSnapshot> readAllCommitted(String topic) throws Exception {
    return ConnectFlows.readAllCommitted(kafka, topic, READ_TIMEOUT);
  }

  private static void awaitNoOpenTransaction(String topic) {
    ConnectFlows.awaitNoOpenTransaction(kafka, topic, TIMEOUT);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void log(String message) {
    System.out.println(Instant.now() + " WorkerKillIT " + message);
  }
}
