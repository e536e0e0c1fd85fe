package io.queuebridge.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * What {@code lag} asks Kafka, through one Admin client: the topics, their partitions, the log-end
 * offsets and a consumer group's committed offsets. The only class of the command line that uses
 * Kafka's client library, and its API speaks in the command line's own types, so that no other
 * command loads a Kafka class.
 *
 * <p>Every request is bounded by the timeout given; a failure is a {@link CliException} naming the
 * bootstrap servers, what was asked and what was expected.
 */
final class KafkaOffsets implements AutoCloseable {
  /** A partition of a Kafka topic; sorted by topic, then partition. */
  record Partition(String topic, int partition) implements Comparable<Partition> {
    private static final Comparator<Partition> ORDER =
        Comparator.comparing(Partition::topic).thenComparingInt(Partition::partition);

    @Override
    public int compareTo(Partition other) {
      return ORDER.compare(this, other);
    }

    @Override
    public String toString() {
      return topic + "-" + partition;
    }
  }

  /** Beyond the Admin client's own timeout, how long a future may take to report it. */
  private static final long GRACE_MS = 2_000;

  private final Admin admin;
  private final String bootstrap;
  private final int timeoutMs;

  private KafkaOffsets(Admin admin, String bootstrap, int timeoutMs) {
    this.admin = admin;
    this.bootstrap = bootstrap;
    this.timeoutMs = timeoutMs;
  }

  /**
   * An Admin client for {@code bootstrap}. Connects lazily: an unreachable cluster is reported by
   * the first request.
   *
   * @param clientConfig Java properties for the client (security settings), or null
   * @throws CliException if the properties file cannot be read or the address is not usable
   */
  static KafkaOffsets connect(String bootstrap, Path clientConfig, Duration timeout) {
    Properties props = clientConfig == null ? new Properties() : load(clientConfig);
    int ms = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
    props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(AdminClientConfig.CLIENT_ID_CONFIG, "queue-bridge-lag");
    props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, Integer.toString(ms));
    props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, Integer.toString(ms));
    try {
      return new KafkaOffsets(Admin.create(props), bootstrap, ms);
    } catch (KafkaException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new CliException(
          "--bootstrap-server "
              + bootstrap
              + ": "
              + cause.getMessage()
              + " (expected HOST:PORT[,HOST:PORT...] of Kafka brokers)");
    }
  }

  private static Properties load(Path file) {
    Properties props = new Properties();
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      props.load(in);
    } catch (NoSuchFileException e) {
      throw new CliException("--command-config " + file + ": the file does not exist");
    } catch (IOException | IllegalArgumentException e) {
      throw new CliException(
          "--command-config "
              + file
              + ": cannot read it as a Java properties file ("
              + e.getClass().getSimpleName()
              + ")");
    }
    return props;
  }

  /** Every topic but Kafka's internal ones, sorted. */
  List<String> topics() {
    return await(
            admin.listTopics(new ListTopicsOptions().timeoutMs(timeoutMs)).names(),
            "listing the topics")
        .stream()
        .sorted()
        .toList();
  }

  /**
   * Every partition of {@code topics}, sorted.
   *
   * @param where what names the topics, for messages ({@code topics in sink.json})
   * @throws CliException naming the topic if one does not exist
   */
  List<Partition> partitions(Collection<String> topics, String where) {
    if (topics.isEmpty()) {
      return List.of();
    }
    Map<String, KafkaFuture<TopicDescription>> futures =
        admin
            .describeTopics(topics, new DescribeTopicsOptions().timeoutMs(timeoutMs))
            .topicNameValues();
    Map<String, TopicDescription> described = new TreeMap<>();
    for (String topic : new TreeSet<>(topics)) {
      try {
        described.put(topic, await(futures.get(topic), "describing topic '" + topic + "'"));
      } catch (MissingTopic e) {
        throw new CliException(
            "topic '"
                + topic
                + "' ("
                + where
                + ") does not exist on "
                + bootstrap
                + " (expected a topic the sink reads)");
      }
    }
    List<Partition> out = new ArrayList<>();
    described.forEach(
        (topic, d) -> d.partitions().forEach(p -> out.add(new Partition(topic, p.partition()))));
    out.sort(null);
    return out;
  }

  /** The offsets {@code group} committed, by partition; empty when it committed none. */
  Map<Partition, Long> committed(String group) {
    Map<TopicPartition, OffsetAndMetadata> offsets =
        await(
            admin
                .listConsumerGroupOffsets(
                    group, new ListConsumerGroupOffsetsOptions().timeoutMs(timeoutMs))
                .partitionsToOffsetAndMetadata(),
            "reading the committed offsets of consumer group '" + group + "'");
    Map<Partition, Long> out = new HashMap<>();
    offsets.forEach(
        (tp, o) -> {
          if (o != null) {
            out.put(new Partition(tp.topic(), tp.partition()), o.offset());
          }
        });
    return out;
  }

  /** The log-end offset (the high watermark: what a consumer can read up to) of each partition. */
  Map<Partition, Long> logEnd(Collection<Partition> partitions) {
    if (partitions.isEmpty()) {
      return Map.of();
    }
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    partitions.forEach(p -> latest.put(new TopicPartition(p.topic(), p.partition()), latest()));
    Map<TopicPartition, ListOffsetsResultInfo> ends =
        await(
            admin.listOffsets(latest, new ListOffsetsOptions().timeoutMs(timeoutMs)).all(),
            "reading the log-end offsets");
    Map<Partition, Long> out = new HashMap<>();
    ends.forEach((tp, info) -> out.put(new Partition(tp.topic(), tp.partition()), info.offset()));
    return out;
  }

  private static OffsetSpec latest() {
    return OffsetSpec.latest();
  }

  private <T> T await(KafkaFuture<T> future, String what) {
    try {
      return future.get(timeoutMs + GRACE_MS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("interrupted while " + what + " on " + bootstrap);
    } catch (java.util.concurrent.TimeoutException e) {
      throw noAnswer(what);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof TimeoutException) {
        throw noAnswer(what);
      }
      if (cause instanceof UnknownTopicOrPartitionException) {
        throw new MissingTopic();
      }
      throw new CliException(
          "Kafka at "
              + bootstrap
              + " failed "
              + what
              + ": "
              + cause.getClass().getSimpleName()
              + ": "
              + cause.getMessage());
    }
  }

  private CliException noAnswer(String what) {
    return new CliException(
        "Kafka at "
            + bootstrap
            + " (--bootstrap-server) did not answer within "
            + timeoutMs
            + " ms while "
            + what
            + " (expected a reachable Kafka cluster: check the address and that the brokers are"
            + " up, or raise --timeout)");
  }

  /** A topic that does not exist, found while describing; turned into a message by the caller. */
  private static final class MissingTopic extends RuntimeException {
    private static final long serialVersionUID = 1L;

    MissingTopic() {
      super(null, null, false, false);
    }
  }

  /** Closes the client without waiting for requests still under way (there are none). */
  @Override
  public void close() {
    admin.close(Duration.ZERO);
  }
}
