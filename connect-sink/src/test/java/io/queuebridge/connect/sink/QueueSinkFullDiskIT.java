package io.queuebridge.connect.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.TimestampType;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.file.FileStorage;
import io.queuebridge.core.store.file.SmallTmpfs;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The sink writing into a {@code file} store on a full disk: a size-limited tmpfs the test mounts
 * ({@link SmallTmpfs}; skipped, with the reason, where the machine cannot mount one). While the
 * disk is full every durable batch fails with a retriable store error (ENOSPC); the task keeps
 * running — it rewinds, pauses its partitions for {@code queue.retry.backoff.ms} and tries again —
 * and never reports to Kafka an offset the stream does not hold. Once the filler file is deleted it
 * resumes by itself, and the stream ends with every Kafka record exactly once, byte for byte (key,
 * value, headers, timestamp, coordinates), in order per partition; a reopen of the store finds the
 * same.
 */
class QueueSinkFullDiskIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(90);
  private static final String TOPIC = "full.in";
  private static final String STREAM = "full-stream";
  private static final String CONNECTOR = "full-sink";
  private static final int PARTITIONS = 2;
  private static final long T0 = 1_767_225_600_000L; // 2026-01-01T00:00:00Z

  private static SmallTmpfs disk;
  private static EmbeddedConnectCluster cluster;
  private static Admin admin;

  @BeforeAll
  static void start() throws Exception {
    disk = SmallTmpfs.mount("connect-sink", 8 << 20); // skips the class where it cannot
    cluster = SinkTestSupport.startCluster("sink-full-disk", 1);
    admin = cluster.kafka().createAdminClient();
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      if (admin != null) {
        admin.close();
      }
      if (cluster != null) {
        cluster.stop();
      }
    } finally {
      if (disk != null) {
        disk.close();
      }
    }
  }

  @Test
  void aFullDiskPausesTheSinkAndItResumesByItselfOnceSpaceIsFreedWithEveryRecordOnce()
      throws Exception {
    Path store = disk.dir().resolve("store");
    cluster.kafka().createTopic(TOPIC, PARTITIONS);
    Map<String, String> props = SinkTestSupport.sinkProps(store, STREAM, TOPIC, PARTITIONS);
    props.put(QueueSinkConfig.RETRY_BACKOFF_MS_CONFIG, "200");
    props.put("queue.store.segment.bytes", Integer.toString(256 << 10)); // rolls meet ENOSPC too
    props.put("consumer.override.max.poll.records", "50");
    cluster.configureConnector(CONNECTOR, props);
    cluster
        .assertions()
        .assertConnectorAndExactlyNumTasksAreRunning(CONNECTOR, PARTITIONS, "sink running");

    int first = 100;
    produce(0, first);
    await("the first records are in the stream")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(100))
        .until(() -> SinkTestSupport.tail(store, STREAM) == (long) PARTITIONS * first);

    // The disk fills up; about 2.4 MiB more arrive in Kafka than the 32 KiB left can take.
    disk.fill(32 << 10);
    produce(first, 600);
    int perPartition = first + 600;
    for (int p = 0; p < PARTITIONS; p++) {
      assertThat(endOffset(p)).as("records in partition %d", p).isEqualTo(perPartition);
    }
    long total = (long) PARTITIONS * perPartition;
    await("the task keeps running, holding back what the full disk cannot take")
        .during(Duration.ofSeconds(5))
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> {
              long committed = committed(); // read before the tail: the tail only grows
              long tail = SinkTestSupport.tail(store, STREAM);
              return allTasksRunning() && committed <= tail && tail < total;
            });
    long tailWhileFull = SinkTestSupport.tail(store, STREAM);
    assertThat(disk.usable()).as("free bytes on the full disk").isLessThanOrEqualTo(32 << 10);

    // Space comes back: the task resumes by itself (no restart, no REST call).
    disk.free();
    await("every record reaches the stream once space is freed")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> SinkTestSupport.tail(store, STREAM) >= total);
    await("the worker commits every offset").atMost(TIMEOUT).until(() -> committed() == total);
    assertThat(allTasksRunning()).as("tasks still running").isTrue();
    assertThat(tailWhileFull).as("stream tail while the disk was full").isLessThan(total);

    List<Message> stored = SinkTestSupport.readAll(store, STREAM);
    assertEveryRecordOnceByteForByte(stored, perPartition);

    cluster.deleteConnector(CONNECTOR);
    cluster.assertions().assertConnectorDoesNotExist(CONNECTOR, "connector deleted");
    // Reopened on its own (the worker's tasks released it): the same records, nothing torn.
    try (Storage reopened =
        await("the worker released the store")
            .atMost(TIMEOUT)
            .ignoreExceptions()
            .until(() -> QueueStores.open("file", SinkTestSupport.fileStore(store)), s -> true)) {
      assertThat(((FileStorage) reopened).recovery().logCuts()).as("torn tails").isEmpty();
      List<Message> again = new ArrayList<>();
      long next = reopened.queues().head(STREAM);
      while (next < reopened.queues().tail(STREAM)) {
        List<Message> batch = reopened.queues().readBatch(STREAM, next, 1000);
        again.addAll(batch);
        next = batch.get(batch.size() - 1).offset() + 1;
      }
      assertThat(again).as("the stream after a reopen").isEqualTo(stored);
    }
  }

  /** Records {@code [from, from + n)} of each partition (see {@link #record}). */
  private static void produce(int from, int n) throws Exception {
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<byte[], byte[]> producer = cluster.kafka().createProducer(cfg)) {
      for (int p = 0; p < PARTITIONS; p++) {
        for (int i = from; i < from + n; i++) {
          producer.send(record(p, i));
        }
      }
      producer.flush();
    }
  }

  /**
   * Record {@code i} of partition {@code p}, the i-th sent there (so at offset {@code i}): binary
   * key and a 1–3 KiB binary value drawn from a seed of its own, a repeated header and an empty
   * one, timestamp {@code T0 + i}.
   */
  private static ProducerRecord<byte[], byte[]> record(int p, int i) {
    Random rnd = new Random(p * 1_000_003L + i);
    byte[] key = new byte[8 + rnd.nextInt(24)];
    rnd.nextBytes(key);
    byte[] value = new byte[1024 + rnd.nextInt(2048)];
    rnd.nextBytes(value);
    byte[] h = new byte[1 + rnd.nextInt(16)];
    rnd.nextBytes(h);
    RecordHeaders headers = new RecordHeaders();
    headers.add("tag", h);
    headers.add("tag", ("p" + p + "-" + i).getBytes(StandardCharsets.UTF_8));
    headers.add("empty", new byte[0]);
    return new ProducerRecord<>(TOPIC, p, T0 + i, key, value, headers);
  }

  /**
   * Each partition's records appear exactly once, in offset order, each equal byte for byte to the
   * record sent.
   */
  private static void assertEveryRecordOnceByteForByte(List<Message> stored, int perPartition) {
    Map<Integer, Integer> seen = new HashMap<>();
    for (Message m : stored) {
      assertThat(m.properties()).containsEntry(KafkaCoordinates.TOPIC, TOPIC);
      int p = Integer.parseInt(m.properties().get(KafkaCoordinates.PARTITION));
      long offset = Long.parseLong(m.properties().get(KafkaCoordinates.OFFSET));
      int expectedOffset = seen.merge(p, 1, Integer::sum) - 1;
      assertThat(offset)
          .as("partition %d: the next offset stored (none lost, none twice)", p)
          .isEqualTo(expectedOffset);
      ProducerRecord<byte[], byte[]> sent = record(p, (int) offset);
      String what = TOPIC + "-" + p + "@" + offset;
      assertThat(m.key()).as("key of %s", what).isEqualTo(sent.key());
      assertThat(m.value()).as("value of %s", what).isEqualTo(sent.value());
      List<Header> headers = new ArrayList<>();
      sent.headers().forEach(h -> headers.add(Header.of(h.key(), h.value())));
      assertThat(m.headers()).as("headers of %s", what).isEqualTo(headers);
      assertThat(m.timestamp()).as("timestamp of %s", what).isEqualTo(sent.timestamp());
      assertThat(m.timestampType())
          .as("timestamp type of %s", what)
          .isEqualTo(TimestampType.CREATE_TIME);
    }
    for (int p = 0; p < PARTITIONS; p++) {
      assertThat(seen.get(p))
          .as("records of partition %d in the stream", p)
          .isEqualTo(perPartition);
    }
    assertThat(stored).hasSize(PARTITIONS * perPartition);
  }

  /** The sum of the offsets the worker committed for the connector. */
  private static long committed() throws Exception {
    return admin
        .listConsumerGroupOffsets("connect-" + CONNECTOR)
        .partitionsToOffsetAndMetadata()
        .get()
        .values()
        .stream()
        .mapToLong(OffsetAndMetadata::offset)
        .sum();
  }

  private static boolean allTasksRunning() {
    ConnectorStateInfo status = cluster.connectorStatus(CONNECTOR);
    return status.tasks().size() == PARTITIONS
        && status.tasks().stream().allMatch(t -> "RUNNING".equals(t.state()));
  }

  private static long endOffset(int p) throws Exception {
    TopicPartition tp = new TopicPartition(TOPIC, p);
    return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset();
  }
}
