package io.queuebridge.connect.source;

import static io.queuebridge.connect.source.SourceTestSupport.append;
import static io.queuebridge.connect.source.SourceTestSupport.readAllFlat;
import static io.queuebridge.connect.source.SourceTestSupport.values;
import static io.queuebridge.connect.source.SourceTestSupport.valuesOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.SharedStores;
import io.queuebridge.core.store.ConsumerGroupState;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfo;
import org.apache.kafka.connect.runtime.rest.entities.ConfigInfos;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The source connector on a real broker and Connect worker (without exactly-once): start positions,
 * the offsets REST API, validation, per-queue order over several tasks, queue discovery, and
 * at-least-once through restarts.
 */
class QueueSourceConnectorIT {
  private static final Duration TIMEOUT = Duration.ofSeconds(90);
  private static final String SEGMENT_BYTES = QueueSourceConfig.STORE_PREFIX + "segment.bytes";

  @TempDir static Path store;
  private static EmbeddedConnectCluster cluster;
  private static SharedStores.Lease lease;

  @BeforeAll
  static void start() {
    // exact time index (every batch indexed), so start.position=timestamp is exact here
    lease =
        SharedStores.acquire(
            "file", Map.of("path", store.toString(), "time.index.interval.ms", "0"));
    cluster = SourceTestSupport.startCluster("source-it", 1, false);
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

  private static Map<String, String> props(String queue, String topic) {
    Map<String, String> props = SourceTestSupport.sourceProps(store, 1);
    props.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, queue);
    props.put(QueueSourceConfig.TOPIC_CONFIG, topic);
    return props;
  }

