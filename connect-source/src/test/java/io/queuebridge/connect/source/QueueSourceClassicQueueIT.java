package io.queuebridge.connect.source;

import static io.queuebridge.connect.source.SourceTestSupport.append;
import static io.queuebridge.connect.source.SourceTestSupport.bytes;
import static io.queuebridge.connect.source.SourceTestSupport.readAllFlat;
import static io.queuebridge.connect.source.SourceTestSupport.string;
import static io.queuebridge.connect.source.SourceTestSupport.values;
import static io.queuebridge.connect.source.SourceTestSupport.valuesOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.SharedStores;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.group.GroupMetrics;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.PendingEntry;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Classic queues through the source: claims renewed while Kafka is slow (no redelivery), and poison
 * messages dead-lettered to the queue's DLQ and the Kafka dead-letter topic.
 */
class QueueSourceClassicQueueIT {
  private static final Duration TIMEOUT = Duration.ofMinutes(2);

  @TempDir static Path store;
  private static EmbeddedConnectCluster cluster;
  private static SharedStores.Lease lease;
  private static ConsumerGroups groups;

  @BeforeAll
  static void start() {
    lease = SourceTestSupport.openStore(store);
    groups = lease.manager().consumerGroups();
    cluster = SourceTestSupport.startCluster("source-classic", 1, false);
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

  private static Optional<ConsumerGroupState> group(String queue, String connector) {
    return groups.group(queue, "connect-" + connector);
  }

  @Test
  void claimsOfRecordsKafkaIsSlowToAcceptAreRenewedAndNeverRedelivered() {
    String queue = "slow";
    String topic = "out-slow";
    // A short delivery timeout (the queue's visibility timeout, BEHAVIOUR L-LIMITS) keeps the test
    // quick.
    lease
        .manager()
        .createQueue(
            QueueConfig.durable(queue)
                .maxDepth(10_000_000)
                .deliveryTimeout(Duration.ofSeconds(8))
                .build());
    append(lease, queue, values("slow", 0, 40));
    cluster.kafka().createTopic(topic, 1);
    Duration configured = groups.settings().visibilityTimeout();
    Duration visibility =
        configured.isZero() ? lease.manager().getQueue(queue).deliveryTimeout() : configured;
    assertThat(visibility).as("the queue's visibility timeout").isPositive();
    long lingerMs = visibility.toMillis() + 8_000;
    GroupMetrics before = groups.metrics();

    Map<String, String> props = SourceTestSupport.sourceProps(store, 1);
    props.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, queue);
    props.put(QueueSourceConfig.TOPIC_CONFIG, topic);
    // Kafka holds every record for longer than the visibility timeout before sending it.
    props.put("producer.override.linger.ms", Long.toString(lingerMs));
    props.put("producer.override.batch.size", Integer.toString(1 << 20));
    cluster.configureConnector("slow", props);

    List<Instant> firstClaims = new java.util.ArrayList<>();
    await("every claim renewed past the original visibility timeout while Kafka holds the records")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .until(
            () -> {
              List<PendingEntry> pending =
                  group(queue, "slow").map(ConsumerGroupState::pending).orElse(List.of());
              boolean renewed =
                  pending.size() == 40
                      && pending.stream()
                          .allMatch(
                              e ->
                                  e.visibleAt().isAfter(e.claimedAt().plus(visibility))
                                      && e.deliveryCount() == 1);
              if (renewed) {
                pending.forEach(e -> firstClaims.add(e.firstClaimedAt()));
              }
              return renewed;
            });
    assertThat(SourceTestSupport.endOffsetSum(cluster, topic, false))
        .as("Kafka has not accepted anything yet")
        .isZero();

    await("Kafka accepts the records after linger.ms")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .until(() -> SourceTestSupport.endOffsetSum(cluster, topic, false) >= 40);
    await("every delivery acknowledged")
        .atMost(TIMEOUT)
        .until(() -> group(queue, "slow").map(g -> g.pending().isEmpty()).orElse(false));
    Instant earliestClaim = firstClaims.stream().min(Instant::compareTo).orElseThrow();
    assertThat(Duration.between(earliestClaim, Instant.now()))
        .as("the messages stayed claimed for longer than the visibility timeout")
        .isGreaterThan(visibility);
    assertThat(valuesOf(readAllFlat(cluster, topic, false)))
        .as("each message exactly once, in queue order")
        .containsExactlyElementsOf(values("slow", 0, 40));
    GroupMetrics after = groups.metrics();
    assertThat(after.stealSuccesses() - before.stealSuccesses())
        .as("no claim was taken over (no redelivery)")
        .isZero();
    assertThat(group(queue, "slow").orElseThrow().committed()).isEqualTo(40);
    cluster.deleteConnector("slow");
  }

