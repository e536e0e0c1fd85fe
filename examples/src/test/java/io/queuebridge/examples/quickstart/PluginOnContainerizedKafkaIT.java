package io.queuebridge.examples.quickstart;

import static io.queuebridge.examples.quickstart.PluginUnderTest.SINK_CLASS;
import static io.queuebridge.examples.quickstart.PluginUnderTest.SOURCE_CLASS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;
import org.testcontainers.utility.MountableFile;

/**
 * The plugin in a real Kafka distribution: a broker container and a separate Connect worker
 * container ({@code connect-distributed.sh} of the same {@code apache/kafka} image) with the
 * unpacked archive copied onto its {@code plugin.path}, the shipped examples posted over REST, and
 * the records checked from outside.
 *
 * <p>Needs a Docker engine; without one JUnit reports the class as skipped.
 */
@Testcontainers(disabledWithoutDocker = true)
class PluginOnContainerizedKafkaIT {
  private static final DockerImageName KAFKA_IMAGE =
      DockerImageName.parse("apache/kafka:" + System.getProperty("queuebridge.kafka.version"));
  private static final String PLUGIN_PATH = "/opt/connect-plugins";
  private static final String STORE_DIR = "/tmp/queue-bridge-store";
  private static final Duration TIMEOUT = Duration.ofMinutes(3);

  private static final Network NETWORK = Network.newNetwork();

  @Container
  private static final KafkaContainer KAFKA =
      new KafkaContainer(KAFKA_IMAGE)
          .withNetwork(NETWORK)
          .withNetworkAliases("kafka")
          .withListener("kafka:19092");

  @Container
  private static final GenericContainer<?> CONNECT =
      new GenericContainer<>(KAFKA_IMAGE)
          .withNetwork(NETWORK)
          .dependsOn(KAFKA)
          .withExposedPorts(8083)
          .withCopyFileToContainer(
              MountableFile.forHostPath(PluginUnderTest.dir()),
              PLUGIN_PATH + "/" + PluginUnderTest.dir().getFileName())
          .withCopyToContainer(
              Transferable.of(workerProperties()), "/tmp/connect-distributed.properties")
          .withCreateContainerCmdModifier(
              cmd ->
                  cmd.withEntrypoint("/opt/kafka/bin/connect-distributed.sh")
                      .withCmd("/tmp/connect-distributed.properties"))
          .waitingFor(Wait.forHttp("/connector-plugins").forPort(8083).withStartupTimeout(TIMEOUT));

  private static String workerProperties() {
    return String.join(
        "\n",
        "bootstrap.servers=kafka:19092",
        "group.id=queue-bridge-containers",
        "key.converter=org.apache.kafka.connect.converters.ByteArrayConverter",
        "value.converter=org.apache.kafka.connect.converters.ByteArrayConverter",
        "config.storage.topic=_connect-configs",
        "offset.storage.topic=_connect-offsets",
        "status.storage.topic=_connect-status",
        "config.storage.replication.factor=1",
        "offset.storage.replication.factor=1",
        "status.storage.replication.factor=1",
        "offset.flush.interval.ms=1000",
        "listeners=http://0.0.0.0:8083",
        "plugin.path=" + PLUGIN_PATH,
        "plugin.discovery=service_load",
        "exactly.once.source.support=enabled",
        "");
  }

  private static ConnectRestClient rest() {
    return new ConnectRestClient(
        URI.create("http://" + CONNECT.getHost() + ":" + CONNECT.getMappedPort(8083) + "/"));
  }

  @Test
  void workerInAKafkaDistributionLoadsBothConnectorsAndRestoresATopicThroughTheStream()
      throws Exception {
    ConnectRestClient rest = rest();
    assertThat(rest.connectorPlugins())
        .contains(
            new ConnectRestClient.Plugin(SINK_CLASS, "sink", PluginUnderTest.version()),
            new ConnectRestClient.Plugin(SOURCE_CLASS, "source", PluginUnderTest.version()));

    var etc = PluginUnderTest.dir().resolve("etc");
    Map<String, String> placeholders = Map.of("STORE_DIR", STORE_DIR);
    ExampleConfig sink = ExampleConfig.read(etc.resolve(QuickstartRun.SINK_EXAMPLE));
    ExampleConfig restore = ExampleConfig.read(etc.resolve(QuickstartRun.RESTORE_EXAMPLE));
    String input = sink.config(placeholders).get("topics");
    String restored = restore.config(placeholders).get("topic");
    int partitions =
        Integer.parseInt(restore.config(placeholders).get("topic.creation.default.partitions"));

    try (Admin admin =
        Admin.create(
            Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.getBootstrapServers()))) {
      admin.createTopics(List.of(new NewTopic(input, partitions, (short) 1))).all().get();
    }
    List<RecordSnapshot> produced = new ArrayList<>();
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                KAFKA.getBootstrapServers(),
                ProducerConfig.ACKS_CONFIG,
                "all"),
            new ByteArraySerializer(),
            new ByteArraySerializer())) {
      for (ProducerRecord<byte[], byte[]> r :
          SampleRecords.build(input, 12, partitions, 1_767_225_600_000L)) {
        produced.add(RecordSnapshot.produced(r, producer.send(r).get()));
      }
    }

    for (ExampleConfig example : List.of(sink, restore)) {
      assertThat(rest.createConnector(example.resolve(placeholders))).isEqualTo(example.name());
    }

    Map<String, Object> consumerConfig = new HashMap<>();
    consumerConfig.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.getBootstrapServers());
    consumerConfig.put(ConsumerConfig.GROUP_ID_CONFIG, "containers-it");
    consumerConfig.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    consumerConfig.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    consumerConfig.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, 1000);
    List<RecordSnapshot> back = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(
            consumerConfig, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(restored));
      await("records restored")
          .atMost(TIMEOUT)
          .until(
              () -> {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                  back.add(RecordSnapshot.consumed(r));
                }
                assertThat(rest.failureTrace(sink.name())).isEmpty();
                assertThat(rest.failureTrace(restore.name())).isEmpty();
                return back.size() >= produced.size();
              });
    }
    assertThat(QuickstartRun.compareRestored(produced, back)).isEmpty();
  }
}
