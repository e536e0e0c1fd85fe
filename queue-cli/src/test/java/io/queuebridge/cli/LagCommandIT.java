package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.connect.sink.QueueSinkConfig;
import io.queuebridge.connect.sink.QueueSinkConnector;
import io.queuebridge.connect.source.QueueSourceConfig;
import io.queuebridge.connect.source.QueueSourceConnector;
import io.queuebridge.core.SharedStores;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.connect.converters.ByteArrayConverter;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.SinkConnectorConfig;
import org.apache.kafka.connect.runtime.SourceConnectorConfig;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code lag} over a running bridge: one broker and one Connect worker (exactly-once source support
 * on) in this JVM, a file store, the sink from topic {@code orders} into the protected stream
 * {@code orders-stream}, and the source from that stream to topic {@code orders-copy}. Once both
 * caught up every hop reports the exact offsets and no lag; with the source paused, its lag grows
 * by what was produced meanwhile while the sink's stays zero.
 *
 * <p>The worker holds the file store open (the test holds a {@link SharedStores} lease on it from
 * the start, so the store exists before the connectors do); the command opens it the ordinary way,
 * read-only, beside the writer.
 */
class LagCommandIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final String TOPIC = "orders";
  private static final String STREAM = "orders-stream";
  private static final String TARGET = "orders-copy";
  private static final String SINK = "lag-sink";
  private static final String SOURCE = "lag-source";

  @TempDir static Path dir;
  private static Path store;
  private static EmbeddedConnectCluster cluster;
  private static SharedStores.Lease lease;
  private static Path sinkFile;
  private static Path sourceFile;

  @BeforeAll
  static void start() throws Exception {
    store = dir.resolve("store");
    lease = SharedStores.acquire("file", Map.of("path", store.toString()));
    Map<String, String> worker = new HashMap<>();
    worker.put("offset.flush.interval.ms", "1000");
    worker.put("exactly.once.source.support", "enabled");
    Properties broker = new Properties();
    // one broker: the transaction log must fit on it
    broker.put("transaction.state.log.replication.factor", "1");
    broker.put("transaction.state.log.min.isr", "1");
    broker.put("transaction.state.log.num.partitions", "4");
    cluster =
        new EmbeddedConnectCluster.Builder()
            .name("cli-lag")
            .numWorkers(1)
            .numBrokers(1)
            .brokerProps(broker)
            .workerProps(worker)
            .build();
    cluster.start();

    Map<String, String> sink = byteExact(QueueSinkConnector.class.getName());
    sink.put(SinkConnectorConfig.TOPICS_CONFIG, TOPIC);
    sink.put(QueueSinkConfig.QUEUE_NAME_CONFIG, STREAM);
    sinkFile = writeConfig(SINK, sink);

    Map<String, String> source = byteExact(QueueSourceConnector.class.getName());
    source.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, STREAM);
    source.put(QueueSourceConfig.TOPIC_CONFIG, TARGET);
    source.put(QueueSourceConfig.POLL_TIMEOUT_MS_CONFIG, "500");
    source.put(QueueSourceConfig.QUEUE_REFRESH_INTERVAL_MS_CONFIG, "1000");
    source.put(QueueSourceConfig.COMMIT_INTERVAL_MS_CONFIG, "200");
    source.put(SourceConnectorConfig.EXACTLY_ONCE_SUPPORT_CONFIG, "required");
    sourceFile = writeConfig(SOURCE, source);

    cluster.kafka().createTopic(TOPIC, 2);
    cluster.kafka().createTopic(TARGET, 2);
    cluster.configureConnector(SINK, sink);
    cluster.configureConnector(SOURCE, source);
    cluster.assertions().assertConnectorAndExactlyNumTasksAreRunning(SINK, 1, "sink running");
    cluster.assertions().assertConnectorAndExactlyNumTasksAreRunning(SOURCE, 1, "source running");
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

  private static Map<String, String> byteExact(String connectorClass) {
    Map<String, String> props = new HashMap<>();
    props.put(ConnectorConfig.CONNECTOR_CLASS_CONFIG, connectorClass);
    props.put(ConnectorConfig.TASKS_MAX_CONFIG, "1");
    props.put(ConnectorConfig.KEY_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    props.put(ConnectorConfig.VALUE_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    props.put(ConnectorConfig.HEADER_CONVERTER_CLASS_CONFIG, ByteArrayConverter.class.getName());
    props.put("queue.store.type", "file");
    props.put("queue.store.path", store.toString());
    return props;
  }

  /** The connector's config file as an operator keeps it: the JSON posted to Connect. */
  private static Path writeConfig(String name, Map<String, String> config) throws Exception {
    Map<String, Object> posted = Map.of("name", name, "config", config);
    return Files.writeString(
        dir.resolve(name + ".json"), new ObjectMapper().writeValueAsString(posted));
  }

  private static Cli.Run lag(String... more) {
    String[] base = {
      "lag",
      "--config",
      sinkFile.toString(),
      "--bootstrap-server",
      cluster.kafka().bootstrapServers(),
      "--source-config",
      sourceFile.toString(),
      "--connect-url",
      cluster.endpointForResource(""),
      "--timeout",
      "5000"
    };
    String[] args = new String[base.length + more.length];
    System.arraycopy(base, 0, args, 0, base.length);
    System.arraycopy(more, 0, args, base.length, more.length);
    return Cli.run(StoreOpener.existingStores(), StoreFixture.CLOCK, args);
  }

  private static void produce(int partition, int from, int n) {
    for (int i = from; i < from + n; i++) {
      cluster.kafka().produce(TOPIC, partition, "k-" + i, "v-" + partition + "-" + i);
    }
  }

  private static void awaitLag(String expectedTable) {
    await("lag shows\n" + expectedTable)
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(
            () -> {
              Cli.Run run = lag();
              assertThat(run.err()).isEmpty();
              assertThat(run.status()).isZero();
              assertThat(run.out()).isEqualTo(expectedTable);
            });
  }

  @Test
  void everyHopReportsItsOffsetsAndAPausedSourceFallsBehindWhileTheSinkKeepsUp() throws Exception {
    produce(0, 0, 20);
    produce(1, 0, 10);

    awaitLag(
"""
HOP     CONNECTOR   STATE    FROM           PARTITION  TO             END  COMMITTED  COMMITTED-LAG  WATERMARK  WATERMARK-LAG
sink    lag-sink    RUNNING  orders         0          orders-stream  20   20         0              20         0
sink    lag-sink    RUNNING  orders         1          orders-stream  10   10         0              10         0
source  lag-source  RUNNING  orders-stream  -          orders-copy    30   30         0              30         0
""");

    JsonNode rows = new ObjectMapper().readTree(lag("-o", "json").out());
    assertThat(rows).hasSize(3);
    JsonNode sink = rows.get(1);
    assertThat(sink.get("hop").asText()).isEqualTo("sink");
    assertThat(sink.get("group").asText()).isEqualTo("connect-" + SINK);
    assertThat(sink.get("partition").asInt()).isEqualTo(1);
    assertThat(sink.get("end").asLong()).isEqualTo(10);
    assertThat(sink.get("committedLag").asLong()).isZero();
    assertThat(sink.get("watermarkLag").asLong()).isZero();
    JsonNode source = rows.get(2);
    assertThat(source.get("hop").asText()).isEqualTo("source");
    assertThat(source.get("group").asText()).isEqualTo("connect-" + SOURCE);
    assertThat(source.get("partition").isNull()).isTrue();
    assertThat(source.get("from").asText()).isEqualTo(STREAM);
    assertThat(source.get("to").asText()).isEqualTo(TARGET);
    assertThat(source.get("watermark").asLong()).isEqualTo(30);

    cluster.pauseConnector(SOURCE);
    cluster.assertions().assertConnectorAndExactlyNumTasksArePaused(SOURCE, 1, "source paused");
    produce(0, 20, 10);
    produce(1, 10, 5);

    awaitLag(
"""
HOP     CONNECTOR   STATE    FROM           PARTITION  TO             END  COMMITTED  COMMITTED-LAG  WATERMARK  WATERMARK-LAG
sink    lag-sink    RUNNING  orders         0          orders-stream  30   30         0              30         0
sink    lag-sink    RUNNING  orders         1          orders-stream  15   15         0              15         0
source  lag-source  PAUSED   orders-stream  -          orders-copy    45   30         15             30         15
""");
  }

  @Test
  void withoutTheConnectUrlTheSourcesPositionIsItsStreamGroupsCommittedOffset() {
    String[] args = {
      "lag",
      "--config",
      sinkFile.toString(),
      "--bootstrap-server",
      cluster.kafka().bootstrapServers(),
      "--source-config",
      sourceFile.toString()
    };

    await("the source's stream group exists")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(
            () -> {
              Cli.Run run = Cli.run(StoreOpener.existingStores(), StoreFixture.CLOCK, args);
              assertThat(run.err()).isEmpty();
              assertThat(run.out())
                  .startsWith(
                      "HOP     CONNECTOR   STATE  FROM           PARTITION  TO             END ")
                  .containsPattern(
                      "\nsource  lag-source  -      orders-stream  -          orders-copy    \\d+"
                          + " +\\d+ +\\d+ +- +-\n$");
            });
  }
}