  @Test
  void poisonMessagesEndInTheQueueDlqAndTheKafkaDlqTopicWithTheirReason() {
    String queue = "poison";
    String connector = "poison";
    String group = "connect-" + connector;
    SourceTestSupport.createClassic(lease, queue);
    // offset 0: claimed once by another member of the connector's group and given back, so the
    // connector's claim is its second delivery (max.deliveries=1 makes that poison)
    append(lease, queue, List.of("redelivered"));
    groups.join(queue, null, group, "intruder", CursorOption.earliest(GroupMode.QUEUE));
    GroupDelivery first = groups.claimNext(queue, group, "intruder").orElseThrow();
    first.nack(Duration.ZERO);
    groups.leave(queue, null, group, "intruder");
    append(lease, queue, List.of("ok-1"));
    // offset 2: restore mode cannot write it back to partition "oops"
    lease
        .storage()
        .queues()
        .append(
            queue,
            Message.builder()
                .topic("test/poison")
                .key(bytes("k-bad"))
                .value(bytes("bad-partition"))
                .property(KafkaCoordinates.PARTITION, "oops")
                .createdAt(Instant.now())
                .build());
    append(lease, queue, List.of("ok-2"));

    cluster.kafka().createTopic("out-poison", 1);
    cluster.kafka().createTopic("poison-dlq", 1);
    Map<String, String> props = SourceTestSupport.sourceProps(store, 1);
    props.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, queue);
    props.put(QueueSourceConfig.TOPIC_CONFIG, "out-poison");
    props.put(QueueSourceConfig.RESTORE_MODE_CONFIG, "true");
    props.put(QueueSourceConfig.MAX_DELIVERIES_CONFIG, "1");
    props.put(QueueSourceConfig.KAFKA_DLQ_TOPIC_CONFIG, "poison-dlq");
    cluster.configureConnector(connector, props);

    await("good records delivered, poison ones in the Kafka DLQ")
        .atMost(TIMEOUT)
        .until(
            () ->
                SourceTestSupport.endOffsetSum(cluster, "out-poison", false) >= 2
                    && SourceTestSupport.endOffsetSum(cluster, "poison-dlq", false) >= 2);
    assertThat(valuesOf(readAllFlat(cluster, "out-poison", false)))
        .containsExactlyInAnyOrder("ok-1", "ok-2");
    List<ConsumerRecord<byte[], byte[]>> dead = readAllFlat(cluster, "poison-dlq", false);
    assertThat(dead).hasSize(2);
    ConsumerRecord<byte[], byte[]> redelivered = byValue(dead, "redelivered");
    assertThat(string(redelivered.key())).isEqualTo("k-redelivered");
    assertThat(header(redelivered, RecordFactory.REASON_HEADER))
        .isEqualTo("delivered 2 times, more than max.deliveries=1");
    assertThat(header(redelivered, RecordFactory.QUEUE_HEADER)).isEqualTo(queue);
    assertThat(header(redelivered, RecordFactory.OFFSET_HEADER)).isEqualTo("0");
    assertThat(header(redelivered, RecordFactory.DELIVERY_COUNT_HEADER)).isEqualTo("2");
    ConsumerRecord<byte[], byte[]> badPartition = byValue(dead, "bad-partition");
    assertThat(header(badPartition, RecordFactory.REASON_HEADER))
        .contains("restore mode")
        .contains("'oops'");
    assertThat(header(badPartition, RecordFactory.OFFSET_HEADER)).isEqualTo("2");

    String dlq = groups.deadLetterQueue(lease.manager().getQueue(queue));
    await("both poison messages in the queue's DLQ " + dlq)
        .atMost(TIMEOUT)
        .until(() -> queueExists(dlq) && lease.storage().queues().tail(dlq) == 2);
    List<Message> deadLetters = lease.storage().queues().readBatch(dlq, 0, 10);
    assertThat(deadLetters)
        .extracting(m -> m.properties().get(MessageProperties.DLQ_REASON))
        .containsExactlyInAnyOrder(
            "rejected: delivered 2 times, more than max.deliveries=1",
            "rejected: " + header(badPartition, RecordFactory.REASON_HEADER));
    assertThat(deadLetters)
        .extracting(m -> string(m.value()))
        .containsExactlyInAnyOrder("redelivered", "bad-partition");
    await("nothing left pending")
        .atMost(TIMEOUT)
        .until(() -> group(queue, connector).map(g -> g.pending().isEmpty()).orElse(false));
    cluster.deleteConnector(connector);
  }

  private static boolean queueExists(String name) {
    return lease.manager().listQueues().stream().anyMatch(q -> q.name().equals(name));
  }

  private static ConsumerRecord<byte[], byte[]> byValue(
      List<ConsumerRecord<byte[], byte[]>> records, String value) {
    return records.stream()
        .filter(r -> value.equals(string(r.value())))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no record with value " + value));
  }

  private static String header(ConsumerRecord<byte[], byte[]> r, String key) {
    var h = r.headers().lastHeader(key);
    return h == null ? null : string(h.value());
  }
}
