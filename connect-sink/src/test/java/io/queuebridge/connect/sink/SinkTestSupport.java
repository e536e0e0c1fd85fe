package io.queuebridge.connect.sink;

import io.queuebridge.core.SharedStores;
import io.queuebridge.core.message.Message;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.connect.converters.ByteArrayConverter;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.SinkConnectorConfig;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;

/** Shared set-up for the sink integration tests: cluster, connector props, reading a stream. */
public final class SinkTestSupport {
  private SinkTestSupport() {}

  static EmbeddedConnectCluster startCluster(String name, int workers) {
    Map<String, String> workerProps = new HashMap<>();
    workerProps.put("offset.flush.interval.ms", "1000");
    workerProps.put("connector.client.config.override.policy", "All");
    // A departed worker's tasks are reassigned after this delay (default 5 minutes).
    workerProps.put("scheduled.rebalance.max.delay.ms", "3000");
    Properties broker = new Properties();
    // Test records carry fixed timestamps in the past; the broker's first retention check (30 s
    // after it starts, then every 5 minutes) would delete them from any topic with the default
    // 7-day retention.
    broker.put("log.retention.ms", "-1");
    EmbeddedConnectCluster cluster =
        new EmbeddedConnectCluster.Builder()
            .name(name)
            .numWorkers(workers)
            .numBrokers(1)
            .brokerProps(broker)
            .workerProps(workerProps)
            .build();
    cluster.start();
    return cluster;
  }

  /** A byte-exact sink config: ByteArrayConverter for keys, values and headers. */
  public static Map<String, String> sinkProps(Path store, String queue, String topics, int tasks) {
    Map<String, String> props = new HashMap<>();
    props.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, QueueSinkConnector.class.getName());
    props.put(ConnectorConfig.TASKS_MAX_CONFIG, Integer.toString(tasks));
    props.put(SinkConnectorConfig.TOPICS_CONFIG, topics);
    props.put(ConnectorConfig.KEY_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    props.put(ConnectorConfig.VALUE_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    props.put(ConnectorConfig.HEADER_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    props.put(QueueSinkConfig.QUEUE_NAME_CONFIG, queue);
    props.put(QueueSinkConfig.STORE_TYPE_CONFIG, "file");
    props.put(QueueSinkConfig.STORE_PATH_CONFIG, store.toString());
    return props;
  }

  static Map<String, String> fileStore(Path dir) {
    return Map.of("path", dir.toString());
  }

  /** Every message of {@code queue} in the file store at {@code dir}, in offset order. */
  static List<Message> readAll(Path dir, String queue) {
    return readAll("file", dir, queue);
  }

  /**
   * Every message of {@code queue} in the store of type {@code storeType} at {@code dir} (a worker
   * in this JVM holding the same store shares the open instance), in offset order.
   */
  static List<Message> readAll(String storeType, Path dir, String queue) {
    try (SharedStores.Lease lease = SharedStores.acquire(storeType, fileStore(dir))) {
      var store = lease.storage().queues();
      List<Message> out = new ArrayList<>();
      long next = store.head(queue);
      long tail = store.tail(queue);
      while (next < tail) {
        List<Message> batch = store.readBatch(queue, next, 1000);
        out.addAll(batch);
        next = batch.get(batch.size() - 1).offset() + 1;
      }
      return out;
    }
  }

  static long tail(Path dir, String queue) {
    try (SharedStores.Lease lease = SharedStores.acquire("file", fileStore(dir))) {
      var store = lease.storage().queues();
      return store.listQueues().stream().anyMatch(q -> q.name().equals(queue))
          ? store.tail(queue)
          : 0;
    }
  }
}
