package io.queuebridge.examples.quickstart;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.locks.LockSupport;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Connector throughput in a real deployment (a benchmark, not a test): Kafka's broker and a {@code
 * ConnectDistributed} worker each in a JVM of its own, the built plugin archive on {@code
 * plugin.path} ({@link ChildConnectWorker}), and this harness a third process that loads the
 * records, posts connectors over REST and times them. In one run, in rotation within each round:
 *
 * <ul>
 *   <li>sinks, each reading the whole topic from the start with its own consumer group: a null sink
 *       (drops every record; the Queue Bridge sink's converters: the worker's ceiling for a sink),
 *       Kafka's {@code FileStreamSinkConnector}, a durable file sink (appends each record's
 *       coordinates, key, value and headers to a file and fsyncs it before every commit, nothing
 *       else: a durable sink's ceiling; the Queue Bridge sink's converters), and the Queue Bridge
 *       sink into a {@code file}-store stream (an fsync per batch);
 *   <li>sources, each writing a topic of its own: a null source (hands the worker ready-made values
 *       with the Queue Bridge source's converters and batch size), {@code
 *       FileStreamSourceConnector} reading a file of the same lines, and the Queue Bridge source
 *       reading a {@code file}-store stream of them.
 * </ul>
 *
 * <pre>
 * mvn -B -ntp -Pworker-bench -pl examples -am package -DskipTests \
 *   -Dworker.bench.args="1000000 200 5 target/workerperf 5000000"
 * </pre>
 *
 * Arguments: records a source writes (1,000,000), value bytes (200), timed rounds (5), a folder on
 * a real disk for the stores, the files and the logs, and the records in the topic the sinks read
 * (as many as the sources write; more gives a fast sink more offset commits to be timed by: the
 * null sink reads a million 200 B records in under a second, four commit intervals). The null
 * source holds its values in the worker's heap (2 GiB). {@code -Dworker.bench.eos=true} turns the
 * worker's exactly-once source support on for every source alike; {@code -Dworker.bench.jvm="..."}
 * adds options to the worker's JVM (a profiler's, say).
 *
 * <p><b>Method.</b> A warm-up round (not counted), then the timed rounds. A sink is timed from its
 * first committed offset to the last (records committed in between / time; {@code
 * offset.flush.interval.ms=250}, polled every 20 ms), a source from the first record in its topic
 * to the last (end offsets polled every 10 ms): steady state, without task start-up. Ratios are
 * taken within a round; the medians over the rounds are printed. Each sink's output (the FileStream
 * file, the store) is deleted once it is timed, so every writer finds recycled page-cache pages.
 *
 * <p>The null connectors and the durable file sink come from the sink's and the source's test jars,
 * FileStream from Kafka's {@code connect-file} jar; those go on the worker's class path (with a
 * service file naming the reference connectors), the Queue Bridge connectors only on its {@code
 * plugin.path}, as a user deploys them.
 */
public final class WorkerThroughputHarness {
  private static final String TOPIC = "bench";
  private static final int PARTITIONS = 4;
  private static final String BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter";
  private static final String STRINGS = "org.apache.kafka.connect.storage.StringConverter";
  private static final Duration LIMIT = Duration.ofMinutes(10);
  private static final String NULL_SINK_CLASS = "io.queuebridge.connect.sink.NullSinkConnector";
  private static final String DURABLE_SINK_CLASS =
      "io.queuebridge.connect.sink.DurableFileSinkConnector";
  private static final String NULL_SOURCE_CLASS =
      "io.queuebridge.connect.source.NullSourceConnector";
  private static final List<String> ORDER =
      List.of(
          "null sink",
          "FileStreamSink",
          "durable file sink",
          "queue sink",
          "null source",
          "FileStreamSource",
          "queue source");

  private final Path dir;
  private final int records;
  private final int valueBytes;
  private final ChildConnectWorker worker;
  private final Admin admin;

