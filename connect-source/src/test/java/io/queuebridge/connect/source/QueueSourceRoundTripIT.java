package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.connect.sink.QueueSinkConfig;
import io.queuebridge.connect.sink.SinkTestSupport;
import io.queuebridge.core.SharedStores;
import io.queuebridge.core.message.Message;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Topic A → sink → stream → source (restore mode) → topic B is byte-identical: every record of B
 * equals its record of A — key, value (null and empty included), headers (order, repeated keys,
 * binary and null values), timestamp, partition and position in the partition — checked record by
 * record over 100,000 records.
 */
class QueueSourceRoundTripIT {
  private static final Duration TIMEOUT = Duration.ofMinutes(3);
  private static final int RECORDS = 100_000;
  private static final int PARTITIONS = 4;

  @TempDir static Path store;
  private static EmbeddedConnectCluster cluster;
  private static SharedStores.Lease lease;

  @BeforeAll
  static void start() {
    lease = SourceTestSupport.openStore(store);
    cluster = SourceTestSupport.startCluster("source-roundtrip", 1, false);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.stop();
    }
    if (lease != null) {
      lease.close();
    }
  }

  @Test
  void topicThroughSinkStreamAndSourceComesBackByteIdentical() throws Exception {
    cluster.kafka().createTopic("rt-in", PARTITIONS);
    cluster.kafka().createTopic("rt-out", PARTITIONS);
    produce("rt-in");

    Map<String, String> sink = sinkProps("rt-in", "rt-stream", 2);
    sink.put(QueueSinkConfig.FORWARD_KEY_CONFIG, "true");
    sink.put(QueueSinkConfig.FORWARD_METADATA_CONFIG, "true");
    cluster.configureConnector("rt-sink", sink);

    // The source starts before the sink has declared the stream: it finds it when it appears.
    Map<String, String> source = SourceTestSupport.sourceProps(store, 1);
    source.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, "rt-stream");
    source.put(QueueSourceConfig.TOPIC_CONFIG, "rt-out");
    source.put(QueueSourceConfig.RESTORE_MODE_CONFIG, "true");
    cluster.configureConnector("rt-source", source);

    await("topic B holds every record")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .until(() -> SourceTestSupport.endOffsetSum(cluster, "rt-out", false) >= RECORDS);

    Map<Integer, List<ConsumerRecord<byte[], byte[]>>> in =
        SourceTestSupport.readAll(cluster, "rt-in", false);
    Map<Integer, List<ConsumerRecord<byte[], byte[]>>> out =
        SourceTestSupport.readAll(cluster, "rt-out", false);
    int compared = 0;
    for (int p = 0; p < PARTITIONS; p++) {
      List<ConsumerRecord<byte[], byte[]>> a = in.get(p);
      List<ConsumerRecord<byte[], byte[]>> b = out.get(p);
      assertThat(b).as("records of partition %d", p).hasSameSizeAs(a);
      for (int i = 0; i < a.size(); i++) {
        ConsumerRecord<byte[], byte[]> x = a.get(i);
        ConsumerRecord<byte[], byte[]> y = b.get(i);
        String where = "partition " + p + " position " + i;
        assertThat(y.key()).as("key at %s", where).isEqualTo(x.key());
        assertThat(y.value()).as("value at %s", where).isEqualTo(x.value());
        assertThat(y.timestamp()).as("timestamp at %s", where).isEqualTo(x.timestamp());
        assertThat(y.timestampType())
            .as("timestamp type at %s", where)
            .isEqualTo(TimestampType.CREATE_TIME);
        assertThat(headers(y)).as("headers at %s", where).isEqualTo(headers(x));
        compared++;
      }
    }
    assertThat(compared).isEqualTo(RECORDS);
    cluster.deleteConnector("rt-source");
    cluster.deleteConnector("rt-sink");
  }

  /**
   * Topic → sink (delay header) → stream A → source (due-time header) → topic → sink (due-time
   * header) → stream B: every message of B has the due time of its message in A, not a delay
   * counted again from the second write.
   */
  @Test
  void aDueTimeTravelsThroughTheSourceAsAHeaderTheNextSinkReads() throws Exception {
    int records = 50;
    cluster.kafka().createTopic("due-in", 1);
    cluster.kafka().createTopic("due-mid", 1);
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<byte[], byte[]> producer = cluster.kafka().createProducer(cfg)) {
      for (int i = 0; i < records; i++) {
        ProducerRecord<byte[], byte[]> r = new ProducerRecord<>("due-in", bytes("v" + i));
        r.headers().add(new RecordHeader("delay-ms", bytes(Long.toString(3_600_000L + i))));
        producer.send(r);
      }
      producer.flush();
    }
    Map<String, String> first = sinkProps("due-in", "due-a", 1);
    first.put(QueueSinkConfig.DELAY_HEADER_CONFIG, "delay-ms");
    cluster.configureConnector("due-sink-a", first);
    Map<String, String> source = SourceTestSupport.sourceProps(store, 1);
    source.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, "due-a");
    source.put(QueueSourceConfig.TOPIC_CONFIG, "due-mid");
    source.put(QueueSourceConfig.DELIVER_AT_HEADER_CONFIG, "x-due");
    cluster.configureConnector("due-source", source);
    Map<String, String> second = sinkProps("due-mid", "due-b", 1);
    second.put(QueueSinkConfig.DELIVER_AT_HEADER_CONFIG, "x-due");
    cluster.configureConnector("due-sink-b", second);

    await("stream B holds every message")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> read("due-b").size() == records);
    List<Message> a = read("due-a");
    List<Message> b = read("due-b");
    List<ConsumerRecord<byte[], byte[]>> mid =
        SourceTestSupport.readAllFlat(cluster, "due-mid", false);
    assertThat(a).hasSize(records);
    assertThat(mid).hasSize(records);
    for (int i = 0; i < records; i++) {
      Instant due = a.get(i).deliverAt();
      assertThat(due).as("due time of A's message %d", i).isNotNull();
      long millis = RecordFactory.epochMillisUp(due);
      ConsumerRecord<byte[], byte[]> r = mid.get(i);
      assertThat(r.value()).isEqualTo(bytes("v" + i));
      assertThat(new String(r.headers().lastHeader("x-due").value(), StandardCharsets.UTF_8))
          .as("the source's due-time header of record %d", i)
          .isEqualTo(Long.toString(millis));
      assertThat(r.headers().lastHeader("delay-ms")).as("the other headers stay").isNotNull();
      assertThat(b.get(i).value()).isEqualTo(bytes("v" + i));
      assertThat(b.get(i).deliverAt())
          .as("due time of B's message %d: A's, to the millisecond", i)
          .isEqualTo(Instant.ofEpochMilli(millis));
    }
    cluster.deleteConnector("due-sink-b");
    cluster.deleteConnector("due-source");
    cluster.deleteConnector("due-sink-a");
  }

  /** A sink of {@code topic} into {@code stream} on the test's file store, headers forwarded. */
  private static Map<String, String> sinkProps(String topic, String stream, int tasks) {
    Map<String, String> sink = SinkTestSupport.sinkProps(store, stream, topic, tasks);
    sink.put(QueueSinkConfig.FORWARD_HEADERS_CONFIG, "true");
    return sink;
  }

  /** The messages of {@code stream}; none while it does not exist yet. */
  private static List<Message> read(String stream) {
    boolean exists =
        lease.storage().queues().listQueues().stream().anyMatch(q -> q.name().equals(stream));
    return exists ? lease.storage().queues().readBatch(stream, 0, 1_000) : List.of();
  }

  /** 100,000 records of every shape, spread round robin over the partitions. */
  private static void produce(String topic) throws Exception {
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ProducerConfig.ACKS_CONFIG, "all");
    cfg.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    Random random = new Random(42);
    long base = 1_700_000_000_000L;
    try (KafkaProducer<byte[], byte[]> producer = cluster.kafka().createProducer(cfg)) {
      for (int i = 0; i < RECORDS; i++) {
        byte[] key = i % 7 == 0 ? null : bytes("key-" + i);
        byte[] value =
            switch (i % 10) {
              case 3 -> null; // tombstone
              case 4 -> new byte[0];
              case 5 -> randomBytes(random, 1 + random.nextInt(200));
              default -> bytes("value-" + i);
            };
        ProducerRecord<byte[], byte[]> r =
            new ProducerRecord<>(topic, i % PARTITIONS, base + i * 3L, key, value);
        switch (i % 5) {
          case 1 -> r.headers().add(new RecordHeader("h", bytes("one-" + i)));
          case 2 -> {
            r.headers().add(new RecordHeader("rep", bytes("a")));
            r.headers().add(new RecordHeader("other", bytes("b")));
            r.headers().add(new RecordHeader("rep", bytes("c")));
          }
          case 3 -> r.headers().add(new RecordHeader("nullvalue", (byte[]) null));
          case 4 -> r.headers().add(new RecordHeader("bin", randomBytes(random, 16)));
          default -> {}
        }
        producer.send(r);
      }
      producer.flush();
    }
  }

  private static List<String> headers(ConsumerRecord<byte[], byte[]> r) {
    return Arrays.stream(r.headers().toArray()).map(QueueSourceRoundTripIT::describe).toList();
  }

  private static String describe(Header h) {
    return h.key() + "=" + (h.value() == null ? "<null>" : Arrays.toString(h.value()));
  }

  private static byte[] randomBytes(Random random, int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
