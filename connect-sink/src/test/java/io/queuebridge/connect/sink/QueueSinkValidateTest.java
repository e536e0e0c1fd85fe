package io.queuebridge.connect.sink;

import static io.queuebridge.connect.sink.SinkFixture.records;
import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.connect.common.StoreFiles;
import io.queuebridge.core.MutableClock;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link QueueSinkConnector#validate} on {@code file} stores: it opens the store read-only, so it
 * creates nothing where there is no store, and beside a writer (an open store holding the
 * directory's lock, a running task) it reports contract drift and changes no byte.
 */
class QueueSinkValidateTest {
  private static final String HOUR = "3600000";
  private static final String MINUTE = "60000";

  @TempDir Path tmp;

  private static Map<String, String> props(Path store, String retentionMs) {
    Map<String, String> p = new HashMap<>();
    p.put("name", "validate-sink");
    p.put("topics", "in");
    p.put(QueueSinkConfig.QUEUE_NAME_CONFIG, "s");
    p.put(QueueSinkConfig.STORE_TYPE_CONFIG, "file");
    p.put(QueueSinkConfig.STORE_PATH_CONFIG, store.toString());
    p.put(QueueSinkConfig.QUEUE_RETENTION_MS_CONFIG, retentionMs);
    return p;
  }

  /** Every error of the answer, by key. */
  static Map<String, List<String>> errors(Config config) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (ConfigValue v : config.configValues()) {
      if (!v.errorMessages().isEmpty()) {
        out.put(v.name(), v.errorMessages());
      }
    }
    return out;
  }

  static Map<String, List<String>> validate(Map<String, String> props) {
    return errors(new QueueSinkConnector().validate(props));
  }

  /** The drift of retention.max_age from 1 h (stored) to 1 min (asked for), on its key. */
  static void assertRetentionDrift(Map<String, List<String>> errors) {
    assertThat(errors).containsOnlyKeys(QueueSinkConfig.QUEUE_RETENTION_MS_CONFIG);
    assertThat(errors.get(QueueSinkConfig.QUEUE_RETENTION_MS_CONFIG))
        .singleElement()
        .asString()
        .contains("'s'")
        .contains("retention.max_age = PT1H")
        .contains("asks for PT1M");
  }

  @Test
  void aRelativeStorePathAndAQueueNameNoStoreAcceptsFailValidationOnTheirKeys() {
    Map<String, String> relative = props(Path.of("data", "store"), HOUR);
    Map<String, List<String>> errors = validate(relative);
    assertThat(errors).containsOnlyKeys(QueueSinkConfig.STORE_PATH_CONFIG);
    assertThat(errors.get(QueueSinkConfig.STORE_PATH_CONFIG))
        .singleElement()
        .asString()
        .contains("data/store")
        .contains("expected an absolute path");
    assertThat(Path.of("data")).doesNotExist();

    for (String name : List.of("x".repeat(10_000), "a\u0000b", "\ud800")) {
      Map<String, String> bad = props(tmp.resolve("store"), HOUR);
      bad.put(QueueSinkConfig.QUEUE_NAME_CONFIG, name);
      assertThat(validate(bad))
          .as("queue.name of %d characters", name.length())
          .containsOnlyKeys(QueueSinkConfig.QUEUE_NAME_CONFIG);
    }
    assertThat(tmp.resolve("store")).doesNotExist();
  }

  @Test
  void validateOnAFileStoreThatDoesNotExistCreatesNothingAndPasses() {
    Path store = tmp.resolve("not-yet").resolve("store");

    assertThat(validate(props(store, HOUR))).isEmpty();

    assertThat(tmp.resolve("not-yet")).doesNotExist();
    assertThat(StoreFiles.snapshot(tmp)).isEmpty();
  }

  @Test
  void validateBesideAnOpenWritableStoreReportsDriftAndChangesNoByte() throws Exception {
    Path store = tmp.resolve("store");
    try (Storage writer = QueueStores.file(store)) {
      QueueManager manager = new QueueManager(writer, QueueManagerConfig.defaults());
      manager.declareProtectedStream(new QueueSinkConfig(props(store, HOUR)).streamContract());
      List<PublishRequest> batch = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        batch.add(PublishRequest.of("in", ("v" + i).getBytes(StandardCharsets.UTF_8)));
      }
      manager.publishBatchToDurableStream("s", batch, Map.of("in-0", "5"));
      Map<String, String> before = StoreFiles.snapshot(store);
      assertThat(before).isNotEmpty();

      // the writer holds the directory's lock: a writable open here would be refused as locked
      assertRetentionDrift(validate(props(store, MINUTE)));
      assertThat(validate(props(store, HOUR))).as("the stored contract").isEmpty();

      assertThat(StoreFiles.snapshot(store)).isEqualTo(before);
      assertThat(writer.queues().tail("s")).as("the writer goes on").isEqualTo(5);
    }
  }

  @Test
  void aMaxDelayThatDiffersFromTheStoredStreamsIsDriftOnQueueMaxDelayMs() {
    Path store = tmp.resolve("store");
    try (Storage writer = QueueStores.file(store)) {
      new QueueManager(writer, QueueManagerConfig.defaults())
          .declareProtectedStream(new QueueSinkConfig(props(store, HOUR)).streamContract());
    }
    Map<String, String> before = StoreFiles.snapshot(store);
    Map<String, String> longer = props(store, HOUR);
    longer.put(QueueSinkConfig.QUEUE_MAX_DELAY_MS_CONFIG, "2592000000"); // 30 days

    Map<String, List<String>> errors = validate(longer);

    assertThat(errors).containsOnlyKeys(QueueSinkConfig.QUEUE_MAX_DELAY_MS_CONFIG);
    assertThat(errors.get(QueueSinkConfig.QUEUE_MAX_DELAY_MS_CONFIG))
        .singleElement()
        .asString()
        .contains("'s'")
        .contains("limits.max_delay = PT168H")
        .contains("asks for PT720H");
    assertThat(StoreFiles.snapshot(store)).isEqualTo(before);
  }

  @Test
  void validateOnAClosedStoreReportsDriftAndChangesNoByte() {
    Path store = tmp.resolve("store");
    try (Storage writer = QueueStores.file(store)) {
      new QueueManager(writer, QueueManagerConfig.defaults())
          .declareProtectedStream(new QueueSinkConfig(props(store, HOUR)).streamContract());
    }
    Map<String, String> before = StoreFiles.snapshot(store);

    assertRetentionDrift(validate(props(store, MINUTE)));
    assertThat(validate(props(store, HOUR))).isEmpty();

    assertThat(StoreFiles.snapshot(store)).isEqualTo(before);
  }

  @Test
  void validateBesideARunningTaskReportsDriftAndChangesNoByte() {
    Path store = tmp.resolve("store");
    TopicPartition tp = new TopicPartition("in", 0);
    try (Metrics metrics = new Metrics()) {
      QueueSinkTask task = new QueueSinkTask(MutableClock.at("2026-01-01T00:00:00Z"));
      task.initialize(
          new FakeSinkTaskContext(
              new PluginMetricsImpl(metrics, new LinkedHashMap<>(Map.of("task", "t"))), tp));
      task.start(props(store, HOUR));
      try {
        task.open(List.of(tp));
        task.put(records(tp, 0, 10));
        assertThat(task.preCommit(Map.of(tp, new OffsetAndMetadata(Long.MAX_VALUE))))
            .as("the ten records are durable")
            .containsEntry(tp, new OffsetAndMetadata(10));
        Map<String, String> before = StoreFiles.snapshot(store);

        assertRetentionDrift(validate(props(store, MINUTE)));
        assertThat(validate(props(store, HOUR))).isEmpty();

        assertThat(StoreFiles.snapshot(store)).isEqualTo(before);
      } finally {
        task.stop();
      }
    }
  }
}
