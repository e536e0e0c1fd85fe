package io.queuebridge.connect.sink;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.connect.file.FileStreamSinkConnector;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.SinkConnectorConfig;
import org.apache.kafka.connect.storage.StringConverter;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;

/**
 * Sink throughput harness (a benchmark, not a test): on one embedded broker + worker, the same
 * records are read by a raw {@link KafkaConsumer}, written to a file by Kafka's {@link
 * FileStreamSinkConnector}, and written into a {@code file}-store stream by the Queue Bridge sink
 * (fsync per batch). Each connector is timed from its creation until its consumer group has
 * committed every offset. Prints a Markdown table with the ratios.
 *
 * <pre>
 * ^ * mvn -B -ntp -Psink-bench -pl connect-sink -am process-test-classes \
 *   -Dsink.bench.args="200000 1024 /work/bench-tmp"
 * </pre>
 *
 * Arguments: record count (default 200,000), value size in bytes (1,024), a directory on a real
 * disk for the store and the FileStream output (default: a temp directory).
 */
public final class SinkThroughputBenchmark {
  private static final String TOPIC = "bench";
  private static final int PARTITIONS = 4;

  private SinkThroughputBenchmark() {}

  public static void main(String[] args) throws Exception {
    int count = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
    int size = args.length > 1 ? Integer.parseInt(args[1]) : 1024;
    Path dir =
        args.length > 2
            ? Files.createDirectories(Path.of(args[2]).resolve("sink-bench-" + System.nanoTime()))
            : Files.createTempDirectory("sink-bench");
    Map<String, String> workerProps = new HashMap<>();
    workerProps.put("offset.flush.interval.ms", "250");
    EmbeddedConnectCluster cluster =
        new EmbeddedConnectCluster.Builder()
            .name("sink-bench")
            .numWorkers(1)
            .numBrokers(1)
            .workerProps(workerProps)
            .build();
    cluster.start();
    try {
      cluster.kafka().createTopic(TOPIC, PARTITIONS);
      produce(cluster, count, size);

      double consumer = rawConsumer(cluster, count);
      double fileStream = fileStreamSink(cluster, count, dir);
      double bridge1 = bridgeSink(cluster, count, dir, 1);
      double bridge4 = bridgeSink(cluster, count, dir, 4);

      StringBuilder out = new StringBuilder();
      out.append(
          String.format(
              Locale.ROOT,
              "%n%d records of %d B over %d partitions, store and FileStream output in %s%n%n",
              count,
              size,
              PARTITIONS,
              dir));
      out.append("| reader | records/s | Queue Bridge (1 task) / this |\n|---|---:|---:|\n");
      row(out, "raw KafkaConsumer (reference)", consumer, bridge1);
      row(out, "FileStreamSinkConnector, 1 task (reference)", fileStream, bridge1);
      row(out, "Queue Bridge sink, file store, 1 task", bridge1, bridge1);
      row(out, "Queue Bridge sink, file store, 4 tasks", bridge4, bridge1);
      System.out.println(out);
    } finally {
      cluster.stop();
    }
  }

  private static void row(StringBuilder out, String name, double rate, double bridge) {
    out.append(String.format(Locale.ROOT, "| %s | %,.0f | %.2f× |%n", name, rate, bridge / rate));
  }

  private static void produce(EmbeddedConnectCluster cluster, int count, int size)
      throws Exception {
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ProducerConfig.ACKS_CONFIG, "all");
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

  private static double rawConsumer(EmbeddedConnectCluster cluster, int count) {
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ConsumerConfig.GROUP_ID_CONFIG, "bench-raw");
    cfg.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    cfg.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    long started = System.nanoTime();
    long seen = 0;
    try (KafkaConsumer<byte[], byte[]> c =
        cluster.kafka().createConsumerAndSubscribeTo(cfg, TOPIC)) {
      while (seen < count) {
        ConsumerRecords<byte[], byte[]> records = c.poll(Duration.ofMillis(500));
        seen += records.count();
      }
      c.commitSync();
    }
    return rate(count, started);
  }

  private static double fileStreamSink(EmbeddedConnectCluster cluster, int count, Path dir)
      throws Exception {
    Map<String, String> props = new HashMap<>();
    props.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, FileStreamSinkConnector.class.getName());
    props.put(ConnectorConfig.TASKS_MAX_CONFIG, "1");
    props.put(SinkConnectorConfig.TOPICS_CONFIG, TOPIC);
    props.put(ConnectorConfig.KEY_CONVERTER_CLASS_CONFIG, StringConverter.class.getName());
    props.put(ConnectorConfig.VALUE_CONVERTER_CLASS_CONFIG, StringConverter.class.getName());
    props.put(FileStreamSinkConnector.FILE_CONFIG, dir.resolve("filestream.out").toString());
    return timeConnector(cluster, "bench-filestream", props, count);
  }

  private static double bridgeSink(EmbeddedConnectCluster cluster, int count, Path dir, int tasks)
      throws Exception {
    Map<String, String> props =
        SinkTestSupport.sinkProps(dir.resolve("store-" + tasks), "bench-stream", TOPIC, tasks);
    return timeConnector(cluster, "bench-bridge-" + tasks, props, count);
  }

  private static double timeConnector(
      EmbeddedConnectCluster cluster, String name, Map<String, String> props, int count)
      throws Exception {
    long started = System.nanoTime();
    cluster.configureConnector(name, props);
    try (Admin admin = cluster.kafka().createAdminClient()) {
      while (committed(admin, "connect-" + name) < count) {
        Thread.onSpinWait();
        java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
      }
    }
    double rate = rate(count, started);
    cluster.deleteConnector(name);
    return rate;
  }

  private static long committed(Admin admin, String group) throws Exception {
    Map<org.apache.kafka.common.TopicPartition, OffsetAndMetadata> offsets =
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    return offsets.values().stream()
        .filter(java.util.Objects::nonNull)
        .mapToLong(OffsetAndMetadata::offset)
        .sum();
  }

  private static double rate(int count, long startedNanos) {
    return count / ((System.nanoTime() - startedNanos) / 1e9);
  }
}
