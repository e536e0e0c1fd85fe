package io.queuebridge.connect.sink;

import io.queuebridge.store.postgres.PostgresTestDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.connect.file.FileStreamSinkConnector;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.SinkConnectorConfig;
import org.apache.kafka.connect.storage.StringConverter;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;

/**
 * Sink throughput harness (a benchmark, not a test): on one embedded broker + worker, the same
 * records are read by a raw {@link KafkaConsumer}, written to a file by Kafka's {@link
 * FileStreamSinkConnector}, dropped by a {@link NullSinkConnector} (the framework's ceiling: what
 * the worker alone allows a sink with the same converters), appended to a file fsynced before every
 * commit by a {@link DurableFileSinkConnector} (the ceiling of a durable sink: coordinates, key,
 * value and headers length-prefixed, nothing else), and written into a {@code file}-store stream by
 * the Queue Bridge sink (fsync per batch) with 1 and with 4 tasks, and with 1 task and synchronous
 * puts ({@code queue.write.pipelined=false}). Prints a Markdown table per round and the medians.
 *
 * <pre>
 * mvn -B -ntp -Psink-bench -pl connect-sink -am process-test-classes \
 *   -Dsink.bench.args="100000 1024 target/sinkperf 5"
 * </pre>
 *
 * Arguments: record count (default 100,000), value size in bytes (1,024), a directory on a real
 * disk for the stores and the FileStream output (default: a temp directory), timed rounds (5), and
 * optionally {@code max.poll.records} for every reader alike (the connectors get it as {@code
 * consumer.override.max.poll.records}; default: the consumer's 500).
 *
 * <p><b>Store.</b> {@code -Dsink.bench.store=postgres} runs the three Queue Bridge sinks into a
 * {@code postgres}-store stream instead of a {@code file}-store one (the default, {@code file}, is
 * the harness as it always was); everything else is the same, and one more reader is timed after
 * them: the 1-task sink into a {@code file}-store stream, for the store-against-store ratio. The
 * server is the one the postgres tests use ({@code QUEUEBRIDGE_TEST_PG_URL}, {@code _USER}, {@code
 * _PASSWORD}; without the URL, {@code bash .ci/postgres.sh start}): the harness creates a fresh
 * database for the run ({@code PostgresTestDatabase}), gives every timed sink a schema of its own
 * (dropped once that sink is timed, as the file outputs are deleted) and drops the database at the
 * end. The server's data directory, not the directory argument, holds what the postgres sinks
 * write.
 *
 * <p><b>Method.</b> A warm-up round (not counted) comes first, then the timed rounds; within a
 * round the order of the raw consumer, the FileStream sink, the null sink, the durable file sink
 * and the 1-task Queue Bridge sink rotates, so none always runs first or right after another. Each
 * reader has its own consumer group and reads the whole topic from the start. A connector is timed
 * in two ways from its consumer group's committed offsets (polled every 20 ms; {@code
 * offset.flush.interval.ms=250}): <em>end to end</em> from its creation until every offset is
 * committed (start-up included), and <em>steady</em> from its first commit until its last (records
 * committed in between / time), which leaves out task start-up and the group join. The raw consumer
 * is timed from its creation until it has polled every record and committed. Ratios are taken
 * within a round, then the median over the rounds is reported.
 *
 * <p><b>Outputs are deleted</b> once their reader is timed (the FileStream file, the durable file
 * sink's file, each store). On this VM a writer that fills page-cache pages the guest has never
 * touched pays several times the kernel time of one that gets recycled pages (most likely because
 * the host backs guest memory lazily): a 512 KiB write + fsync loop took about 2.4 µs against 0.3
 * µs of system time per KiB. Without the deletion, the writer that ran right after the disk floor
 * (which deletes its file) got recycled pages and the others fresh ones, so while the guest still
 * had untouched memory the rotation, not the connector, decided the ratio (an fsync'ing writer
 * suffered most).
 *
 * <p><b>Loading.</b> The topic is loaded once by a plain (non-idempotent) producer with {@code
 * acks=all} and one request in flight, after every partition has a leader. The idempotent default
 * once stalled on the embedded broker with {@code OUT_OF_ORDER_SEQUENCE_NUMBER} after a retried
 * first batch (the leader was not yet elected); a plain producer retries without sequence numbers.
 * A retry may duplicate a record, so the harness reads the topic's end offsets and uses their sum
 * as the record count for every reader.
 */
