package io.queuebridge.connect.source;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.core.SharedStores;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.message.Message;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.converters.ByteArrayConverter;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;

/** Shared set-up for the source integration tests: cluster, connector props, store, reading. */
final class SourceTestSupport {
  private static final ObjectMapper JSON = new ObjectMapper();

  private SourceTestSupport() {}

  /**
   * One broker and {@code workers} workers; offsets flushed every second; client overrides allowed;
   * a lost worker's tasks reassigned after 3 s (not the default 5 min).
   */
  static EmbeddedConnectCluster startCluster(String name, int workers, boolean exactlyOnce) {
    Map<String, String> workerProps = new HashMap<>();
    workerProps.put("offset.flush.interval.ms", "1000");
    workerProps.put("connector.client.config.override.policy", "All");
    workerProps.put("scheduled.rebalance.max.delay.ms", "3000");
    if (exactlyOnce) {
      workerProps.put("exactly.once.source.support", "enabled");
    }
    Properties brokerProps = new Properties();
    // one broker: the transaction log must fit on it
    brokerProps.put("transaction.state.log.replication.factor", "1");
    brokerProps.put("transaction.state.log.min.isr", "1");
    brokerProps.put("transaction.state.log.num.partitions", "4");
    // Test records carry fixed timestamps in the past; the broker's first retention check (30 s
    // after it starts, then every 5 minutes) would delete them from any topic with the default
    // 7-day retention.
    brokerProps.put("log.retention.ms", "-1");
    EmbeddedConnectCluster cluster =
        new EmbeddedConnectCluster.Builder()
            .name(name)
            .numWorkers(workers)
            .numBrokers(1)
            .workerProps(workerProps)
            .brokerProps(brokerProps)
            .build();
    cluster.start();
    return cluster;
  }

  static Map<String, String> fileStore(Path dir) {
    return Map.of("path", dir.toString());
  }

  /** A lease the test class holds for its whole run, so every connector shares one open store. */
  static SharedStores.Lease openStore(Path dir) {
    return SharedStores.acquire("file", fileStore(dir));
  }

