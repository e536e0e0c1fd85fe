package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.connect.common.StoreFiles;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigValue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link QueueSourceConnector#validate} in {@code consumer.mode=shared} on {@code file} stores: the
 * queue selection is read from the store opened read-only, so validation creates nothing where
 * there is no store, and beside a writer holding the store it still refuses streams and changes no
 * byte.
 */
class QueueSourceValidateTest {
  @TempDir Path tmp;

  static Map<String, String> sharedProps(String queues) {
    Map<String, String> p = new HashMap<>();
    p.put("name", "validate-source");
    p.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, queues);
    p.put(QueueSourceConfig.TOPIC_CONFIG, "out");
    p.put(QueueSourceConfig.CONSUMER_MODE_CONFIG, "shared");
    return p;
  }

  static Map<String, String> fileProps(Path store, String queues) {
    Map<String, String> p = sharedProps(queues);
    p.put(QueueSourceConfig.STORE_TYPE_CONFIG, "file");
    p.put(QueueSourceConfig.STORE_PATH_CONFIG, store.toString());
    return p;
  }

  /** Every error of the answer, by key. */
  static Map<String, List<String>> validate(Map<String, String> props) {
    Config config = new QueueSourceConnector().validate(props);
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (ConfigValue v : config.configValues()) {
      if (!v.errorMessages().isEmpty()) {
        out.put(v.name(), v.errorMessages());
      }
    }
    return out;
  }

  /** Creates the stream {@code stream} and the classic queue {@code classic}. */
  static void createQueues(Storage storage, String stream, String classic) {
    QueueManager manager = new QueueManager(storage, QueueManagerConfig.defaults());
    manager.createQueue(QueueConfig.durable(stream).type(QueueType.STREAM).build());
    manager.createQueue(QueueConfig.durable(classic).build());
  }

  /** The shared-mode refusal of the stream {@code stream}, on consumer.mode. */
  static void assertStreamRefused(Map<String, List<String>> errors, String stream) {
    assertThat(errors).containsOnlyKeys(QueueSourceConfig.CONSUMER_MODE_CONFIG);
    assertThat(errors.get(QueueSourceConfig.CONSUMER_MODE_CONFIG))
        .singleElement()
        .asString()
        .contains("[" + stream + "]")
        .contains("classic queues only");
  }

  @Test
  void sharedModeValidateOnAFileStoreThatDoesNotExistCreatesNothingAndPasses() {
    Path store = tmp.resolve("not-yet").resolve("store");

    assertThat(validate(fileProps(store, "a,b"))).isEmpty();

    assertThat(tmp.resolve("not-yet")).doesNotExist();
    assertThat(StoreFiles.snapshot(tmp)).isEmpty();
  }

  @Test
  void sharedModeValidateBesideAnOpenWritableStoreRefusesStreamsAndChangesNoByte() {
    Path store = tmp.resolve("store");
    try (Storage writer = QueueStores.file(store)) {
      createQueues(writer, "events", "jobs");
      Map<String, String> before = StoreFiles.snapshot(store);

      // the writer holds the directory's lock: a writable open here would be refused as locked
      assertStreamRefused(validate(fileProps(store, "events,jobs")), "events");
      assertThat(validate(fileProps(store, "jobs,not-yet"))).as("classic queues only").isEmpty();

      assertThat(StoreFiles.snapshot(store)).isEqualTo(before);
    }
  }

  @Test
  void sharedModeValidateOnAClosedStoreRefusesStreamsAndChangesNoByte() {
    Path store = tmp.resolve("store");
    try (Storage writer = QueueStores.file(store)) {
      createQueues(writer, "events", "jobs");
    }
    Map<String, String> before = StoreFiles.snapshot(store);

    assertStreamRefused(validate(fileProps(store, "events")), "events");
    assertThat(validate(fileProps(store, "jobs"))).isEmpty();

    assertThat(StoreFiles.snapshot(store)).isEqualTo(before);
  }

  @Test
  void dedicatedModeValidateDoesNotReadTheStore() {
    Path store = tmp.resolve("store");
    Map<String, String> props = fileProps(store, "events");
    props.put(QueueSourceConfig.CONSUMER_MODE_CONFIG, "dedicated");

    assertThat(validate(props)).isEmpty();

    assertThat(StoreFiles.snapshot(tmp)).isEmpty();
  }
}