public final class SinkThroughputBenchmark {
  private static final String TOPIC = "bench";
  private static final int PARTITIONS = 4;
  private static final Duration COMMIT_POLL = Duration.ofMillis(20);

  private SinkThroughputBenchmark() {}

  /** One reader's figures in one round: records per second end to end and in steady state. */
  private record Rate(double endToEnd, double steady) {}

  /**
   * One round. {@code bridge1}, {@code bridge4} and {@code bridge1Synchronous} write into the
   * selected store; {@code fileBridge1} is the 1-task sink into a file store when the selected
   * store is postgres, else null.
   */
  private record Round(
      Rate consumer,
      Rate fileStream,
      Rate nullSink,
      Rate durableFile,
      Rate bridge1,
      Rate bridge4,
      Rate bridge1Synchronous,
      Rate fileBridge1,
      Rate diskFloor) {}

  /**
   * Where the Queue Bridge sinks write: a store directory under the run's directory ({@code file}),
   * or a schema of its own in the run's database ({@code postgres}).
   */
  private static final class Target implements AutoCloseable {
    private final PostgresTestDatabase db; // null: file store

    private Target(PostgresTestDatabase db) {
      this.db = db;
    }

    static Target of(String store) {
      return switch (store) {
        case "file" -> new Target(null);
        case "postgres" -> new Target(PostgresTestDatabase.create());
        default ->
            throw new IllegalArgumentException(
                "sink.bench.store is '" + store + "'; expected 'file' or 'postgres'");
      };
    }

    boolean postgres() {
      return db != null;
    }

    String type() {
      return db == null ? "file" : "postgres";
    }

    /** The sink's store keys for the reader {@code name}: a file store, or a new schema. */
    void configure(Map<String, String> props, Path dir, String name) {
      if (db == null) {
        props.put(QueueSinkConfig.STORE_PATH_CONFIG, dir.resolve("store-" + name).toString());
        return;
      }
      props.remove(QueueSinkConfig.STORE_PATH_CONFIG);
      props.put(QueueSinkConfig.STORE_TYPE_CONFIG, "postgres");
      db.config(schema(name)).forEach((k, v) -> props.put(QueueSinkConfig.STORE_PREFIX + k, v));
    }

    /** Deletes what the reader {@code name} wrote; best effort, a failure is only printed. */
    void delete(Path dir, String name) {
      if (db == null) {
        deleteOutput(dir.resolve("store-" + name));
        return;
      }
      try (Connection c = db.connect();
          Statement st = c.createStatement()) {
        st.execute("DROP SCHEMA IF EXISTS " + schema(name) + " CASCADE");
      } catch (SQLException e) {
        System.out.println("could not drop schema " + schema(name) + ": " + e);
      }
    }

    private static String schema(String name) {
      return "b_" + name.replace('-', '_');
    }

    String describe(Path dir) {
      return db == null ? dir.toString() : "database " + db.name() + " (" + db.url() + ")";
    }

    @Override
    public void close() {
      if (db != null) {
        db.close();
      }
    }
  }