  /** A byte-exact source config: ByteArrayConverter for keys, values and headers. */
  static Map<String, String> sourceProps(Path store, int tasks) {
    Map<String, String> props = new HashMap<>();
    props.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, QueueSourceConnector.class.getName());
    props.put(ConnectorConfig.TASKS_MAX_CONFIG, Integer.toString(tasks));
    props.put(ConnectorConfig.KEY_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    props.put(ConnectorConfig.VALUE_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    props.put(ConnectorConfig.HEADER_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    props.put(QueueSourceConfig.STORE_TYPE_CONFIG, "file");
    props.put(QueueSourceConfig.STORE_PATH_CONFIG, store.toString());
    props.put(QueueSourceConfig.POLL_TIMEOUT_MS_CONFIG, "500");
    props.put(QueueSourceConfig.QUEUE_REFRESH_INTERVAL_MS_CONFIG, "1000");
    return props;
  }

  static void createStream(SharedStores.Lease lease, String name) {
    lease.manager().createQueue(QueueConfig.durable(name).type(QueueType.STREAM).build());
  }

  static void createClassic(SharedStores.Lease lease, String name) {
    lease.manager().createQueue(QueueConfig.durable(name).maxDepth(10_000_000).build());
  }

  /**
   * Appends {@code values} (key = "k-" + value) to {@code queue} in one batch; returns the first
   * offset.
   */
  static long append(SharedStores.Lease lease, String queue, List<String> values) {
    Instant now = Instant.now();
    List<Message> batch = new ArrayList<>(values.size());
    for (String v : values) {
      batch.add(
          Message.builder()
              .topic("test/" + queue)
              .key(bytes("k-" + v))
              .value(bytes(v))
              .createdAt(now)
              .build());
    }
    return lease.storage().queues().appendBatch(queue, batch);
  }

  /** {@code prefix-from} .. {@code prefix-(to-1)}. */
  static List<String> values(String prefix, int from, int to) {
    List<String> out = new ArrayList<>(to - from);
    for (int i = from; i < to; i++) {
      out.add(prefix + "-" + i);
    }
    return out;
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static String string(byte[] b) {
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  /** A byte consumer; {@code readCommitted} reads only committed transactions. */
  static KafkaConsumer<byte[], byte[]> consumer(
      EmbeddedConnectCluster cluster, boolean readCommitted) {
    Map<String, Object> props = new HashMap<>();
    props.put(
        ConsumerConfig.ISOLATION_LEVEL_CONFIG,
        readCommitted ? "read_committed" : "read_uncommitted");
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
    props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    return cluster.kafka().createConsumer(props);
  }

  /**
   * Every record of {@code topic} up to its end offsets (for read_committed: the last stable
   * offsets) at the time of the call, partition by partition in offset order.
   */
  static Map<Integer, List<ConsumerRecord<byte[], byte[]>>> readAll(
      EmbeddedConnectCluster cluster, String topic, boolean readCommitted) {
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(cluster, readCommitted)) {
      List<TopicPartition> parts = new ArrayList<>();
      consumer
          .partitionsFor(topic, Duration.ofSeconds(30))
          .forEach(p -> parts.add(new TopicPartition(topic, p.partition())));
      consumer.assign(parts);
      consumer.seekToBeginning(parts);
      Map<TopicPartition, Long> end = consumer.endOffsets(parts, Duration.ofSeconds(30));
      Map<Integer, List<ConsumerRecord<byte[], byte[]>>> out = new HashMap<>();
      parts.forEach(tp -> out.put(tp.partition(), new ArrayList<>()));
      long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
      while (!reachedEnd(consumer, parts, end)) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("could not read " + topic + " up to " + end);
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          if (r.offset() < end.get(new TopicPartition(topic, r.partition()))) {
            out.get(r.partition()).add(r);
          }
        }
      }
      return out;
    }
  }

  private static boolean reachedEnd(
      KafkaConsumer<byte[], byte[]> consumer,
      List<TopicPartition> parts,
      Map<TopicPartition, Long> end) {
    for (TopicPartition tp : parts) {
      if (consumer.position(tp) < end.get(tp)) {
        return false;
      }
    }
    return true;
  }

  /** Every record of {@code topic}, all partitions, as one list (per-partition order kept). */
  static List<ConsumerRecord<byte[], byte[]>> readAllFlat(
      EmbeddedConnectCluster cluster, String topic, boolean readCommitted) {
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    readAll(cluster, topic, readCommitted).values().forEach(out::addAll);
    return out;
  }

  /** The sum of the end offsets (for read_committed: last stable offsets) of {@code topic}. */
  static long endOffsetSum(EmbeddedConnectCluster cluster, String topic, boolean readCommitted) {
    try (KafkaConsumer<byte[], byte[]> consumer = consumer(cluster, readCommitted)) {
      List<TopicPartition> parts = new ArrayList<>();
      var infos = consumer.partitionsFor(topic, Duration.ofSeconds(10));
      if (infos == null) {
        return 0;
      }
      infos.forEach(p -> parts.add(new TopicPartition(topic, p.partition())));
      return consumer.endOffsets(parts, Duration.ofSeconds(10)).values().stream()
          .mapToLong(Long::longValue)
          .sum();
    } catch (org.apache.kafka.common.errors.TimeoutException e) {
      return 0;
    }
  }

  /**
   * The connector's source offsets from the REST API, as plain maps (a partition Connect knows but
   * cannot find an offset for shows as a null offset).
   */
  static Map<Map<String, Object>, Map<String, Object>> connectorOffsets(
      EmbeddedConnectCluster cluster, String connector) {
    Response r =
        cluster.requestGet(cluster.endpointForResource("connectors/" + connector + "/offsets"));
    String body = String.valueOf(r.getEntity());
    if (r.getStatus() >= 300) {
      throw new AssertionError("GET offsets of " + connector + ": " + r.getStatus() + " " + body);
    }
    try {
      Map<String, Object> parsed = JSON.readValue(body, new TypeReference<>() {});
      Map<Map<String, Object>, Map<String, Object>> out = new HashMap<>();
      for (Object o : (List<?>) parsed.get("offsets")) {
        Map<?, ?> entry = (Map<?, ?>) o;
        out.put(castMap(entry.get("partition")), castMap(entry.get("offset")));
      }
      return out;
    } catch (JsonProcessingException e) {
      throw new AssertionError("cannot parse " + body, e);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> castMap(Object o) {
    return (Map<String, Object>) o;
  }

  /**
   * PATCHes the connector's offsets with one partition; returns the REST response body, or throws
   * an {@link IllegalStateException} holding the error body.
   */
  static String alterOffsets(
      EmbeddedConnectCluster cluster,
      String connector,
      Map<String, ?> partition,
      Map<String, ?> offset) {
    Map<String, Object> entry = new HashMap<>();
    entry.put("partition", partition);
    entry.put("offset", offset);
    try {
      String json = JSON.writeValueAsString(Map.of("offsets", List.of(entry)));
      Response r =
          cluster.requestPatch(
              cluster.endpointForResource("connectors/" + connector + "/offsets"), json);
      String body = String.valueOf(r.getEntity());
      if (r.getStatus() >= 300) {
        throw new IllegalStateException(r.getStatus() + " " + body);
      }
      return body;
    } catch (JsonProcessingException e) {
      throw new AssertionError(e);
    }
  }

  /** The values of the records, as strings. */
  static List<String> valuesOf(List<ConsumerRecord<byte[], byte[]>> records) {
    return records.stream().map(r -> string(r.value())).toList();
  }
}
