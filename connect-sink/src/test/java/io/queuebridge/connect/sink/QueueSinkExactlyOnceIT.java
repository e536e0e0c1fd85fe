package io.queuebridge.connect.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly once into the stream while the flow is disturbed: task restarts, the consumer group's
 * offsets thrown back to zero (as after a crash between the durable append and the offset commit),
 * a worker leaving, a worker joining and partitions being added. Afterwards every record is in the
 * stream exactly once, checked record by record.
 */
class QueueSinkExactlyOnceIT {
  private static final Duration TIMEOUT = Duration.ofMinutes(6);
  private static final String TOPIC = "eos";
  private static final String STREAM = "eos-stream";
  private static final String CONNECTOR = "eos-sink";
  private static final int PHASE = 20_000;

  @TempDir static Path store;
  private static EmbeddedConnectCluster cluster;

  @BeforeAll
  static void start() {
    cluster = SinkTestSupport.startCluster("sink-eos", 2);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.stop();
    }
  }

  @Test
  void everyRecordExactlyOnceThroughRestartsRewindsAndRebalances() throws Exception {
    cluster.kafka().createTopic(TOPIC, 4);
    Map<String, String> props = SinkTestSupport.sinkProps(store, STREAM, TOPIC, 3);
    props.put("consumer.override.max.poll.records", "250");
    props.put("consumer.override.metadata.max.age.ms", "1000");
    cluster.configureConnector(CONNECTOR, props);
    cluster.assertions().assertConnectorAndAtLeastNumTasksAreRunning(CONNECTOR, 1, "sink running");

    Map<String, Object> producerProps = new HashMap<>();
    producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
    // Not idempotent: the embedded broker has answered an idempotent producer with
    // OUT_OF_ORDER_SEQUENCE_NUMBER after partitions were added, stalling the input. A retried
    // send may then duplicate an input record; such a duplicate has its own Kafka coordinates,
    // and exactly once is judged by coordinates below.
    producerProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
    producerProps.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
    producerProps.put(ProducerConfig.LINGER_MS_CONFIG, 5);
    int produced = 0;
    try (KafkaProducer<byte[], byte[]> producer = cluster.kafka().createProducer(producerProps);
        Admin admin = cluster.kafka().createAdminClient()) {
      // Phase 1: restart every task while the first records are in flight.
      produced = produce(producer, produced, PHASE, 4);
      awaitTailAtLeast(PHASE / 4);
      cluster.restartConnectorAndTasks(CONNECTOR, false, true, false);

      // Phase 2: throw the consumer group's offsets back to zero, as if every commit had been
      // lost in a crash; the stream's watermarks must win.
      produced = produce(producer, produced, PHASE, 4);
      awaitTailAtLeast(PHASE + PHASE / 4);
      cluster.stopConnector(CONNECTOR);
      cluster.assertions().assertConnectorIsStopped(CONNECTOR, "stopped to rewind offsets");
      Map<TopicPartition, OffsetAndMetadata> zero = new HashMap<>();
      for (int p = 0; p < 4; p++) {
        zero.put(new TopicPartition(TOPIC, p), new OffsetAndMetadata(0));
      }
      admin.alterConsumerGroupOffsets("connect-" + CONNECTOR, zero).all().get();
      cluster.resumeConnector(CONNECTOR);
      cluster.assertions().assertConnectorAndAtLeastNumTasksAreRunning(CONNECTOR, 1, "resumed");

      // Phase 3: a worker leaves mid-flow; its tasks move to the other one.
      produced = produce(producer, produced, PHASE, 4);
      awaitTailAtLeast(2 * PHASE + PHASE / 4);
      cluster.removeWorker();

      // Phase 4: a worker joins and the topic grows from 4 to 6 partitions.
      produced = produce(producer, produced, PHASE, 4);
      cluster.addWorker();
      admin.createPartitions(Map.of(TOPIC, NewPartitions.increaseTo(6))).all().get();
    }
    // A fresh producer for the grown topic: an idempotent producer that learns of new
    // partitions mid-stream can stall on OUT_OF_ORDER_SEQUENCE_NUMBER for them.
    try (KafkaProducer<byte[], byte[]> producer = cluster.kafka().createProducer(producerProps)) {
      produced = produce(producer, produced, PHASE, 6);
    }

    int sent = produced;
    long total;
    try (Admin admin = cluster.kafka().createAdminClient()) {
      Map<TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> latest = new HashMap<>();
      for (int p = 0; p < 6; p++) {
        latest.put(
            new TopicPartition(TOPIC, p), org.apache.kafka.clients.admin.OffsetSpec.latest());
      }
      total =
          admin.listOffsets(latest).all().get().values().stream()
              .mapToLong(
                  org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo::offset)
              .sum();
    }
    assertThat(total).as("records in the topic").isGreaterThanOrEqualTo(sent);
    awaitTailAtLeast(total);
    System.out.println(java.time.Instant.now() + " stream holds all " + total + " records");
    try (Admin admin = cluster.kafka().createAdminClient()) {
      await("the sink committed every offset")
          .atMost(TIMEOUT)
          .until(
              () ->
                  admin
                          .listConsumerGroupOffsets("connect-" + CONNECTOR)
                          .partitionsToOffsetAndMetadata()
                          .get()
                          .values()
                          .stream()
                          .mapToLong(OffsetAndMetadata::offset)
                          .sum()
                      == total);
    }
    System.out.println(java.time.Instant.now() + " the sink committed every offset");
    List<Message> stored = SinkTestSupport.readAll(store, STREAM);
    Set<String> values = new HashSet<>();
    Set<String> coordinates = new HashSet<>();
    for (Message m : stored) {
      values.add(new String(m.value(), StandardCharsets.UTF_8));
      assertThat(
              coordinates.add(
                  m.properties().get(KafkaCoordinates.PARTITION)
                      + "@"
                      + m.properties().get(KafkaCoordinates.OFFSET)))
          .as("Kafka record %s stored twice", m.properties())
          .isTrue();
    }
    // One hash lookup per record (AssertJ's contains() scans a collection linearly: with 100,000
    // records, a per-record contains() took minutes).
    List<String> lost =
        IntStream.range(0, sent)
            .mapToObj(i -> "rec-" + i)
            .filter(v -> !values.contains(v))
            .toList();
    assertThat(lost).as("records lost").isEmpty();
    assertThat(stored).as("one message per Kafka record").hasSize((int) total);
    // Deleting the connector first lets the cluster stop quickly (no task moves while workers
    // shut down one by one).
    System.out.println(java.time.Instant.now() + " every record checked; deleting the connector");
    cluster.deleteConnector(CONNECTOR);
    cluster.assertions().assertConnectorDoesNotExist(CONNECTOR, "connector deleted");
    System.out.println(java.time.Instant.now() + " connector deleted");
  }

  private static int produce(KafkaProducer<byte[], byte[]> producer, int from, int n, int parts)
      throws Exception {
    for (int i = from; i < from + n; i++) {
      producer.send(
          new ProducerRecord<>(
              TOPIC,
              i % parts,
              ("k" + i).getBytes(StandardCharsets.UTF_8),
              ("rec-" + i).getBytes(StandardCharsets.UTF_8)));
    }
    producer.flush();
    return from + n;
  }

  private static void awaitTailAtLeast(long n) {
    await("stream holds at least " + n)
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(200))
        .until(() -> SinkTestSupport.tail(store, STREAM) >= n);
  }
}