  public static void main(String[] args) throws Exception {
    int requested = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
    int size = args.length > 1 ? Integer.parseInt(args[1]) : 1024;
    Path dir =
        args.length > 2
            ? Files.createDirectories(Path.of(args[2]).resolve("sink-bench-" + System.nanoTime()))
            : Files.createTempDirectory("sink-bench");
    int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 5;
    // Optional: max.poll.records for every reader alike (the connectors through
    // consumer.override.max.poll.records); absent = the consumer default (500).
    String maxPoll = args.length > 4 ? Integer.toString(Integer.parseInt(args[4])) : null;
    String store = System.getProperty("sink.bench.store", "file");
    Map<String, String> workerProps = new HashMap<>();
    workerProps.put("offset.flush.interval.ms", "250");
    workerProps.put("connector.client.config.override.policy", "All");
    EmbeddedConnectCluster cluster =
        new EmbeddedConnectCluster.Builder()
            .name("sink-bench")
            .numWorkers(1)
            .numBrokers(1)
            .workerProps(workerProps)
            .build();
    cluster.start();
    try (Target target = Target.of(store)) {
      cluster.kafka().createTopic(TOPIC, PARTITIONS);
      awaitLeaders(cluster);
      produce(cluster, requested, size);
      long count = endOffsets(cluster);
      System.out.printf(Locale.ROOT, "loaded %,d records (%,d requested)%n", count, requested);

      List<Round> timed = new ArrayList<>();
      for (int round = 0; round <= rounds; round++) {
        Rate consumer = null;
        Rate fileStream = null;
        Rate bridge1 = null;
        Rate nullSink = null;
        Rate durableFile = null;
        for (int k = 0; k < 5; k++) {
          switch ((round + k) % 5) {
            case 0 -> consumer = rawConsumer(cluster, count, "bench-raw-" + round, maxPoll);
            case 1 -> fileStream = fileStreamSink(cluster, count, dir, round, maxPoll);
            case 2 -> nullSink = nullSink(cluster, count, round, maxPoll);
            case 3 -> durableFile = durableFileSink(cluster, count, dir, round, maxPoll);
            default -> bridge1 = bridgeSink(cluster, target, count, dir, 1, round, true, maxPoll);
          }
        }
        Rate bridge4 = bridgeSink(cluster, target, count, dir, 4, round, true, maxPoll);
        Rate synchronous = bridgeSink(cluster, target, count, dir, 1, round, false, maxPoll);
        Rate fileBridge1 =
            target.postgres()
                ? bridgeSink(cluster, Target.of("file"), count, dir, 1, round, true, maxPoll)
                : null;
        Rate disk = rawWriteAndSync(dir.resolve("raw-" + round), count, size);
        Round r =
            new Round(
                consumer,
                fileStream,
                nullSink,
                durableFile,
                bridge1,
                bridge4,
                synchronous,
                fileBridge1,
                disk);
        System.out.println(
            table(round == 0 ? "warm-up (not counted)" : "round " + round, r, target.type()));
        if (round > 0) {
          timed.add(r);
        }
      }
      System.out.println(summary(timed, count, size, target.describe(dir), target.type()));
    } finally {
      cluster.stop();
    }
  }

  private static String table(String label, Round r, String store) {
    StringBuilder out = new StringBuilder();
    out.append(String.format(Locale.ROOT, "%n%s%n", label));
    out.append("| reader | rec/s end to end | rec/s steady |\n|---|---:|---:|\n");
    line(out, "raw KafkaConsumer", r.consumer);
    line(out, "FileStreamSinkConnector, 1 task", r.fileStream);
    line(out, "null sink (drops every record; framework ceiling), 1 task", r.nullSink);
    line(
        out,
        "durable file sink (append + fsync per commit; durable ceiling), 1 task",
        r.durableFile);
    line(out, "Queue Bridge sink, " + store + " store, 1 task", r.bridge1);
    line(out, "Queue Bridge sink, " + store + " store, 4 tasks", r.bridge4);
    line(
        out,
        "Queue Bridge sink, " + store + " store, 1 task, queue.write.pipelined=false",
        r.bridge1Synchronous);
    if (r.fileBridge1 != null) {
      line(out, "Queue Bridge sink, file store, 1 task", r.fileBridge1);
    }
    line(out, "raw FileChannel write + fsync per 512 KiB, no Kafka (disk floor)", r.diskFloor);
    return out.toString();
  }

  private static void line(StringBuilder out, String name, Rate rate) {
    out.append(
        String.format(Locale.ROOT, "| %s | %,.0f | %,.0f |%n", name, rate.endToEnd, rate.steady));
  }