  private WorkerThroughputHarness(
      Path dir, int records, int valueBytes, ChildConnectWorker worker, Admin admin) {
    this.dir = dir;
    this.records = records;
    this.valueBytes = valueBytes;
    this.worker = worker;
    this.admin = admin;
  }

  public static void main(String[] args) throws Exception {
    int records = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
    int valueBytes = args.length > 1 ? Integer.parseInt(args[1]) : 200;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    Path dir =
        (args.length > 3 ? Path.of(args[3]) : Files.createTempDirectory("workerperf"))
            .toAbsolutePath();
    int sinkRecords = args.length > 4 ? Integer.parseInt(args[4]) : records;
    boolean eos = Boolean.getBoolean("worker.bench.eos");
    if (records < 1 || valueBytes < 16 || rounds < 1 || sinkRecords < 1) {
      throw new IllegalArgumentException(
          "arguments are records (>= 1), value bytes (>= 16), rounds (>= 1), a folder, sink"
              + " records (>= 1); got "
              + String.join(" ", args));
    }
    deleteTree(dir);
    Files.createDirectories(dir);
    List<String> jvm = List.of("-Xms1g", "-Xmx1g");
    try (ChildBroker broker = ChildBroker.start(dir.resolve("broker.log"), jvm)) {
      Map<String, String> extra = new HashMap<>();
      extra.put("offset.flush.interval.ms", "250");
      extra.put("exactly.once.source.support", eos ? "enabled" : "disabled");
      List<String> classPath = new ArrayList<>(ChildConnectWorker.workerClassPath());
      classPath.addAll(referenceConnectors(dir.resolve("reference-connectors")));
      // the worker as a user runs it: G1 (the JVM's default), not the tests' serial collector
      List<String> workerJvm =
          new ArrayList<>(List.of("-XX:-UseSerialGC", "-XX:+UseG1GC", "-Xms2g", "-Xmx2g"));
      String more = System.getProperty("worker.bench.jvm", "").trim(); // e.g. a profiler's flags
      if (!more.isEmpty()) {
        workerJvm.addAll(List.of(more.split("\\s+")));
      }
      ChildConnectWorker worker =
          ChildConnectWorker.create(
              "bench", "bench-worker", broker.bootstrapServers(), dir, extra, classPath, workerJvm);
      Properties adminProps = new Properties();
      adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
      try (Admin admin = Admin.create(adminProps)) {
        WorkerThroughputHarness h =
            new WorkerThroughputHarness(dir, records, valueBytes, worker, admin);
        h.load(broker.bootstrapServers(), rounds, sinkRecords);
        worker.start();
        try {
          h.run(rounds, eos);
        } finally {
          worker.stop(Duration.ofSeconds(30));
        }
      }
    }
  }

