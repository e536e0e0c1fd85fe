package io.queuebridge.connect.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.SharedStores;
import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.RetentionPolicy;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.TimestampType;
import io.queuebridge.core.store.ConsumerGroupState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.SinkConnectorConfig;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfos;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sink connector on a real broker and Connect worker: mapping, validation, errors. */
class QueueSinkConnectorIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(90);

  @TempDir static Path store;
  private static EmbeddedConnectCluster cluster;

  @BeforeAll
  static void start() {
    cluster = SinkTestSupport.startCluster("sink-it", 1);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.stop();
    }
  }

  private static KafkaProducer<byte[], byte[]> producer() {
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 4 * 1024 * 1024);
    cfg.put(ProducerConfig.ACKS_CONFIG, "all");
    return cluster.kafka().createProducer(cfg);
  }

  @Test
  void recordsOfEveryShapeArriveByteIdenticalWithCoordinates() throws Exception {
    String topic = "shapes";
    cluster.kafka().createTopic(topic, 2, 1, Map.of("max.message.bytes", "4194304"));
    byte[] big = new byte[1024 * 1024];
    new Random(7).nextBytes(big);
    List<ProducerRecord<byte[], byte[]>> sent = new ArrayList<>();
    sent.add(new ProducerRecord<>(topic, 0, 1_000L, bytes("k1"), bytes("v1")));
    sent.add(new ProducerRecord<>(topic, 0, 1_001L, null, bytes("no key")));
    sent.add(new ProducerRecord<>(topic, 1, 1_002L, bytes("tombstone"), (byte[]) null));
    sent.add(new ProducerRecord<>(topic, 1, 1_003L, bytes("empty"), new byte[0]));
    ProducerRecord<byte[], byte[]> withHeaders =
        new ProducerRecord<>(topic, 0, 1_004L, bytes("h"), bytes("headers"));
    withHeaders.headers().add(new RecordHeader("rep", new byte[] {0, 1, 2, (byte) 255}));
    withHeaders.headers().add(new RecordHeader("other", bytes("x")));
    withHeaders.headers().add(new RecordHeader("rep", new byte[] {9}));
    withHeaders.headers().add(new RecordHeader("nullvalue", (byte[]) null));
    sent.add(withHeaders);
    sent.add(new ProducerRecord<>(topic, 1, 1_005L, bytes("big"), big));
    List<RecordMetadata> metas = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> p = producer()) {
      for (ProducerRecord<byte[], byte[]> r : sent) {
        metas.add(p.send(r).get());
      }
    }

    Map<String, String> props = SinkTestSupport.sinkProps(store, "shapes-stream", topic, 1);
    props.put("consumer.override.max.partition.fetch.bytes", "4194304");
    cluster.configureConnector("shapes", props);
    await("all records in the stream")
        .atMost(TIMEOUT)
        .until(() -> SinkTestSupport.tail(store, "shapes-stream") == sent.size());

    List<Message> stored = SinkTestSupport.readAll(store, "shapes-stream");
    assertThat(stored).hasSize(sent.size());
    for (int i = 0; i < sent.size(); i++) {
      ProducerRecord<byte[], byte[]> in = sent.get(i);
      RecordMetadata meta = metas.get(i);
      Message out =
          stored.stream()
              .filter(
                  m ->
                      m.properties().get(KafkaCoordinates.PARTITION).equals("" + meta.partition())
                          && m.properties().get(KafkaCoordinates.OFFSET).equals("" + meta.offset()))
              .findFirst()
              .orElseThrow();
      assertThat(out.key()).as("key of record %d", i).isEqualTo(in.key());
      assertThat(out.value()).as("value of record %d", i).isEqualTo(in.value());
      assertThat(out.topic()).isEqualTo(topic);
      assertThat(out.properties()).containsEntry(KafkaCoordinates.TOPIC, topic);
      assertThat(out.timestamp()).isEqualTo(in.timestamp());
      assertThat(out.timestampType()).isEqualTo(TimestampType.CREATE_TIME);
      List<Header> expectedHeaders =
          Arrays.stream(in.headers().toArray()).map(h -> Header.of(h.key(), h.value())).toList();
      assertThat(out.headers()).as("headers of record %d", i).isEqualTo(expectedHeaders);
    }
    cluster.deleteConnector("shapes");
  }

  @Test
  void validateReportsPerFieldErrors() {
    Map<String, String> props = SinkTestSupport.sinkProps(store, "x", "t", 1);
    props.remove(QueueSinkConfig.QUEUE_NAME_CONFIG);
    props.put(QueueSinkConfig.STORE_TYPE_CONFIG, "nosuchstore");
    props.put(QueueSinkConfig.QUEUE_RETENTION_BYTES_CONFIG, "-5");
    props.put(QueueSinkConfig.QUEUE_MAX_MESSAGE_BYTES_CONFIG, "0");
    props.put(QueueSinkConfig.QUEUE_ROUTING_CONFIG, "sideways");
    ConfigInfos infos =
        cluster.validateConnectorConfig(QueueSinkConnector.class.getSimpleName(), props);
    Map<String, List<String>> errors = errorsByKey(infos);
    assertThat(errors.get(QueueSinkConfig.QUEUE_NAME_CONFIG)).isNotEmpty();
    assertThat(errors.get(QueueSinkConfig.STORE_TYPE_CONFIG))
        .anySatisfy(e -> assertThat(e).contains("nosuchstore").contains("file"));
    assertThat(errors.get(QueueSinkConfig.QUEUE_RETENTION_BYTES_CONFIG))
        .anySatisfy(e -> assertThat(e).contains("-5"));
    assertThat(errors.get(QueueSinkConfig.QUEUE_MAX_MESSAGE_BYTES_CONFIG)).isNotEmpty();
    assertThat(errors.get(QueueSinkConfig.QUEUE_ROUTING_CONFIG))
        .anySatisfy(e -> assertThat(e).contains("sideways"));

    Map<String, String> missingPath = SinkTestSupport.sinkProps(store, "x", "t", 1);
    missingPath.remove(QueueSinkConfig.STORE_PATH_CONFIG);
    assertThat(
            errorsByKey(
                    cluster.validateConnectorConfig(
                        QueueSinkConnector.class.getSimpleName(), missingPath))
                .get(QueueSinkConfig.STORE_PATH_CONFIG))
        .as("file store without a path")
        .isNotEmpty();
  }

  @Test
  void contractDriftFailsValidationAndTaskAndKeepsData() throws Exception {
    String topic = "drift";
    cluster.kafka().createTopic(topic, 1);
    Map<String, String> props = SinkTestSupport.sinkProps(store, "drift-stream", topic, 1);
    props.put(QueueSinkConfig.QUEUE_RETENTION_MS_CONFIG, "3600000");
    cluster.configureConnector("drift", props);
    for (int i = 0; i < 10; i++) {
      cluster.kafka().produce(topic, "k" + i, "v" + i);
    }
    await().atMost(TIMEOUT).until(() -> SinkTestSupport.tail(store, "drift-stream") == 10);
    cluster.deleteConnector("drift");
    cluster.assertions().assertConnectorDoesNotExist("drift", "connector deleted");

    props.put(QueueSinkConfig.QUEUE_RETENTION_MS_CONFIG, "60000");
    ConfigInfos infos =
        cluster.validateConnectorConfig(QueueSinkConnector.class.getSimpleName(), props);
    assertThat(errorsByKey(infos).get(QueueSinkConfig.QUEUE_RETENTION_MS_CONFIG))
        .anySatisfy(
            e -> assertThat(e).contains("retention.max_age").contains("PT1H").contains("PT1M"));

    // Drift behind the connector's back (an operator editing the store directly), then restart
    // the task: it must fail naming field, stored and configured values, and leave the stored
    // stream as it is.
    props.put(QueueSinkConfig.QUEUE_RETENTION_MS_CONFIG, "3600000");
    cluster.configureConnector("drift2", props);
    cluster
        .assertions()
        .assertConnectorAndExactlyNumTasksAreRunning("drift2", 1, "matching config runs");
    try (SharedStores.Lease lease =
        SharedStores.acquire("file", SinkTestSupport.fileStore(store))) {
      QueueConfig stored = lease.storage().queues().getQueue("drift-stream");
      lease
          .storage()
          .queues()
          .updateQueue(
              stored.toBuilder().retention(new RetentionPolicy(Duration.ofHours(2), 0, 0)).build());
    }
    cluster.restartTask("drift2", 0);
    await("task fails on drift")
        .atMost(TIMEOUT)
        .until(
            () ->
                cluster.connectorStatus("drift2").tasks().stream()
                    .anyMatch(t -> "FAILED".equals(t.state())));
    assertThat(cluster.connectorStatus("drift2").tasks().get(0).trace())
        .contains("retention.max_age")
        .contains("PT2H")
        .contains("PT1H");
    assertThat(SinkTestSupport.readAll(store, "drift-stream")).hasSize(10);
    try (SharedStores.Lease lease =
        SharedStores.acquire("file", SinkTestSupport.fileStore(store))) {
      assertThat(lease.storage().queues().getQueue("drift-stream").retention().retentionTime())
          .isEqualTo(Duration.ofHours(2));
    }
    cluster.deleteConnector("drift2");
  }

  @Test
  void oversizeRecordGoesToDeadLetterTopicUnderToleranceAll() throws Exception {
    String topic = "oversize-dlq";
    cluster.kafka().createTopic(topic, 1);
    Map<String, String> props = SinkTestSupport.sinkProps(store, "oversize-dlq-stream", topic, 1);
    props.put(QueueSinkConfig.QUEUE_MAX_MESSAGE_BYTES_CONFIG, "100");
    props.put(ConnectorConfig.ERRORS_TOLERANCE_CONFIG, "all");
    props.put(SinkConnectorConfig.DLQ_TOPIC_NAME_CONFIG, "oversize-dead");
    props.put(SinkConnectorConfig.DLQ_TOPIC_REPLICATION_FACTOR_CONFIG, "1");
    props.put(SinkConnectorConfig.DLQ_CONTEXT_HEADERS_ENABLE_CONFIG, "true");
    cluster.configureConnector("oversize-dlq", props);
    cluster.kafka().produce(topic, "a", "small-1");
    cluster.kafka().produce(topic, "b", "x".repeat(500));
    cluster.kafka().produce(topic, "c", "small-2");

    ConsumerRecords<byte[], byte[]> dead =
        cluster.kafka().consume(1, TIMEOUT.toMillis(), "oversize-dead");
    ConsumerRecord<byte[], byte[]> d = dead.iterator().next();
    assertThat(new String(d.key(), StandardCharsets.UTF_8)).isEqualTo("b");
    assertThat(
            new String(
                d.headers().lastHeader("__connect.errors.exception.message").value(),
                StandardCharsets.UTF_8))
        .contains("exceeds the maximum message size");
    await().atMost(TIMEOUT).until(() -> SinkTestSupport.tail(store, "oversize-dlq-stream") == 2);
    assertThat(SinkTestSupport.readAll(store, "oversize-dlq-stream"))
        .extracting(m -> new String(m.value(), StandardCharsets.UTF_8))
        .containsExactly("small-1", "small-2");
    cluster.deleteConnector("oversize-dlq");
  }

  @Test
  void oversizeRecordFailsTaskWithoutToleranceAndKeepsEarlierRecords() throws Exception {
    String topic = "oversize-fail";
    cluster.kafka().createTopic(topic, 1);
    Map<String, String> props = SinkTestSupport.sinkProps(store, "oversize-fail-stream", topic, 1);
    props.put(QueueSinkConfig.QUEUE_MAX_MESSAGE_BYTES_CONFIG, "100");
    cluster.kafka().produce(topic, "a", "small-1");
    cluster.configureConnector("oversize-fail", props);
    await().atMost(TIMEOUT).until(() -> SinkTestSupport.tail(store, "oversize-fail-stream") == 1);
    cluster.kafka().produce(topic, "b", "x".repeat(500));
    await("task fails")
        .atMost(TIMEOUT)
        .until(
            () -> {
              ConnectorStateInfo s = cluster.connectorStatus("oversize-fail");
              return s.tasks().stream().anyMatch(t -> "FAILED".equals(t.state()));
            });
    String trace = cluster.connectorStatus("oversize-fail").tasks().get(0).trace();
    assertThat(trace).contains("oversize-fail-0@1").contains("exceeds the maximum message size");
    assertThat(SinkTestSupport.readAll(store, "oversize-fail-stream")).hasSize(1);
    cluster.deleteConnector("oversize-fail");
  }

  @Test
  void topicsRegexCapturesSeveralTopics() {
    for (String t : List.of("rx.a", "rx.b", "rx.c")) {
      cluster.kafka().createTopic(t, 1);
      for (int i = 0; i < 5; i++) {
        cluster.kafka().produce(t, t + "-" + i, "v");
      }
    }
    Map<String, String> props = SinkTestSupport.sinkProps(store, "regex-stream", "unused", 1);
    props.remove(SinkConnectorConfig.TOPICS_CONFIG);
    props.put(SinkConnectorConfig.TOPICS_REGEX_CONFIG, "rx\\..*");
    cluster.configureConnector("regex", props);
    await().atMost(TIMEOUT).until(() -> SinkTestSupport.tail(store, "regex-stream") == 15);
    assertThat(
            SinkTestSupport.readAll(store, "regex-stream").stream()
                .collect(Collectors.groupingBy(Message::topic, Collectors.counting())))
        .containsExactlyInAnyOrderEntriesOf(Map.of("rx.a", 5L, "rx.b", 5L, "rx.c", 5L));
    cluster.deleteConnector("regex");
  }

  @Test
  void matchingRoutingWritesEachRecordIntoEveryMatchingQueue() throws Exception {
    try (SharedStores.Lease lease =
        SharedStores.acquire("file", SinkTestSupport.fileStore(store))) {
      lease.manager().createQueue(QueueConfig.durable("m-orders").topics("m.orders").build());
      lease
          .manager()
          .createQueue(QueueConfig.durable("m-all").topics("m.orders", "m.payments").build());
    }
    for (String t : List.of("m.orders", "m.payments", "m.other")) {
      cluster.kafka().createTopic(t, 1);
      for (int i = 0; i < 5; i++) {
        cluster.kafka().produce(t, t + "-" + i, t + "-v" + i);
      }
    }
    Map<String, String> props =
        SinkTestSupport.sinkProps(store, "m-declared", "m.orders,m.payments,m.other", 1);
    props.put(QueueSinkConfig.QUEUE_ROUTING_CONFIG, "matching");
    cluster.configureConnector("matching", props);
    await().atMost(TIMEOUT).until(() -> SinkTestSupport.tail(store, "m-all") == 10);
    await().atMost(TIMEOUT).until(() -> SinkTestSupport.tail(store, "m-orders") == 5);
    assertThat(SinkTestSupport.readAll(store, "m-orders"))
        .extracting(m -> new String(m.value(), StandardCharsets.UTF_8))
        .containsExactly("m.orders-v0", "m.orders-v1", "m.orders-v2", "m.orders-v3", "m.orders-v4");
    assertThat(SinkTestSupport.readAll(store, "m-all"))
        .extracting(Message::topic)
        .containsOnly("m.orders", "m.payments");
    assertThat(SinkTestSupport.tail(store, "m-declared")).isZero();

    // A restart rewinds to the lowest watermark; nothing is written twice.
    cluster.restartConnectorAndTasks("matching", false, true, false);
    cluster.assertions().assertConnectorAndExactlyNumTasksAreRunning("matching", 1, "restarted");
    cluster.kafka().produce("m.orders", "late", "m.orders-late");
    await().atMost(TIMEOUT).until(() -> SinkTestSupport.tail(store, "m-orders") == 6);
    assertThat(SinkTestSupport.tail(store, "m-all")).isEqualTo(11);
    cluster.deleteConnector("matching");
  }

  /**
   * Delayed delivery from record headers into a classic queue ({@code queue.routing=matching}): a
   * record without a delay header is claimable as soon as it is written; one asking for a delay (3
   * s) or a due time (4 s ahead) is not claimable right after it was written, and is once due; a
   * malformed delay and one beyond the queue's maxDelay go to the dead-letter topic, naming the
   * record, the header, its value and what was expected, and hold nothing else back. Real time: the
   * worker's clock cannot be injected.
   */
  @Test
  void delayHeadersHoldRecordsBackInAClassicQueueUntilDueAndBadOnesGoToTheDeadLetterTopic()
      throws Exception {
    String topic = "delay.in";
    String queue = "delay-work";
    String connector = "delay";
    cluster.kafka().createTopic(topic, 1);
    try (SharedStores.Lease lease =
        SharedStores.acquire("file", SinkTestSupport.fileStore(store))) {
      QueueManager m = lease.manager();
      m.createQueue(
          QueueConfig.durable(queue).topics(topic).maxDelay(Duration.ofMinutes(1)).build());
      m.subscribe(queue, "", "delay-it", "g");
      Map<String, String> props = SinkTestSupport.sinkProps(store, "delay-declared", topic, 1);
      props.put(QueueSinkConfig.QUEUE_ROUTING_CONFIG, "matching");
      props.put(QueueSinkConfig.DELAY_HEADER_CONFIG, "x-delay-ms");
      props.put(QueueSinkConfig.DELIVER_AT_HEADER_CONFIG, "x-deliver-at-ms");
      props.put(ConnectorConfig.ERRORS_TOLERANCE_CONFIG, "all");
      props.put(SinkConnectorConfig.DLQ_TOPIC_NAME_CONFIG, "delay-dead");
      props.put(SinkConnectorConfig.DLQ_TOPIC_REPLICATION_FACTOR_CONFIG, "1");
      props.put(SinkConnectorConfig.DLQ_CONTEXT_HEADERS_ENABLE_CONFIG, "true");
      cluster.configureConnector(connector, props);

      long dueAt;
      try (KafkaProducer<byte[], byte[]> p = producer()) {
        p.send(record(topic, "plain", null, null)).get();
        await("the first record in the queue")
            .atMost(TIMEOUT)
            .until(() -> SinkTestSupport.tail(store, queue) == 1);
        assertThat(claimAndAck(m, queue))
            .as("no header: claimable at once")
            .containsExactly("plain");

        dueAt = System.currentTimeMillis() + 4_000;
        p.send(record(topic, "delayed", "x-delay-ms", "3000")).get();
        p.send(record(topic, "due", "x-deliver-at-ms", Long.toString(dueAt))).get();
        p.send(record(topic, "malformed", "x-delay-ms", "3s")).get();
        p.send(record(topic, "too-far", "x-delay-ms", "120000")).get();
        p.send(record(topic, "after", null, null)).get();
      }
      await("the good records in the queue")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(50))
          .until(() -> SinkTestSupport.tail(store, queue) == 4);
      List<String> claimedNow = claimAndAck(m, queue);
      Instant claimedBy = Instant.now();

      Map<String, Message> stored = new HashMap<>();
      for (Message msg : SinkTestSupport.readAll(store, queue)) {
        stored.put(new String(msg.value(), StandardCharsets.UTF_8), msg);
      }
      Message delayed = stored.get("delayed");
      Message due = stored.get("due");
      assertThat(due.deliverAt()).as("the header's time").isEqualTo(Instant.ofEpochMilli(dueAt));
      assertThat(Duration.between(delayed.createdAt(), delayed.deliverAt()))
          .as("3 s from the write")
          .isBetween(Duration.ofMillis(2_500), Duration.ofSeconds(3));
      assertThat(delayed.headers()).containsExactly(Header.of("x-delay-ms", "3000"));
      assertThat(stored.get("after").deliverAt()).isNull();
      assertThat(claimedBy)
          .as("the claim was made before either delayed record was due")
          .isBefore(delayed.deliverAt())
          .isBefore(due.deliverAt());
      assertThat(claimedNow).as("only the record without a delay").containsExactly("after");

      Map<String, Instant> claimedAt = new HashMap<>();
      await("each delayed record claimable once due")
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(100))
          .until(
              () -> {
                for (String v : claimAndAck(m, queue)) {
                  claimedAt.put(v, Instant.now());
                }
                return claimedAt.size() == 2;
              });
      assertThat(claimedAt).containsOnlyKeys("delayed", "due");
      assertThat(claimedAt.get("delayed")).isAfterOrEqualTo(delayed.deliverAt());
      assertThat(claimedAt.get("due")).isAfterOrEqualTo(due.deliverAt());
    }

    Map<String, String> deadLetters = new HashMap<>();
    for (ConsumerRecord<byte[], byte[]> d :
        cluster.kafka().consume(2, TIMEOUT.toMillis(), "delay-dead")) {
      deadLetters.put(
          new String(d.value(), StandardCharsets.UTF_8),
          new String(
              d.headers().lastHeader("__connect.errors.exception.message").value(),
              StandardCharsets.UTF_8));
    }
    assertThat(deadLetters).containsOnlyKeys("malformed", "too-far");
    assertThat(deadLetters.get("malformed"))
        .isEqualTo(
            "record delay.in-0@3: header 'x-delay-ms' (queue.delay.header) = '3s' is not a"
                + " decimal integer; expected the delay in milliseconds as a decimal integer (the"
                + " digits 0-9 only; 0 = none)");
    assertThat(deadLetters.get("too-far"))
        .isEqualTo(
            "record delay.in-0@4: header 'x-delay-ms' (queue.delay.header) = '120000': a delay"
                + " beyond the maxDelay of queue 'delay-work'; expected at most PT1M (60000 ms)");
    assertThat(SinkTestSupport.tail(store, "delay-declared")).isZero();
    cluster.deleteConnector(connector);
  }

  /**
   * Kafka's per-key order kept through to competing consumers ({@code queue.routing=matching} into
   * a classic queue with {@code ordering=key}): 3,000 records over 50 keys on a topic of 3
   * partitions (the key picks the partition, so each key's records sit in one partition in produce
   * order), written by 3 sink tasks while 4 members of one group claim, nack a few (with no delay)
   * and acknowledge (BEHAVIOUR Q-ORDER). The sink keeps the record key as the message key; at no
   * time are two messages of one key held at once (by two members, or by one in a batch), and every
   * key's messages are acknowledged in produce order. A member holds a key from its claim until
   * just before it settles the message. Real time: the worker's clock cannot be injected.
   */
  @Test
  void anOrderedQueueKeepsKafkasPerKeyOrderThroughToCompetingConsumers() throws Exception {
    String topic = "ordered.in";
    String queue = "ordered-work";
    String connector = "ordered";
    int partitions = 3;
    int keys = 50;
    int records = 3_000;
    int members = 4;
    cluster.kafka().createTopic(topic, partitions);
    await("a leader for every partition of " + topic)
        .atMost(TIMEOUT)
        .until(
            () ->
                cluster
                    .kafka()
                    .describeTopics(topic)
                    .get(topic)
                    .map(
                        d ->
                            d.partitions().size() == partitions
                                && d.partitions().stream().allMatch(p -> p.leader() != null))
                    .orElse(false));

    // Produced first: each key's sequence in produce order, and the partition each key went to.
    Map<String, List<Integer>> produced = new HashMap<>();
    Map<String, Set<Integer>> partitionsOfKey = new HashMap<>();
    Map<Integer, List<Long>> offsetsInSendOrder = new HashMap<>();
    Random random = new Random(11);
    try (KafkaProducer<byte[], byte[]> p = producer()) {
      List<Future<RecordMetadata>> sends = new ArrayList<>();
      List<String> keyOfSend = new ArrayList<>();
      for (int seq = 0; seq < records; seq++) {
        String key = "key-" + random.nextInt(keys);
        produced.computeIfAbsent(key, k -> new ArrayList<>()).add(seq);
        keyOfSend.add(key);
        sends.add(p.send(new ProducerRecord<>(topic, bytes(key), bytes(key + ":" + seq))));
      }
      p.flush();
      for (int i = 0; i < records; i++) {
        RecordMetadata meta = sends.get(i).get();
        partitionsOfKey
            .computeIfAbsent(keyOfSend.get(i), k -> new HashSet<>())
            .add(meta.partition());
        offsetsInSendOrder
            .computeIfAbsent(meta.partition(), k -> new ArrayList<>())
            .add(meta.offset());
      }
    }
    assertThat(partitionsOfKey).as("records of every key").hasSize(keys);
    assertThat(partitionsOfKey.values())
        .as("each key in one partition")
        .allMatch(s -> s.size() == 1);
    assertThat(offsetsInSendOrder).as("every partition holds some keys").hasSize(partitions);
    offsetsInSendOrder.forEach(
        (partition, offsets) ->
            assertThat(offsets)
                .as("partition %d: Kafka's order is the produce order, without gaps", partition)
                .isSorted()
                .doesNotHaveDuplicates()
                .hasSize((int) (offsets.get(offsets.size() - 1) - offsets.get(0) + 1)));

    try (SharedStores.Lease lease =
        SharedStores.acquire("file", SinkTestSupport.fileStore(store))) {
      QueueManager m = lease.manager();
      m.createQueue(
          QueueConfig.durable(queue)
              .topics(topic)
              .ordering(OrderingKey.MESSAGE_KEY)
              .retryPolicy(new RetryPolicy(1_000, Duration.ZERO, Duration.ZERO, 1.0, Duration.ZERO))
              .build());
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < members; i++) {
        ids.add("ordered-" + i);
        m.subscribe(queue, "", ids.get(i), "g");
      }
      long blockedBefore = m.consumerGroups().metrics().blocked();

      Map<String, List<Integer>> acked = new ConcurrentHashMap<>();
      Map<String, String> holders = new ConcurrentHashMap<>();
      List<String> violations = Collections.synchronizedList(new ArrayList<>());
      Map<String, AtomicInteger> ackedBy = new ConcurrentHashMap<>();
      AtomicInteger done = new AtomicInteger();
      AtomicInteger nacks = new AtomicInteger();
      AtomicBoolean stop = new AtomicBoolean();
      ExecutorService pool = Executors.newFixedThreadPool(members);
      List<Future<?>> workers = new ArrayList<>();
      try {
        for (int w = 0; w < members; w++) {
          String me = ids.get(w);
          Random r = new Random(w);
          ackedBy.put(me, new AtomicInteger());
          workers.add(
              pool.submit(
                  () -> {
                    while (!stop.get() && done.get() < records) {
                      long tail = lease.storage().queues().tail(queue);
                      List<GroupDelivery> batch = m.consumerGroups().claimBatch(queue, "g", me, 16);
                      if (batch.isEmpty()) {
                        // nothing free: wait for the next append, or a moment for a key to go
                        m.awaitAppend(queue, tail, Duration.ofMillis(5));
                        continue;
                      }
                      for (GroupDelivery d : batch) {
                        String key = new String(d.message().key(), StandardCharsets.UTF_8);
                        String other = holders.putIfAbsent(key, me + "@" + d.offset());
                        if (other != null) {
                          violations.add(
                              key + " held by " + other + " and " + me + "@" + d.offset());
                        }
                      }
                      for (GroupDelivery d : batch) {
                        String key = new String(d.message().key(), StandardCharsets.UTF_8);
                        String[] value =
                            new String(d.message().value(), StandardCharsets.UTF_8).split(":");
                        if (!value[0].equals(key)) {
                          violations.add(
                              "offset "
                                  + d.offset()
                                  + ": message key "
                                  + key
                                  + ", record key "
                                  + value[0]);
                        }
                        // let the key go before settling: the next holder may come at once
                        holders.remove(key, me + "@" + d.offset());
                        if (d.deliveryCount() < 3 && r.nextInt(25) == 0) {
                          nacks.incrementAndGet();
                          d.nack(Duration.ZERO);
                        } else {
                          acked
                              .computeIfAbsent(
                                  key, k -> Collections.synchronizedList(new ArrayList<>()))
                              .add(Integer.parseInt(value[1]));
                          d.ack();
                          ackedBy.get(me).incrementAndGet();
                          done.incrementAndGet();
                        }
                      }
                    }
                    return null;
                  }));
        }
        cluster.configureConnector(connector, orderedSinkProps(topic, partitions));

        await("every record acknowledged")
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> done.get() >= records || workers.stream().anyMatch(Future::isDone));
      } finally {
        stop.set(true);
        pool.shutdown();
      }
      for (Future<?> f : workers) {
        f.get(30, TimeUnit.SECONDS); // a worker's failure, if any
      }

      synchronized (violations) {
        assertThat(violations.size())
            .as(
                "messages of a key held twice at once, or record keys not kept; the first: %s",
                violations.subList(0, Math.min(10, violations.size())))
            .isZero();
      }
      assertThat(acked).as("each key's acknowledgements in produce order").isEqualTo(produced);
      assertThat(done.get()).isEqualTo(records);
      assertThat(nacks.get()).as("some messages were nacked and retried").isPositive();
      assertThat(m.consumerGroups().metrics().blocked() - blockedBefore)
          .as("later messages of a key held back while an earlier one was out")
          .isPositive();
      assertThat(ackedBy)
          .as("every member acknowledged some: the members competed")
          .allSatisfy((id, n) -> assertThat(n.get()).as(id).isPositive());
      ConsumerGroupState group = m.consumerGroups().group(queue, "g").orElseThrow();
      assertThat(group.pending()).as("nothing pending or blocked").isEmpty();
      assertThat(SinkTestSupport.tail(store, queue)).isEqualTo(records);
    }
    assertThat(SinkTestSupport.tail(store, "ordered-declared")).isZero();
    cluster.deleteConnector(connector);
  }

  /** Three tasks, matching routing, byte-exact: the ordered test's sink. */
  private static Map<String, String> orderedSinkProps(String topic, int tasks) {
    Map<String, String> props = SinkTestSupport.sinkProps(store, "ordered-declared", topic, tasks);
    props.put(QueueSinkConfig.QUEUE_ROUTING_CONFIG, "matching");
    return props;
  }

  private static ProducerRecord<byte[], byte[]> record(
      String topic, String value, String header, String headerValue) {
    ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, 0, null, bytes(value));
    if (header != null) {
      r.headers().add(new RecordHeader(header, bytes(headerValue)));
    }
    return r;
  }

  /** The values of what group {@code g} of {@code queue} can claim now; each is acknowledged. */
  private static List<String> claimAndAck(QueueManager m, String queue) {
    List<String> out = new ArrayList<>();
    for (GroupDelivery d : m.consumerGroups().claimBatch(queue, "g", "delay-it", 10)) {
      out.add(new String(d.message().value(), StandardCharsets.UTF_8));
      d.ack();
    }
    return out;
  }

  private static Map<String, List<String>> errorsByKey(ConfigInfos infos) {
    Map<String, List<String>> out = new HashMap<>();
    for (ConfigInfo info : infos.configs()) {
      if (!info.configValue().errors().isEmpty()) {
        out.put(info.configValue().name(), info.configValue().errors());
      }
    }
    return out;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