  private static List<String> awaitValues(String topic, int n) {
    await("topic " + topic + " holds " + n + " records")
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(250))
        .until(() -> SourceTestSupport.endOffsetSum(cluster, topic, false) >= n);
    return valuesOf(readAllFlat(cluster, topic, false));
  }

  private static void awaitMember(String queue, String connector) {
    await("task of " + connector + " joined the group of " + queue)
        .atMost(TIMEOUT)
        .until(
            () -> {
              Optional<ConsumerGroupState> g =
                  lease.manager().consumerGroups().group(queue, "connect-" + connector);
              return g.isPresent() && !g.get().consumers().isEmpty();
            });
  }

  @Test
  void earliestReadsWhatTheStreamAlreadyHolds() {
    SourceTestSupport.createStream(lease, "pos-earliest");
    append(lease, "pos-earliest", values("e", 0, 25));
    cluster.kafka().createTopic("out-earliest", 1);
    cluster.configureConnector("earliest", props("pos-earliest", "out-earliest"));
    assertThat(awaitValues("out-earliest", 25)).containsExactlyElementsOf(values("e", 0, 25));
    await("the stream group's committed offset follows what Kafka accepted")
        .atMost(TIMEOUT)
        .until(
            () ->
                lease
                        .manager()
                        .consumerGroups()
                        .group("pos-earliest", "connect-earliest")
                        .orElseThrow()
                        .committed()
                    == 25);
    assertThat(lease.manager().consumerGroups().lag("pos-earliest", "connect-earliest")).isZero();
    cluster.deleteConnector("earliest");
  }

  @Test
  void latestSkipsWhatWasThereAtStart() {
    SourceTestSupport.createStream(lease, "pos-latest");
    append(lease, "pos-latest", values("old", 0, 10));
    cluster.kafka().createTopic("out-latest", 1);
    Map<String, String> props = props("pos-latest", "out-latest");
    props.put(QueueSourceConfig.START_POSITION_CONFIG, "latest");
    cluster.configureConnector("latest", props);
    awaitMember("pos-latest", "latest");
    append(lease, "pos-latest", values("new", 0, 10));
    assertThat(awaitValues("out-latest", 10)).containsExactlyElementsOf(values("new", 0, 10));
    cluster.deleteConnector("latest");
  }

  @Test
  void offsetStartsAtTheGivenOffset() {
    SourceTestSupport.createStream(lease, "pos-offset");
    append(lease, "pos-offset", values("o", 0, 20));
    cluster.kafka().createTopic("out-offset", 1);
    Map<String, String> props = props("pos-offset", "out-offset");
    props.put(QueueSourceConfig.START_POSITION_CONFIG, "offset");
    props.put(QueueSourceConfig.START_OFFSET_CONFIG, "15");
    cluster.configureConnector("offset", props);
    assertThat(awaitValues("out-offset", 5)).containsExactlyElementsOf(values("o", 15, 20));
    cluster.deleteConnector("offset");
  }

  @Test
  void timestampStartsAtTheFirstMessageAcceptedAtOrAfterIt() {
    SourceTestSupport.createStream(lease, "pos-time");
    append(lease, "pos-time", values("old", 0, 8));
    awaitClockPast(Instant.now().plusMillis(3));
    append(lease, "pos-time", values("near", 0, 3));
    Instant cut = Instant.now().plusMillis(3);
    awaitClockPast(cut.plusMillis(3));
    append(lease, "pos-time", values("after", 0, 6));
    cluster.kafka().createTopic("out-time", 1);
    Map<String, String> props = props("pos-time", "out-time");
    props.put(QueueSourceConfig.START_POSITION_CONFIG, "timestamp");
    props.put(QueueSourceConfig.START_TIMESTAMP_MS_CONFIG, Long.toString(cut.toEpochMilli()));
    cluster.configureConnector("time", props);
    await("the last message arrived")
        .atMost(TIMEOUT)
        .until(() -> valuesOf(readAllFlat(cluster, "out-time", false)).contains("after-5"));
    List<String> out = valuesOf(readAllFlat(cluster, "out-time", false));
    // A store's time lookup may answer early, never late: the file store answers at batch
    // granularity, so the output may start inside the batch just before the cut ("near"), but it
    // holds every message after the cut and nothing of the batches before that ("old").
    List<String> nearAndAfter = concat(values("near", 0, 3), values("after", 0, 6));
    assertThat(nearAndAfter).endsWith(out.toArray(String[]::new));
    assertThat(out).containsSubsequence(values("after", 0, 6));
    cluster.deleteConnector("time");
  }

  private static void awaitClockPast(Instant t) {
    await("the clock passed " + t).until(() -> Instant.now().isAfter(t));
  }

  @Test
  void offsetsRestApiMovesAStoppedConnectorAndRejectsBadOffsets() throws Exception {
    String queue = "rest-offsets";
    String topic = "out-rest-offsets";
    String name = "rest-offsets";
    SourceTestSupport.createStream(lease, queue);
    append(lease, queue, values("r", 0, 30));
    cluster.kafka().createTopic(topic, 1);
    cluster.configureConnector(name, props(queue, topic));
    assertThat(awaitValues(topic, 30)).containsExactlyElementsOf(values("r", 0, 30));
    Map<String, ?> partition = SourceOffsets.partition(queue, "connect-" + name);
    await("Connect committed the last offset")
        .atMost(TIMEOUT)
        .conditionEvaluationListener(
            c -> {
              if (!c.isSatisfied() && c.getElapsedTimeInMS() > 20_000) {
                System.out.println(
                    "offsets of "
                        + name
                        + ": "
                        + SourceTestSupport.connectorOffsets(cluster, name));
              }
            })
        .until(() -> storedOffset(name, partition) == 30L);

    cluster.stopConnector(name);
    cluster.assertions().assertConnectorIsStopped(name, "stopped to alter its offsets");

    assertThatThrownBy(() -> alter(name, partition, Map.of("offset", -3)))
        .hasMessageContaining("-3")
        .hasMessageContaining("expected an integer >= 0");
    assertThatThrownBy(() -> alter(name, partition, Map.of("offset", "ten")))
        .hasMessageContaining("ten")
        .hasMessageContaining("expected an integer >= 0");
    assertThatThrownBy(() -> alter(name, partition, Map.of("position", 3)))
        .hasMessageContaining("position")
        .hasMessageContaining("expected exactly [offset]");
    assertThatThrownBy(() -> alter(name, Map.of("queue", queue, "grp", "x"), Map.of("offset", 3)))
        .hasMessageContaining("grp");
    assertThatThrownBy(() -> alter(name, partition, Map.of("offset", 31)))
        .hasMessageContaining("beyond the tail 30");

    alter(name, partition, Map.of("offset", 22));
    cluster.resumeConnector(name);
    assertThat(awaitValues(topic, 38))
        .as("the 30 first records, then 22..29 again")
        .containsExactlyElementsOf(concat(values("r", 0, 30), values("r", 22, 30)));

    cluster.stopConnector(name);
    cluster.assertions().assertConnectorIsStopped(name, "stopped to reset its offsets");
    cluster.resetConnectorOffsets(name);
    cluster.resumeConnector(name);
    assertThat(awaitValues(topic, 68))
        .as("after a reset: everything again from start.position=earliest")
        .containsExactlyElementsOf(
            concat(concat(values("r", 0, 30), values("r", 22, 30)), values("r", 0, 30)));
    cluster.deleteConnector(name);
  }

  private static long storedOffset(String connector, Map<String, ?> partition) {
    Map<String, Object> offset =
        SourceTestSupport.connectorOffsets(cluster, connector).get(partition);
    return offset == null ? -1 : ((Number) offset.get("offset")).longValue();
  }

  private static void alter(String name, Map<String, ?> partition, Map<String, ?> offset) {
    SourceTestSupport.alterOffsets(cluster, name, partition, offset);
  }

  @Test
  void validateReportsPerFieldErrors() {
    Map<String, String> props = SourceTestSupport.sourceProps(store, 1);
    props.put(QueueSourceConfig.STORE_TYPE_CONFIG, "nosuchstore");
    props.put(QueueSourceConfig.CONSUMER_MODE_CONFIG, "sideways");
    props.put(QueueSourceConfig.QUEUE_FILTER_CONFIG, "a/#/b");
    props.put(QueueSourceConfig.TOPIC_TEMPLATE_CONFIG, "out-${queeu}");
    props.put(QueueSourceConfig.MAX_PENDING_MESSAGES_CONFIG, "0");
    props.put(QueueSourceConfig.KAFKA_DLQ_TOPIC_CONFIG, "bad topic!");
    Map<String, List<String>> errors = errorsByKey(validate(props));
    assertThat(errors.get(QueueSourceConfig.STORE_TYPE_CONFIG))
        .anySatisfy(e -> assertThat(e).contains("nosuchstore").contains("file"));
    assertThat(errors.get(QueueSourceConfig.CONSUMER_MODE_CONFIG))
        .anySatisfy(e -> assertThat(e).contains("sideways"));
    assertThat(errors.get(QueueSourceConfig.QUEUE_FILTER_CONFIG))
        .anySatisfy(e -> assertThat(e).contains("a/#/b"));
    assertThat(errors.get(QueueSourceConfig.TOPIC_TEMPLATE_CONFIG))
        .anySatisfy(e -> assertThat(e).contains("${queeu}"));
    assertThat(errors.get(QueueSourceConfig.MAX_PENDING_MESSAGES_CONFIG)).isNotEmpty();
    assertThat(errors.get(QueueSourceConfig.KAFKA_DLQ_TOPIC_CONFIG))
        .anySatisfy(e -> assertThat(e).contains("bad topic!"));

    // cross-field: neither names nor filter, both topic and template, start fields missing
    Map<String, String> cross = SourceTestSupport.sourceProps(store, 1);
    cross.put(QueueSourceConfig.TOPIC_CONFIG, "t");
    cross.put(QueueSourceConfig.TOPIC_TEMPLATE_CONFIG, "${queue}");
    cross.put(QueueSourceConfig.START_POSITION_CONFIG, "offset");
    cross.put(SEGMENT_BYTES, "12");
    Map<String, List<String>> crossErrors = errorsByKey(validate(cross));
    assertThat(crossErrors.get(QueueSourceConfig.QUEUE_NAMES_CONFIG))
        .anySatisfy(e -> assertThat(e).contains("queue.filter"));
    assertThat(crossErrors.get(QueueSourceConfig.QUEUE_FILTER_CONFIG)).isNotEmpty();
    assertThat(crossErrors.get(QueueSourceConfig.TOPIC_CONFIG))
        .anySatisfy(e -> assertThat(e).contains("only one of topic and topic.template"));
    assertThat(crossErrors.get(QueueSourceConfig.START_OFFSET_CONFIG))
        .anySatisfy(e -> assertThat(e).contains("start.offset"));
    assertThat(crossErrors.get(SEGMENT_BYTES))
        .as("store keys are checked by the store provider, reported on their own key")
        .anySatisfy(e -> assertThat(e).contains("12"));

    // shared mode over a stream
    SourceTestSupport.createStream(lease, "validate-stream");
    Map<String, String> shared = props("validate-stream", "t");
    shared.put(QueueSourceConfig.CONSUMER_MODE_CONFIG, "shared");
    assertThat(errorsByKey(validate(shared)).get(QueueSourceConfig.CONSUMER_MODE_CONFIG))
        .anySatisfy(e -> assertThat(e).contains("validate-stream").contains("classic"));

    Map<String, String> good = props("validate-stream", "t");
    good.put("name", "validate-good");
    assertThat(errorsByKey(validate(good))).isEmpty();
  }

  private static ConfigInfos validate(Map<String, String> props) {
    return cluster.validateConnectorConfig(QueueSourceConnector.class.getSimpleName(), props);
  }

  @Test
  void dedicatedTasksKeepEveryQueuesOrderAndNewQueuesArePickedUp() throws Exception {
    String topic = "out-ordered";
    cluster.kafka().createTopic(topic, 1);
    List<String> queues = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      queues.add("ordered/s" + i);
      SourceTestSupport.createStream(lease, "ordered/s" + i);
    }
    for (int i = 0; i < 2; i++) {
      queues.add("ordered/c" + i);
      SourceTestSupport.createClassic(lease, "ordered/c" + i);
    }
    int perQueue = 500;
    for (String q : queues) {
      for (int chunk = 0; chunk < perQueue; chunk += 100) {
        append(lease, q, values(q, chunk, chunk + 100));
      }
    }
    Map<String, String> props = SourceTestSupport.sourceProps(store, 3);
    props.put(QueueSourceConfig.QUEUE_FILTER_CONFIG, "ordered/#");
    props.put(QueueSourceConfig.TOPIC_CONFIG, topic);
    props.put(QueueSourceConfig.POLL_MAX_RECORDS_CONFIG, "37");
    cluster.configureConnector("ordered", props);
    cluster
        .assertions()
        .assertConnectorAndExactlyNumTasksAreRunning("ordered", 3, "six queues over three tasks");

    SourceTestSupport.createStream(lease, "ordered/s-late");
    append(lease, "ordered/s-late", values("ordered/s-late", 0, 50));
    queues.add("ordered/s-late");

    List<String> out = awaitValues(topic, queues.size() * perQueue - perQueue + 50);
    Map<String, List<String>> byQueue = new LinkedHashMap<>();
    for (String v : out) {
      String q = v.substring(0, v.lastIndexOf('-'));
      byQueue.computeIfAbsent(q, k -> new ArrayList<>()).add(v);
    }
    for (String q : queues) {
      int n = q.equals("ordered/s-late") ? 50 : perQueue;
      assertThat(byQueue.get(q))
          .as("records of %s, in queue order", q)
          .containsExactlyElementsOf(values(q, 0, n));
    }
    cluster.deleteConnector("ordered");
  }

  @Test
  void noRecordIsLostThroughRestartsWithoutExactlyOnce() {
    String queue = "alo";
    String topic = "out-alo";
    String name = "alo";
    SourceTestSupport.createStream(lease, queue);
    cluster.kafka().createTopic(topic, 2);
    Map<String, String> props = props(queue, topic);
    props.put(QueueSourceConfig.POLL_MAX_RECORDS_CONFIG, "100");
    // small producer batches (one request in flight): a few thousand records per second, so the
    // restarts land while records are on their way
    props.put("producer.override.batch.size", "512");
    cluster.configureConnector(name, props);
    int phase = 10_000;
    int total = 0;
    int midFlow = 0;
    for (int round = 0; round < 4; round++) {
      for (int chunk = 0; chunk < phase; chunk += 500) {
        append(lease, queue, values("alo", total + chunk, total + chunk + 500));
      }
      total += phase;
      long started = total - phase + 1_000L;
      await("records flowing in round " + round)
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofMillis(100))
          .until(() -> SourceTestSupport.endOffsetSum(cluster, topic, false) >= started);
      if (SourceTestSupport.endOffsetSum(cluster, topic, false) < total) {
        midFlow++;
      }
      if (round % 2 == 0) {
        cluster.restartConnectorAndTasks(name, false, true, false);
      } else {
        cluster.restartTask(name, 0);
      }
    }
    int expected = total;
    await("every record arrived")
        .atMost(TIMEOUT)
        .until(
            () ->
                valuesOf(readAllFlat(cluster, topic, false)).stream().distinct().count()
                    == expected);
    List<String> vals = valuesOf(readAllFlat(cluster, topic, false));
    Map<String, Integer> counts = new HashMap<>();
    vals.forEach(v -> counts.merge(v, 1, Integer::sum));
    long duplicates = vals.size() - counts.size();
    System.out.printf(
        "at-least-once through 4 restarts (%d in mid-flow): %d records, %d distinct, %d"
            + " duplicates%n",
        midFlow, vals.size(), counts.size(), duplicates);
    assertThat(midFlow).as("restarts that hit records in flight").isGreaterThanOrEqualTo(2);
    assertThat(counts.keySet()).containsExactlyInAnyOrderElementsOf(values("alo", 0, expected));
    cluster.deleteConnector(name);
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(b);
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
}