  /** The topic, the streams of the source rounds and the FileStreamSource's input. */
  private void load(String bootstrap, int rounds, int sinkRecords) throws Exception {
    admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get();
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int i = 0; i < sinkRecords; i++) {
        producer.send(new ProducerRecord<>(TOPIC, null, line(i).getBytes(StandardCharsets.UTF_8)));
      }
      producer.flush();
    }
    try (BufferedWriter w =
        Files.newBufferedWriter(dir.resolve("lines.txt"), StandardCharsets.UTF_8)) {
      for (int i = 0; i < records; i++) {
        w.write(line(i));
        w.write('\n');
      }
    }
    try (Storage store = QueueStores.open("file", Map.of("path", sourceStore().toString()))) {
      for (int round = 0; round <= rounds; round++) {
        String stream = "bench-" + round;
        store.queues().createQueue(QueueConfig.durable(stream).type(QueueType.STREAM).build());
        List<Message> batch = new ArrayList<>(1_000);
        for (int i = 0; i < records; i++) {
          batch.add(Message.builder().value(line(i).getBytes(StandardCharsets.UTF_8)).build());
          if (batch.size() == 1_000 || i == records - 1) {
            store.queues().appendBatch(stream, batch);
            batch.clear();
          }
        }
      }
    }
  }

  private void run(int rounds, boolean eos) throws Exception {
    long count = topicRecords(TOPIC);
    System.out.printf(
        Locale.ROOT,
        "separate processes: %d B values; sinks read %d records (topic %s), sources write %d;"
            + " %d rounds, source EOS %s%n",
        valueBytes,
        count,
        TOPIC,
        records,
        rounds,
        eos ? "on" : "off");
    Map<String, List<Double>> rates = new LinkedHashMap<>();
    for (int round = 0; round <= rounds; round++) {
      Map<String, Double> r = new LinkedHashMap<>(); // printed in this order, whatever ran first
      for (String k : ORDER) {
        r.put(k, 0.0);
      }
      for (int k = 0; k < 4; k++) { // rotated: none always first or right after another
        switch ((round + k) % 4) {
          case 0 -> r.put("null sink", sink("null-" + round, nullSink(), count));
          case 1 -> r.put("FileStreamSink", sink("file-" + round, fileSink(round), count));
          case 2 ->
              r.put("durable file sink", sink("durable-" + round, durableFileSink(round), count));
          default -> r.put("queue sink", sink("queue-" + round, queueSink(round), count));
        }
      }
      for (int k = 0; k < 3; k++) {
        switch ((round + k) % 3) {
          case 0 -> r.put("null source", source("src-null-" + round, nullSource(round)));
          case 1 -> r.put("FileStreamSource", source("src-file-" + round, fileSource(round)));
          default -> r.put("queue source", source("src-queue-" + round, queueSource(round)));
        }
      }
      deleteTree(dir.resolve("sink-" + round + ".out"));
      deleteTree(dir.resolve("sink-durable-" + round + ".out"));
      deleteTree(dir.resolve("sink-store-" + round));
      r.put("queue sink / null sink", r.get("queue sink") / r.get("null sink"));
      r.put("queue sink / FileStreamSink", r.get("queue sink") / r.get("FileStreamSink"));
      r.put("durable file sink / null sink", r.get("durable file sink") / r.get("null sink"));
      r.put("queue sink / durable file sink", r.get("queue sink") / r.get("durable file sink"));
      r.put("queue source / null source", r.get("queue source") / r.get("null source"));
      r.put("queue source / FileStreamSource", r.get("queue source") / r.get("FileStreamSource"));
      StringBuilder line = new StringBuilder(round == 0 ? "warm-up:" : "round " + round + ":");
      r.forEach((k, v) -> line.append(String.format(Locale.ROOT, " %s %s;", k, format(k, v))));
      System.out.println(line);
      if (round > 0) {
        r.forEach((k, v) -> rates.computeIfAbsent(k, x -> new ArrayList<>()).add(v));
      }
    }
    StringBuilder result =
        new StringBuilder(
            String.format(
                Locale.ROOT,
                "RESULT separate processes, sink records=%d source records=%d valueBytes=%d"
                    + " rounds=%d eos=%b, medians:",
                count,
                records,
                valueBytes,
                rounds,
                eos));
    rates.forEach(
        (k, v) -> result.append(String.format(Locale.ROOT, " %s %s;", k, format(k, median(v)))));
    System.out.println(result);
  }

  private static String format(String what, double v) {
    return what.contains(" / ")
        ? String.format(Locale.ROOT, "%.2fx", v)
        : String.format(Locale.ROOT, "%.0f rec/s", v);
  }

  // ------------------------------------------------------------------------------ connectors

  private Map<String, String> nullSink() {
    Map<String, String> c = converters(BYTES);
    c.put("connector.class", NULL_SINK_CLASS);
    c.put("topics", TOPIC);
    return c;
  }

  private Map<String, String> fileSink(int round) {
    Map<String, String> c = converters(STRINGS);
    c.put("connector.class", "org.apache.kafka.connect.file.FileStreamSinkConnector");
    c.put("topics", TOPIC);
    c.put("file", dir.resolve("sink-" + round + ".out").toString());
    return c;
  }

  private Map<String, String> durableFileSink(int round) {
    Map<String, String> c = converters(BYTES);
    c.put("connector.class", DURABLE_SINK_CLASS);
    c.put("topics", TOPIC);
    c.put("file", dir.resolve("sink-durable-" + round + ".out").toString());
    return c;
  }

  private Map<String, String> queueSink(int round) {
    Map<String, String> c = converters(BYTES);
    c.put("connector.class", PluginUnderTest.SINK_CLASS);
    c.put("topics", TOPIC);
    c.put("queue.name", "bench-stream");
    c.put("queue.store.type", "file");
    c.put("queue.store.path", dir.resolve("sink-store-" + round).toString());
    return c;
  }

  private Map<String, String> nullSource(int round) {
    Map<String, String> c = converters(BYTES);
    c.put("connector.class", NULL_SOURCE_CLASS);
    c.put("topic", "src-null-" + round);
    c.put("null.records", Integer.toString(records));
    c.put("null.value.bytes", Integer.toString(valueBytes));
    c.put("null.batch", "2000");
    return c;
  }

  private Map<String, String> fileSource(int round) {
    Map<String, String> c = converters(STRINGS);
    c.put("connector.class", "org.apache.kafka.connect.file.FileStreamSourceConnector");
    c.put("topic", "src-file-" + round);
    c.put("file", dir.resolve("lines.txt").toString());
    c.put("batch.size", "2000");
    return c;
  }

  private Map<String, String> queueSource(int round) {
    Map<String, String> c = converters(BYTES);
    c.put("connector.class", PluginUnderTest.SOURCE_CLASS);
    c.put("topic", "src-queue-" + round);
    c.put("queue.names", "bench-" + round);
    c.put("queue.store.type", "file");
    c.put("queue.store.path", sourceStore().toString());
    c.put("poll.max.records", "2000");
    return c;
  }

  private static Map<String, String> converters(String converter) {
    Map<String, String> c = new HashMap<>();
    c.put("tasks.max", "1");
    c.put("key.converter", converter);
    c.put("value.converter", converter);
    if (converter.equals(BYTES)) {
      c.put("header.converter", BYTES);
    }
    return c;
  }

  private Path sourceStore() {
    return dir.resolve("source-store");
  }

  // ------------------------------------------------------------------------------ timing

  /** Records per second from the sink's first committed offset to its last. */
  private double sink(String name, Map<String, String> config, long count) throws Exception {
    ConnectFlows.post(worker, name, config);
    return steadyRate(name, () -> committed("connect-" + name), count, Duration.ofMillis(20));
  }

  /** How far a timed connector has got: records committed or written so far. */
  @FunctionalInterface
  private interface Progress {
    long now() throws Exception;
  }

  /**
   * Polls {@code progress} every {@code poll} until it reaches {@code target}, then deletes
   * connector {@code name}; returns the records per second from the first progress seen to the
   * last.
   */
  private double steadyRate(String name, Progress progress, long target, Duration poll)
      throws Exception {
    long deadline = System.nanoTime() + LIMIT.toNanos();
    long first = 0;
    long atFirst = 0;
    long n;
    int polls = 0;
    while ((n = progress.now()) < target) {
      long now = System.nanoTime();
      if (first == 0 && n > 0) {
        first = now;
        atFirst = n;
      }
      failFast(name, ++polls);
      if (now > deadline) {
        throw new IllegalStateException(
            name + " got to " + n + " of " + target + " in " + LIMIT + "; see the log");
      }
      LockSupport.parkNanos(poll.toNanos());
    }
    long ended = System.nanoTime();
    worker.rest().deleteConnector(name);
    if (first == 0) { // all of it in the first poll that saw any
      throw new IllegalStateException(name + " got everything at once: use more records");
    }
    return (n - atFirst) / ((ended - first) / 1e9);
  }

  /** Every 50th poll: stops the run when a task of connector {@code name} failed. */
  private void failFast(String name, int polls) {
    if (polls % 50 == 0) {
      String trace = worker.rest().failureTrace(name);
      if (!trace.isEmpty()) {
        throw new IllegalStateException(name + " failed: " + trace);
      }
    }
  }

  private long committed(String group) throws Exception {
    long sum = 0;
    for (OffsetAndMetadata o :
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get().values()) {
      if (o != null) {
        sum += o.offset();
      }
    }
    return sum;
  }

  /** Records per second from the first record in the source's topic to the last. */
  private double source(String topic, Map<String, String> config) throws Exception {
    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
    ConnectFlows.post(worker, topic, config);
    return steadyRate(topic, () -> topicRecords(topic), records, Duration.ofMillis(10));
  }

  private long topicRecords(String topic) throws Exception {
    return ConnectFlows.endOffsetSum(admin, topic, IsolationLevel.READ_UNCOMMITTED);
  }

  // ------------------------------------------------------------------------------ set-up

  /**
   * The reference connectors for the worker's class path: a folder with the null connectors' and
   * the durable file sink's classes, copied out of the sink's and the source's test jars (built by
   * {@code package}), and the service files that name them (the worker discovers plugins by {@code
   * service_load}). Only those classes: the rest of a test jar (test store providers among them)
   * would reach the plugin's own service lookups through the class path. FileStream's jar is on the
   * class path already.
   */
  private static List<String> referenceConnectors(Path folder) throws IOException {
    Path repo = PluginUnderTest.repo();
    String v = PluginUnderTest.version();
    Map<String, List<String>> connectors =
        Map.of(
            "connect-sink", List.of(NULL_SINK_CLASS, DURABLE_SINK_CLASS),
            "connect-source", List.of(NULL_SOURCE_CLASS));
    for (Map.Entry<String, List<String>> c : connectors.entrySet()) {
      String module = c.getKey();
      Path jar = repo.resolve(module).resolve("target").resolve(module + "-" + v + "-tests.jar");
      if (!Files.isRegularFile(jar)) {
        throw new IllegalStateException("no " + jar + ": build with -am package first");
      }
      for (String connector : c.getValue()) {
        String prefix = connector.replace('.', '/');
        int copied = 0;
        try (JarFile tests = new JarFile(jar.toFile())) {
          for (JarEntry e : Collections.list(tests.entries())) {
            String name = e.getName();
            if (name.equals(prefix + ".class") || name.startsWith(prefix + "$")) {
              Path to = folder.resolve(name);
              Files.createDirectories(to.getParent());
              try (InputStream in = tests.getInputStream(e)) {
                Files.copy(in, to);
              }
              copied++;
            }
          }
        }
        if (copied == 0) {
          throw new IllegalStateException("no " + connector + " in " + jar);
        }
      }
    }
    Path services = Files.createDirectories(folder.resolve("META-INF").resolve("services"));
    Files.writeString(
        services.resolve("org.apache.kafka.connect.sink.SinkConnector"),
        String.join("\n", connectors.get("connect-sink")) + "\n");
    Files.writeString(
        services.resolve("org.apache.kafka.connect.source.SourceConnector"),
        String.join("\n", connectors.get("connect-source")) + "\n");
    return List.of(folder.toString());
  }

  /** The {@code i}-th value: {@code valueBytes} ASCII characters, unique by their prefix. */
  private String line(int i) {
    String head = String.format(Locale.ROOT, "line-%09d-", i);
    char[] pad = new char[valueBytes - head.length()];
    Arrays.fill(pad, (char) ('a' + i % 26));
    return head + new String(pad);
  }

  private static double median(List<Double> xs) {
    List<Double> sorted = new ArrayList<>(xs);
    sorted.sort(null);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private static void deleteTree(Path path) throws IOException {
    if (!Files.exists(path)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(path)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