  private static String summary(
      List<Round> rounds, long count, int size, String output, String store) {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "%nMedians of %d rounds; %,d records of %d B over %d partitions, output in %s%n%n",
            rounds.size(),
            count,
            size,
            PARTITIONS,
            output));
    out.append(
        "| reader | rec/s end to end | QB 1 task / this | rec/s steady | QB 1 task / this (steady)"
            + " |\n|---|---:|---:|---:|---:|\n");
    summaryLine(out, "raw KafkaConsumer (reference)", rounds, Round::consumer);
    summaryLine(out, "FileStreamSinkConnector, 1 task (reference)", rounds, Round::fileStream);
    summaryLine(
        out, "null sink, 1 task (reference: the framework's ceiling)", rounds, Round::nullSink);
    summaryLine(
        out,
        "durable file sink, 1 task (reference: a durable sink's ceiling)",
        rounds,
        Round::durableFile);
    summaryLine(out, "Queue Bridge sink, " + store + " store, 1 task", rounds, Round::bridge1);
    summaryLine(out, "Queue Bridge sink, " + store + " store, 4 tasks", rounds, Round::bridge4);
    summaryLine(
        out,
        "Queue Bridge sink, " + store + " store, 1 task, queue.write.pipelined=false",
        rounds,
        Round::bridge1Synchronous);
    if (!rounds.isEmpty() && rounds.get(0).fileBridge1 != null) {
      summaryLine(out, "Queue Bridge sink, file store, 1 task", rounds, Round::fileBridge1);
    }
    summaryLine(
        out,
        "raw FileChannel write + fsync per 512 KiB of the same bytes, no Kafka (disk floor)",
        rounds,
        Round::diskFloor);
    out.append("\nPer-round ratios (QB 1 task / FileStream, end to end): ");
    out.append(ratios(rounds, Round::fileStream));
    out.append("\nPer-round ratios (QB 1 task / raw consumer, end to end): ");
    out.append(ratios(rounds, Round::consumer));
    out.append("\nPer-round ratios (QB 1 task / null sink, end to end): ");
    out.append(ratios(rounds, Round::nullSink));
    out.append("\nPer-round ratios (QB 1 task / durable file sink, end to end): ");
    out.append(ratios(rounds, Round::durableFile));
    out.append("\nPer-round ratios (durable file sink / null sink, end to end): ");
    out.append(ratios(rounds, Round::durableFile, Round::nullSink));
    out.append("\nPer-round ratios (null sink / raw consumer, end to end): ");
    out.append(ratios(rounds, Round::nullSink, Round::consumer));
    out.append(medianRatio("null sink / raw consumer", rounds, Round::nullSink, Round::consumer));
    out.append(medianRatio("QB 1 task / null sink", rounds, Round::bridge1, Round::nullSink));
    out.append(
        medianRatio("durable file sink / null sink", rounds, Round::durableFile, Round::nullSink));
    out.append(
        medianRatio("QB 1 task / durable file sink", rounds, Round::bridge1, Round::durableFile));
    out.append(medianRatio("QB 1 task / FileStream", rounds, Round::bridge1, Round::fileStream));
    if (!rounds.isEmpty() && rounds.get(0).fileBridge1 != null) {
      out.append("\nPer-round ratios (QB 1 task / QB 1 task file store, end to end): ");
      out.append(ratios(rounds, Round::fileBridge1));
    }
    out.append('\n');
    return out.toString();
  }

  private static void summaryLine(
      StringBuilder out,
      String name,
      List<Round> rounds,
      java.util.function.Function<Round, Rate> of) {
    double e2e = median(rounds, r -> of.apply(r).endToEnd);
    double steady = median(rounds, r -> of.apply(r).steady);
    double ratioE2e = median(rounds, r -> r.bridge1.endToEnd / of.apply(r).endToEnd);
    double ratioSteady = median(rounds, r -> r.bridge1.steady / of.apply(r).steady);
    out.append(
        String.format(
            Locale.ROOT,
            "| %s | %,.0f | %.2f× | %,.0f | %.2f× |%n",
            name,
            e2e,
            ratioE2e,
            steady,
            ratioSteady));
  }

  private static String ratios(List<Round> rounds, java.util.function.Function<Round, Rate> of) {
    return ratios(rounds, Round::bridge1, of);
  }

  /** {@code top / bottom} end to end, per round. */
  private static String ratios(
      List<Round> rounds,
      java.util.function.Function<Round, Rate> top,
      java.util.function.Function<Round, Rate> bottom) {
    List<String> out = new ArrayList<>();
    for (Round r : rounds) {
      out.add(String.format(Locale.ROOT, "%.2f", top.apply(r).endToEnd / bottom.apply(r).endToEnd));
    }
    return String.join(", ", out);
  }

  /** "Median {@code label}: end to end x×, steady y×" for {@code top / bottom} over the rounds. */
  private static String medianRatio(
      String label,
      List<Round> rounds,
      java.util.function.Function<Round, Rate> top,
      java.util.function.Function<Round, Rate> bottom) {
    return String.format(
        Locale.ROOT,
        "\nMedian %s: end to end %.2f×, steady %.2f×",
        label,
        median(rounds, r -> top.apply(r).endToEnd / bottom.apply(r).endToEnd),
        median(rounds, r -> top.apply(r).steady / bottom.apply(r).steady));
  }

  private static double median(List<Round> rounds, ToDoubleFunction<Round> of) {
    double[] v = rounds.stream().mapToDouble(of).sorted().toArray();
    if (v.length == 0) {
      return Double.NaN;
    }
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static void awaitLeaders(EmbeddedConnectCluster cluster) {
    long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
    while (System.nanoTime() < deadline) {
      Optional<TopicDescription> d = cluster.kafka().describeTopics(TOPIC).get(TOPIC);
      if (d != null
          && d.isPresent()
          && d.get().partitions().size() == PARTITIONS
          && d.get().partitions().stream()
              .map(TopicPartitionInfo::leader)
              .allMatch(Objects::nonNull)) {
        return;
      }
      LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
    }
    throw new IllegalStateException("topic " + TOPIC + " has no leader for every partition");
  }

  private static void produce(EmbeddedConnectCluster cluster, int count, int size) {
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ProducerConfig.ACKS_CONFIG, "all");
    cfg.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
    cfg.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
    cfg.put(ProducerConfig.LINGER_MS_CONFIG, 10);
    cfg.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
    Random random = new Random(42);
    byte[] alphabet = "abcdefghijklmnopqrstuvwxyz0123456789".getBytes(StandardCharsets.US_ASCII);
    try (KafkaProducer<byte[], byte[]> p = cluster.kafka().createProducer(cfg)) {
      for (int i = 0; i < count; i++) {
        byte[] value = new byte[size];
        for (int j = 0; j < size; j++) {
          value[j] = alphabet[random.nextInt(alphabet.length)];
        }
        p.send(
            new ProducerRecord<>(
                TOPIC, i % PARTITIONS, ("k" + i).getBytes(StandardCharsets.UTF_8), value));
      }
      p.flush();
    }
  }

  private static long endOffsets(EmbeddedConnectCluster cluster) throws Exception {
    long total = 0;
    for (int p = 0; p < PARTITIONS; p++) {
      total += cluster.kafka().endOffset(new TopicPartition(TOPIC, p));
    }
    return total;
  }

  private static Rate rawConsumer(
      EmbeddedConnectCluster cluster, long count, String group, String maxPoll) {
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    cfg.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    cfg.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    if (maxPoll != null) {
      cfg.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, maxPoll);
    }
    long started = System.nanoTime();
    long first = 0;
    long seen = 0;
    long atFirst = 0;
    try (KafkaConsumer<byte[], byte[]> c =
        cluster.kafka().createConsumerAndSubscribeTo(cfg, TOPIC)) {
      while (seen < count) {
        ConsumerRecords<byte[], byte[]> records = c.poll(Duration.ofMillis(500));
        if (seen == 0 && !records.isEmpty()) {
          first = System.nanoTime();
          atFirst = records.count();
        }
        seen += records.count();
      }
      c.commitSync();
    }
    long ended = System.nanoTime();
    return new Rate(count / seconds(ended - started), (count - atFirst) / seconds(ended - first));
  }

  private static Rate fileStreamSink(
      EmbeddedConnectCluster cluster, long count, Path dir, int round, String maxPoll)
      throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, FileStreamSinkConnector.class.getName());
    props.put(ConnectorConfig.TASKS_MAX_CONFIG, "1");
    maxPoll(props, maxPoll);
    props.put(SinkConnectorConfig.TOPICS_CONFIG, TOPIC);
    props.put(ConnectorConfig.KEY_CONVERTER_CLASS_CONFIG, StringConverter.class.getName());
    props.put(ConnectorConfig.VALUE_CONVERTER_CLASS_CONFIG, StringConverter.class.getName());
    Path out = dir.resolve("filestream-" + round + ".out");
    props.put(FileStreamSinkConnector.FILE_CONFIG, out.toString());
    Rate rate = timeConnector(cluster, "bench-filestream-" + round, props, count);
    deleteOutput(out);
    return rate;
  }

  /**
   * {@link NullSinkConnector}, 1 task, with the Queue Bridge sink's converters (bytes through):
   * what the worker alone allows a sink.
   */
  private static Rate nullSink(
      EmbeddedConnectCluster cluster, long count, int round, String maxPoll) throws Exception {
    Map<String, String> props = SinkTestSupport.sinkProps(Path.of("unused"), "unused", TOPIC, 1);
    props.keySet().removeIf(k -> k.startsWith("queue."));
    props.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, NullSinkConnector.class.getName());
    maxPoll(props, maxPoll);
    return timeConnector(cluster, "bench-null-" + round, props, count);
  }

  /**
   * {@link DurableFileSinkConnector}, 1 task, with the Queue Bridge sink's converters (bytes
   * through): what the worker allows a sink that keeps the same fields and fsyncs before every
   * commit, and does nothing else.
   */
  private static Rate durableFileSink(
      EmbeddedConnectCluster cluster, long count, Path dir, int round, String maxPoll)
      throws Exception {
    Map<String, String> props = SinkTestSupport.sinkProps(Path.of("unused"), "unused", TOPIC, 1);
    props.keySet().removeIf(k -> k.startsWith("queue."));
    props.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, DurableFileSinkConnector.class.getName());
    Path out = dir.resolve("durable-" + round + ".out");
    props.put(DurableFileSinkConnector.FILE_CONFIG, out.toString());
    maxPoll(props, maxPoll);
    Rate rate = timeConnector(cluster, "bench-durable-" + round, props, count);
    deleteOutput(out);
    return rate;
  }

  private static Rate bridgeSink(
      EmbeddedConnectCluster cluster,
      Target target,
      long count,
      Path dir,
      int tasks,
      int round,
      boolean pipelined,
      String maxPoll)
      throws Exception {
    String name =
        "bench-bridge-" + target.type() + "-" + tasks + (pipelined ? "" : "-sync") + "-" + round;
    Map<String, String> props =
        SinkTestSupport.sinkProps(dir.resolve("store-" + name), "bench-stream", TOPIC, tasks);
    target.configure(props, dir, name);
    props.put(QueueSinkConfig.WRITE_PIPELINED_CONFIG, Boolean.toString(pipelined));
    maxPoll(props, maxPoll);
    Rate rate = timeConnector(cluster, name, props, count);
    target.delete(dir, name);
    return rate;
  }

  private static void maxPoll(Map<String, String> connectorProps, String maxPoll) {
    if (maxPoll != null) {
      connectorProps.put(
          ConnectorConfig.CONNECTOR_CLIENT_CONSUMER_OVERRIDES_PREFIX
              + ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
          maxPoll);
    }
  }

  /**
   * Deletes a timed reader's output (a file or a store directory), so that every writer finds
   * recycled page-cache pages; see the class comment. Best effort: a failure is only printed.
   */
  private static void deleteOutput(Path path) {
    if (!Files.exists(path)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(path)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | UncheckedIOException e) {
      System.out.println("could not delete " + path + ": " + e);
    }
  }

  private static Rate timeConnector(
      EmbeddedConnectCluster cluster, String name, Map<String, String> props, long count)
      throws Exception {
    long started = System.nanoTime();
    cluster.configureConnector(name, props);
    long first = 0;
    long atFirst = 0;
    long committed;
    try (Admin admin = cluster.kafka().createAdminClient()) {
      while ((committed = committed(admin, "connect-" + name)) < count) {
        if (first == 0 && committed > 0) {
          first = System.nanoTime();
          atFirst = committed;
        }
        LockSupport.parkNanos(COMMIT_POLL.toNanos());
      }
    }
    long ended = System.nanoTime();
    if (first == 0) { // everything arrived with the first commit
      first = started;
    }
    long deleting = System.nanoTime();
    cluster.deleteConnector(name);
    cluster.assertions().assertConnectorDoesNotExist(name, "connector deleted");
    System.out.printf(
        Locale.ROOT,
        "%s: %.2f s, deleted in %.2f s%n",
        name,
        seconds(ended - started),
        seconds(System.nanoTime() - deleting));
    return new Rate(
        count / seconds(ended - started),
        first == started
            ? count / seconds(ended - started)
            : (count - atFirst) / seconds(ended - first));
  }

  /**
   * What the disk alone allows the sink: the records' bytes (value, key and about 100 B of framing
   * and coordinates each) written with {@link FileChannel} in 512 KiB chunks (about one {@code put}
   * of 500 records), each followed by an fsync. Same rate in both columns.
   */
  private static Rate rawWriteAndSync(Path file, long count, int size) throws Exception {
    int perRecord = size + 110;
    int perChunk = Math.max(1, (512 * 1024) / perRecord);
    ByteBuffer chunk = ByteBuffer.allocate(perChunk * perRecord);
    new Random(7).nextBytes(chunk.array());
    long started = System.nanoTime();
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      for (long written = 0; written < count; written += perChunk) {
        int records = (int) Math.min(perChunk, count - written);
        chunk.clear().limit(records * perRecord);
        while (chunk.hasRemaining()) {
          ch.write(chunk);
        }
        ch.force(false);
      }
    }
    double rate = count / seconds(System.nanoTime() - started);
    Files.delete(file);
    return new Rate(rate, rate);
  }

  private static long committed(Admin admin, String group) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> offsets =
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    return offsets.values().stream()
        .filter(Objects::nonNull)
        .mapToLong(OffsetAndMetadata::offset)
        .sum();
  }

  private static double seconds(long nanos) {
    return nanos / 1e9;
  }
}
