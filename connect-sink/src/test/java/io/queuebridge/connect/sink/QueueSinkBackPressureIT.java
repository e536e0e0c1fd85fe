package io.queuebridge.connect.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.SharedStores;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.QueueStore;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sink's retriable failures on a real broker and Connect worker: a classic queue at its {@code
 * maxDepth} and a durability barrier that fails after appending. Either way the task keeps running
 * (rewinds, pauses, resumes after {@code queue.retry.backoff.ms}) and every record ends up in the
 * target exactly once, in order per partition, checked record by record.
 */
class QueueSinkBackPressureIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final int PARTITIONS = 2;
  private static final String BACKOFF_MS = "200";

  @TempDir static Path root;
  private static EmbeddedConnectCluster cluster;
  private static Admin admin;

  @BeforeAll
  static void start() {
    cluster = SinkTestSupport.startCluster("sink-backpressure", 1);
    admin = cluster.kafka().createAdminClient();
  }

  @AfterAll
  static void stop() {
    if (admin != null) {
      admin.close();
    }
    if (cluster != null) {
      cluster.stop();
    }
  }

  @AfterEach
  void healTheFlakyStore() {
    FlakyStoreProvider.FAIL_AFTER_APPEND.set(0);
  }

  @Test
  void aFullQueuePausesTheTaskUntilConsumersMakeRoomAndNothingIsLostOrDuplicated()
      throws Exception {
    String topic = "bp.in";
    String work = "bp-work";
    String connector = "bp-sink";
    int maxDepth = 40;
    int perPartition = 150;
    Path dir = Files.createDirectories(root.resolve("file"));
    try (SharedStores.Lease lease = SharedStores.acquire("file", SinkTestSupport.fileStore(dir))) {
      lease
          .manager()
          .createQueue(QueueConfig.durable(work).topics(topic).maxDepth(maxDepth).build());
    }
    cluster.kafka().createTopic(topic, PARTITIONS);
    produce(topic, perPartition);

    // One task: the queue's depth check and the append are not atomic across writers, so two tasks
    // appending at once may together overshoot maxDepth (by up to a batch each); one writer may
    // not.
    Map<String, String> props = SinkTestSupport.sinkProps(dir, "bp-declared", topic, 1);
    props.put(QueueSinkConfig.QUEUE_ROUTING_CONFIG, "matching");
    props.put(QueueSinkConfig.RETRY_BACKOFF_MS_CONFIG, BACKOFF_MS);
    // Connect's default max.poll.records (500) is far above maxDepth: a put must be split, since
    // a classic queue takes a batch whole or not at all.
    cluster.configureConnector(connector, props);
    cluster.assertions().assertConnectorAndExactlyNumTasksAreRunning(connector, 1, "sink running");

    // Nobody consumes: the queue fills to its bound, and what is refused stays in Kafka; the
    // offsets the worker commits never pass what the queue holds.
    // (The committed offsets are read before the tail: the tail only grows meanwhile.)
    await("the queue is full and the rest of the records wait in Kafka")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(100))
        .until(() -> committed(connector) == tail(dir, work) && tail(dir, work) > 0);
    await("the task holds back without failing")
        .during(Duration.ofSeconds(3))
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(100))
        .until(
            () ->
                committed(connector) <= tail(dir, work)
                    && tail(dir, work) <= maxDepth
                    && allTasksRunning(connector, 1));

    // Consumers make room: read what is there and remove it, until everything has arrived.
    List<Message> received = new ArrayList<>();
    AtomicLong next = new AtomicLong();
    AtomicLong deepest = new AtomicLong();
    await("every record reaches the queue as consumers make room")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(50))
        .until(
            () ->
                withQueues(
                    dir,
                    q -> {
                      deepest.accumulateAndGet(q.count(work), Math::max);
                      List<Message> batch = q.readBatch(work, next.get(), 1000);
                      if (!batch.isEmpty()) {
                        received.addAll(batch);
                        next.set(batch.get(batch.size() - 1).offset() + 1);
                        q.truncate(work, next.get());
                      }
                      return received.size() >= PARTITIONS * perPartition;
                    }));
    assertThat(deepest.get()).as("deepest the queue ever was").isLessThanOrEqualTo(maxDepth);
    await("the worker commits every offset")
        .atMost(TIMEOUT)
        .until(() -> committed(connector) == (long) PARTITIONS * perPartition);
    assertThat(allTasksRunning(connector, 1)).as("tasks still running").isTrue();
    assertThat(SinkTestSupport.tail(dir, work))
        .as("nothing appended after the last record")
        .isEqualTo(next.get());
    assertEachRecordOnceInOrder(received, topic, perPartition);
    assertThat(SinkTestSupport.tail(dir, "bp-declared"))
        .as("the declared stream matches none")
        .isZero();
    cluster.deleteConnector(connector);
    cluster.assertions().assertConnectorDoesNotExist(connector, "connector deleted");
  }

  @Test
  void aFailedBarrierIsRewoundAndRetriedWithoutDuplicates() throws Exception {
    String topic = "flaky.in";
    String stream = "flaky-stream";
    String connector = "flaky-sink";
    int phase = 200; // records per partition per phase
    Path dir = Files.createDirectories(root.resolve("flaky"));
    cluster.kafka().createTopic(topic, PARTITIONS);
    Map<String, String> props = SinkTestSupport.sinkProps(dir, stream, topic, PARTITIONS);
    props.put(QueueSinkConfig.STORE_TYPE_CONFIG, "flaky");
    props.put(QueueSinkConfig.RETRY_BACKOFF_MS_CONFIG, BACKOFF_MS);
    props.put("consumer.override.max.poll.records", "50");
    cluster.configureConnector(connector, props);
    cluster
        .assertions()
        .assertConnectorAndExactlyNumTasksAreRunning(connector, PARTITIONS, "sink running");

    produce(topic, phase);
    await("the first records are durable")
        .atMost(TIMEOUT)
        .until(() -> flakyTail(dir, stream) == (long) PARTITIONS * phase);
    long skippedBefore = skippedTotal(connector);

    // The next three barriers append and then fail. Records keep streaming in until all three
    // have failed (a redelivery wholly below the watermark writes nothing, so it needs new ones).
    FlakyStoreProvider.FAIL_AFTER_APPEND.set(3);
    produce(topic, phase);
    await("three barriers failed after appending")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> {
              if (FlakyStoreProvider.FAIL_AFTER_APPEND.get() == 0) {
                return true;
              }
              produce(topic, 10);
              return false;
            });
    produce(topic, phase);

    long perPartition = endOffset(topic, 0);
    assertThat(endOffset(topic, 1)).as("records in partition 1").isEqualTo(perPartition);
    long total = PARTITIONS * perPartition;
    await("the worker commits every offset")
        .atMost(TIMEOUT)
        .until(() -> committed(connector) == total);
    assertThat(allTasksRunning(connector, PARTITIONS)).as("tasks still running").isTrue();
    List<Message> stored = SinkTestSupport.readAll("flaky", dir, stream);
    assertEachRecordOnceInOrder(stored, topic, perPartition);
    assertThat(skippedTotal(connector) - skippedBefore)
        .as("records redelivered after a failed barrier and skipped below the watermark")
        .isPositive();
    cluster.deleteConnector(connector);
    cluster.assertions().assertConnectorDoesNotExist(connector, "connector deleted");
  }

  /** {@code perPartition} records into each partition, value {@code "<partition>-<index>"}. */
  private static void produce(String topic, int perPartition) throws Exception {
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<byte[], byte[]> producer = cluster.kafka().createProducer(cfg)) {
      for (int p = 0; p < PARTITIONS; p++) {
        long first = endOffset(topic, p);
        for (long i = first; i < first + perPartition; i++) {
          producer.send(
              new ProducerRecord<>(
                  topic,
                  p,
                  ("k" + i).getBytes(StandardCharsets.UTF_8),
                  (p + "-" + i).getBytes(StandardCharsets.UTF_8)));
        }
      }
      producer.flush();
    }
  }

  /** The next offset of partition {@code p}: sends are numbered by the offset they will get. */
  private static long endOffset(String topic, int p) throws Exception {
    var tp = new org.apache.kafka.common.TopicPartition(topic, p);
    return admin
        .listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.latest()))
        .partitionResult(tp)
        .get()
        .offset();
  }

  /**
   * Each partition's records appear exactly once and in offset order (0 .. perPartition-1), each
   * with its own value, checked record by record.
   */
  private static void assertEachRecordOnceInOrder(
      List<Message> messages, String topic, long perPartition) {
    Map<Integer, List<Long>> offsets = new HashMap<>();
    for (Message m : messages) {
      assertThat(m.properties()).containsEntry(KafkaCoordinates.TOPIC, topic);
      int partition = Integer.parseInt(m.properties().get(KafkaCoordinates.PARTITION));
      long offset = Long.parseLong(m.properties().get(KafkaCoordinates.OFFSET));
      assertThat(new String(m.value(), StandardCharsets.UTF_8))
          .as("value of %s-%d@%d", topic, partition, offset)
          .isEqualTo(partition + "-" + offset);
      offsets.computeIfAbsent(partition, k -> new ArrayList<>()).add(offset);
    }
    List<Long> expected = LongStream.range(0, perPartition).boxed().toList();
    for (int p = 0; p < PARTITIONS; p++) {
      assertThat(offsets.get(p))
          .as("offsets of partition %d, in the order stored", p)
          .containsExactlyElementsOf(expected);
    }
    assertThat(offsets.keySet()).containsExactlyInAnyOrder(0, 1);
  }

  /** The sum of the offsets the worker committed for {@code connector}. */
  private static long committed(String connector) throws Exception {
    return admin
        .listConsumerGroupOffsets("connect-" + connector)
        .partitionsToOffsetAndMetadata()
        .get()
        .values()
        .stream()
        .mapToLong(OffsetAndMetadata::offset)
        .sum();
  }

  private static boolean allTasksRunning(String connector, int tasks) {
    ConnectorStateInfo status = cluster.connectorStatus(connector);
    return status.tasks().size() == tasks
        && status.tasks().stream().allMatch(t -> "RUNNING".equals(t.state()));
  }

  private interface QueueRead<T> {
    T apply(QueueStore queues);
  }

  /** Runs {@code read} on the file store at {@code dir}, shared with the worker in this JVM. */
  private static <T> T withQueues(Path dir, QueueRead<T> read) {
    try (SharedStores.Lease lease = SharedStores.acquire("file", SinkTestSupport.fileStore(dir))) {
      return read.apply(lease.storage().queues());
    }
  }

  private static long tail(Path dir, String queue) {
    return withQueues(dir, q -> q.tail(queue));
  }

  private static long flakyTail(Path dir, String stream) {
    try (SharedStores.Lease lease = SharedStores.acquire("flaky", SinkTestSupport.fileStore(dir))) {
      return lease.storage().queues().tail(stream);
    }
  }

  /** The sink tasks' {@code records-skipped-total} plugin metric, summed, read over JMX. */
  private static long skippedTotal(String connector) throws Exception {
    MBeanServer server = ManagementFactory.getPlatformMBeanServer();
    long sum = 0;
    int found = 0;
    for (ObjectName name : server.queryNames(new ObjectName("kafka.connect:*"), null)) {
      if (!connector.equals(name.getKeyProperty("connector"))) {
        continue;
      }
      try {
        Object v = server.getAttribute(name, "records-skipped-total");
        sum += ((Number) v).longValue();
        found++;
      } catch (javax.management.AttributeNotFoundException notThisOne) {
        // another metric group of the same connector
      }
    }
    assertThat(found).as("sink task metric beans of %s", connector).isEqualTo(PARTITIONS);
    return sum;
  }
}
