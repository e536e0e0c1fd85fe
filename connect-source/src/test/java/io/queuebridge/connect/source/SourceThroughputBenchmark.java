package io.queuebridge.connect.source;

import io.queuebridge.core.SharedStores;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.message.Message;
import io.queuebridge.store.postgres.PostgresTestDatabase;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.converters.ByteArrayConverter;
import org.apache.kafka.connect.file.FileStreamSourceConnector;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.storage.StringConverter;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Throughput harness, not a test: the source connector reading a {@code file} stream, against
 * Kafka's {@code FileStreamSourceConnector} reading the same records from a file and a raw {@code
 * KafkaProducer} sending them, and a {@link NullSourceConnector} handing the worker the same values
 * ready-made (the framework's ceiling for a source task), on one embedded broker and worker in the
 * same run. Excluded from the build (its name matches no test pattern, and it is tagged); run it
 * with the command in docs/perf/source.md.
 *
 * <p>Every variant writes {@link #RECORDS} values of {@link #VALUE_BYTES} bytes (no key, no
 * headers; {@code -Dbench.value.bytes}, default 200) into its own one-partition topic, with the
 * worker's exactly-once source support off, or on with {@code -Dbench.eos=true}. Rates are measured
 * from the first record in the topic to the last (steady state, task start-up excluded), rounds
 * interleaved, the median reported; a warm-up round of every variant comes first. The raw producer
 * uses the producer settings a Connect worker gives its source tasks (acks=all, one request in
 * flight, linger 0), so the ratio measures the connector, not producer tuning.
 *
 * <p><b>Store.</b> {@code -Dbench.store=postgres} pre-fills the streams in a {@code postgres} store
 * instead of the {@code file} store (the default, unchanged), on the server the postgres tests use
 * ({@code QUEUEBRIDGE_TEST_PG_URL}, {@code _USER}, {@code _PASSWORD}; without the URL, {@code bash
 * .ci/postgres.sh start}): a fresh database for the run ({@code PostgresTestDatabase}), dropped at
 * the end. Every round reads a stream of its own in either store.
 */
@Tag("benchmark")
class SourceThroughputBenchmark {
  static final int RECORDS = Integer.getInteger("bench.records", 500_000);
  static final int ROUNDS = Integer.getInteger("bench.rounds", 3);
  static final int VALUE_BYTES = Integer.getInteger("bench.value.bytes", 200);

  /** Whether the worker runs source tasks exactly once (KIP-618), every variant alike. */
  static final boolean EXACTLY_ONCE = Boolean.getBoolean("bench.eos");

  /** Where the streams are: {@code file} (default) or {@code postgres}. */
  static final String STORE = System.getProperty("bench.store", "file");

  @TempDir Path dir;

  @Test
  void sourceThroughputAgainstFileStreamSourceAndRawProducer() throws Exception {
    if (!STORE.equals("file") && !STORE.equals("postgres")) {
      throw new IllegalArgumentException(
          "bench.store is '" + STORE + "'; expected 'file' or 'postgres'");
    }
    PostgresTestDatabase db = STORE.equals("postgres") ? PostgresTestDatabase.create() : null;
    try {
      run(db);
    } finally {
      if (db != null) {
        db.close();
      }
    }
  }

  /** The harness, on the file store ({@code db} null) or in the database {@code db}. */
  private void run(PostgresTestDatabase db) throws Exception {
    EmbeddedConnectCluster cluster = SourceTestSupport.startCluster("bench", 1, EXACTLY_ONCE);
    Path storeDir = Files.createDirectories(dir.resolve("store"));
    Map<String, String> storeProps = new HashMap<>();
    if (db == null) {
      storeProps.put(QueueSourceConfig.STORE_TYPE_CONFIG, "file");
      storeProps.put(QueueSourceConfig.STORE_PATH_CONFIG, storeDir.toString());
    } else {
      storeProps.put(QueueSourceConfig.STORE_TYPE_CONFIG, "postgres");
      db.config().forEach((k, v) -> storeProps.put(QueueSourceConfig.STORE_PREFIX + k, v));
    }
    try (SharedStores.Lease lease =
        db == null
            ? SourceTestSupport.openStore(storeDir)
            : SharedStores.acquire("postgres", db.config())) {
      Path file = dir.resolve("lines.txt");
      writeLines(file, RECORDS);
      long filling = System.nanoTime();
      for (int round = 0; round <= ROUNDS; round++) {
        createStream(lease, "bench-" + round, RECORDS);
      }
      System.out.printf(
          Locale.ROOT,
          "%s store: %d streams of %d records filled in %.1f s%n",
          STORE,
          ROUNDS + 1,
          RECORDS,
          (System.nanoTime() - filling) / 1e9);
      List<Double> queue = new ArrayList<>();
      List<Double> fileStream = new ArrayList<>();
      List<Double> raw = new ArrayList<>();
      List<Double> none = new ArrayList<>();
      List<Double> vsFile = new ArrayList<>();
      List<Double> vsRaw = new ArrayList<>();
      List<Double> vsNull = new ArrayList<>();
      List<Double> nullVsRaw = new ArrayList<>();
      for (int round = 0; round <= ROUNDS; round++) {
        String label = round == 0 ? "warm-up" : "round " + round;
        // rotate the order so that no variant always runs first (or right after another)
        double q = 0;
        double f = 0;
        double r = 0;
        double n = 0;
        for (int k = 0; k < 4; k++) {
          switch ((round + k) % 4) {
            case 0 -> q = queueSource(cluster, storeProps, "bench-" + round, "q-" + round);
            case 1 -> f = fileSource(cluster, file, "f-" + round);
            case 2 -> n = nullSource(cluster, "n-" + round);
            default -> r = rawProducer(cluster, "r-" + round);
          }
        }
        System.out.printf(
            Locale.ROOT,
            "%s: queue source %.0f rec/s, FileStreamSource %.0f rec/s, null source %.0f rec/s,"
                + " raw producer %.0f rec/s (queue/file %.2fx, queue/raw %.2fx, queue/null %.2fx,"
                + " null/raw %.2fx)%n",
            label,
            q,
            f,
            n,
            r,
            q / f,
            q / r,
            q / n,
            n / r);
        if (round > 0) {
          queue.add(q);
          fileStream.add(f);
          raw.add(r);
          none.add(n);
          vsFile.add(q / f);
          vsRaw.add(q / r);
          vsNull.add(q / n);
          nullVsRaw.add(n / r);
        }
      }
      System.out.printf(
          Locale.ROOT,
          "RESULT store=%s records=%d valueBytes=%d exactlyOnce=%b rounds=%d: median rates: queue"
              + " source %.0f rec/s,"
              + " FileStreamSource %.0f rec/s, null source %.0f rec/s, raw producer %.0f rec/s;"
              + " median of the per-round ratios: queue/FileStreamSource = %.2fx, queue/raw"
              + " producer = %.2fx, queue/null source = %.2fx, null source/raw producer ="
              + " %.2fx%n",
          STORE,
          RECORDS,
          VALUE_BYTES,
          EXACTLY_ONCE,
          ROUNDS,
          median(queue),
          median(fileStream),
          median(none),
          median(raw),
          median(vsFile),
          median(vsRaw),
          median(vsNull),
          median(nullVsRaw));
    } finally {
      cluster.stop();
    }
  }

  private static String line(int i) {
    return NullSourceConnector.line(i, VALUE_BYTES);
  }

  private static void writeLines(Path file, int n) throws Exception {
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (int i = 0; i < n; i++) {
        w.write(line(i));
        w.write('\n');
      }
    }
  }

  private static void createStream(SharedStores.Lease lease, String name, int n) {
    lease.manager().createQueue(QueueConfig.durable(name).type(QueueType.STREAM).build());
    List<Message> batch = new ArrayList<>(1_000);
    for (int i = 0; i < n; i++) {
      batch.add(Message.builder().value(line(i).getBytes(StandardCharsets.UTF_8)).build());
      if (batch.size() == 1_000) {
        lease.storage().queues().appendBatch(name, batch);
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      lease.storage().queues().appendBatch(name, batch);
    }
  }

  private static double queueSource(
      EmbeddedConnectCluster cluster, Map<String, String> store, String stream, String topic)
      throws Exception {
    Map<String, String> props = SourceTestSupport.sourceProps(Path.of("unused"), 1);
    props.remove(QueueSourceConfig.STORE_PATH_CONFIG);
    props.putAll(store);
    props.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, stream);
    props.put(QueueSourceConfig.TOPIC_CONFIG, topic);
    props.put(QueueSourceConfig.POLL_MAX_RECORDS_CONFIG, "2000");
    props.put(ConnectorConfig.KEY_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    props.put(ConnectorConfig.VALUE_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    return timeConnector(cluster, topic, props);
  }

  private static double fileSource(EmbeddedConnectCluster cluster, Path file, String topic)
      throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, FileStreamSourceConnector.class.getName());
    props.put(ConnectorConfig.TASKS_MAX_CONFIG, "1");
    props.put("file", file.toString());
    props.put("topic", topic);
    props.put("batch.size", "2000");
    props.put(ConnectorConfig.KEY_CONVERTER_CLASS_CONFIG, StringConverter.class.getName());
    props.put(ConnectorConfig.VALUE_CONVERTER_CLASS_CONFIG, StringConverter.class.getName());
    return timeConnector(cluster, topic, props);
  }

  /**
   * {@link NullSourceConnector}: the same values, ready-made, through the worker with the queue
   * source's converters and batch size; the framework's ceiling for a source task.
   */
  private static double nullSource(EmbeddedConnectCluster cluster, String topic) throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, NullSourceConnector.class.getName());
    props.put(ConnectorConfig.TASKS_MAX_CONFIG, "1");
    props.put(NullSourceConnector.TOPIC_CONFIG, topic);
    props.put(NullSourceConnector.RECORDS_CONFIG, Integer.toString(RECORDS));
    props.put(NullSourceConnector.VALUE_BYTES_CONFIG, Integer.toString(VALUE_BYTES));
    props.put(NullSourceConnector.BATCH_CONFIG, "2000");
    props.put(ConnectorConfig.KEY_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    props.put(ConnectorConfig.VALUE_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    return timeConnector(cluster, topic, props);
  }

  private static double rawProducer(EmbeddedConnectCluster cluster, String topic) throws Exception {
    cluster.kafka().createTopic(topic, 1);
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ProducerConfig.ACKS_CONFIG, "all");
    cfg.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
    cfg.put(ProducerConfig.LINGER_MS_CONFIG, 0);
    List<byte[]> values = new ArrayList<>(RECORDS);
    for (int i = 0; i < RECORDS; i++) {
      values.add(line(i).getBytes(StandardCharsets.UTF_8));
    }
    try (KafkaProducer<byte[], byte[]> producer = cluster.kafka().createProducer(cfg)) {
      long first = 0;
      for (int i = 0; i < RECORDS; i++) {
        producer.send(new ProducerRecord<>(topic, null, values.get(i)));
        if (i == 0) {
          producer.flush();
          first = System.nanoTime();
        }
      }
      producer.flush();
      return (RECORDS - 1) / ((System.nanoTime() - first) / 1e9);
    }
  }

  /**
   * Runs the connector {@code props} into a new one-partition {@code topic} named like it and
   * deletes it once the topic holds every record; returns {@link #awaitRate}.
   */
  private static double timeConnector(
      EmbeddedConnectCluster cluster, String topic, Map<String, String> props) {
    cluster.kafka().createTopic(topic, 1);
    cluster.configureConnector(topic, props);
    double rate = awaitRate(cluster, topic);
    cluster.deleteConnector(topic);
    return rate;
  }

  /** Records per second from the first record in {@code topic} to the last. */
  private static double awaitRate(EmbeddedConnectCluster cluster, String topic) {
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaConsumer<byte[], byte[]> consumer = SourceTestSupport.consumer(cluster, false)) {
      long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
      long first = 0;
      long firstCount = 0;
      while (System.nanoTime() < deadline) {
        long n = consumer.endOffsets(List.of(tp), Duration.ofSeconds(10)).get(tp);
        long now = System.nanoTime();
        if (first == 0 && n > 0) {
          first = now;
          firstCount = n;
        }
        if (n >= RECORDS) {
          return (n - firstCount) / ((now - first) / 1e9);
        }
        LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
      }
    }
    throw new IllegalStateException(topic + " did not receive " + RECORDS + " records in time");
  }

  private static double median(List<Double> xs) {
    List<Double> sorted = new ArrayList<>(xs);
    sorted.sort(null);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
