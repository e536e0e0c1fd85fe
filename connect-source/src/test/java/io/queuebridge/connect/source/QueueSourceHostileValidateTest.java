package io.queuebridge.connect.source;

import static io.queuebridge.connect.common.HostileConfigValues.assertRefusedOnItsKey;
import static io.queuebridge.connect.common.HostileConfigValues.errors;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.queuebridge.connect.common.HostileConfigValues;
import io.queuebridge.connect.common.QueueConnectorConfig;
import io.queuebridge.connect.common.StoreFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link QueueSourceConnector#validate} on hostile values, as a table: every number key with
 * negative, out-of-type, huge and non-numeric values, queue and group names, topic names and
 * templates, store paths and types, unknown keys. Each answer either refuses the value on its own
 * key (naming the key and the value and saying what was expected) or accepts a value the task
 * accepts too; {@code validate} never throws and creates nothing on disk.
 */
class QueueSourceHostileValidateTest {
  @TempDir Path tmp;

  private Map<String, String> before;

  @BeforeEach
  void snapshot() throws Exception {
    Files.createDirectories(tmp.resolve("root").resolve("sibling"));
    Files.writeString(tmp.resolve("root").resolve("sibling").resolve("keep.txt"), "untouched");
    before = StoreFiles.snapshot(tmp);
  }

  @AfterEach
  void nothingWasCreated() {
    assertThat(StoreFiles.snapshot(tmp)).as("validate creates nothing on disk").isEqualTo(before);
  }

  private Map<String, String> props() {
    Map<String, String> p = new HashMap<>();
    p.put("name", "hostile-source");
    p.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, "q");
    p.put(QueueSourceConfig.TOPIC_CONFIG, "out");
    p.put(QueueSourceConfig.STORE_TYPE_CONFIG, "file");
    p.put(QueueSourceConfig.STORE_PATH_CONFIG, tmp.resolve("root").resolve("store").toString());
    return p;
  }

  private Map<String, List<String>> validate(String key, String value) {
    Map<String, String> p = props();
    p.put(key, value);
    AtomicReference<Map<String, List<String>>> out = new AtomicReference<>();
    assertThatCode(() -> out.set(errors(new QueueSourceConnector().validate(p))))
        .as("validate never throws")
        .doesNotThrowAnyException();
    return out.get();
  }

  /** Values no number key of the source accepts. */
  private static final Set<String> NEVER_A_VALID_NUMBER =
      Set.of(
          "-1",
          "-2147483649",
          "-9223372036854775808",
          "99999999999999999999",
          "1e3",
          "0x10",
          "abc",
          "");

  /** {@code -1} is a setting of its own for the retry budget: retry for ever. */
  private static boolean isASetting(String key, String value) {
    return key.equals(QueueConnectorConfig.RETRY_TIMEOUT_MS_CONFIG) && value.equals("-1");
  }

  static Stream<Arguments> numbers() {
    return HostileConfigValues.numberCases(
        QueueSourceConfig.CONFIG_DEF, Set.of(QueueSourceConfig.TASK_INDEX_CONFIG));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("numbers")
  void aHostileNumberIsRefusedOnItsKeyOrAcceptedByTheTaskToo(String key, String value) {
    Map<String, List<String>> errors = validate(key, value);
    if ((NEVER_A_VALID_NUMBER.contains(value) && !isASetting(key, value)) || !errors.isEmpty()) {
      assertRefusedOnItsKey(errors, key, value);
    } else {
      Map<String, String> p = props();
      p.put(key, value);
      assertThatCode(
              () -> {
                QueueSourceConfig c = new QueueSourceConfig(p);
                c.claimRenewInterval();
                c.startTimestamp();
              })
          .as("what validate accepts, the task's configuration accepts")
          .doesNotThrowAnyException();
    }
  }

  static Stream<Arguments> refused() {
    String names = QueueSourceConfig.QUEUE_NAMES_CONFIG;
    String filter = QueueSourceConfig.QUEUE_FILTER_CONFIG;
    String group = QueueSourceConfig.QUEUE_GROUP_CONFIG;
    String topic = QueueSourceConfig.TOPIC_CONFIG;
    String path = QueueSourceConfig.STORE_PATH_CONFIG;
    String due = QueueSourceConfig.DELIVER_AT_HEADER_CONFIG;
    return Stream.of(
        arguments(named("queue.names with NUL", names), "a\u0000b"),
        arguments(named("queue.names with a newline", names), "q,line\nbreak"),
        arguments(named("queue.names with a lone surrogate", names), "lone\uD800"),
        arguments(named("queue.names of 10,000 characters", names), "x".repeat(10_000)),
        arguments(named("queue.names an empty element", names), "q,,r"),
        arguments(named("queue.group with NUL", group), "g\u0000"),
        arguments(named("queue.group of 10,000 characters", group), "g".repeat(10_000)),
        arguments(named("queue.group with a lone surrogate", group), "g\uDC00"),
        arguments(named("topic with `/`", topic), "a/b"),
        arguments(named("topic `..`", topic), ".."),
        arguments(named("topic with NUL", topic), "o\u0000ut"),
        arguments(named("topic of 10,000 characters", topic), "t".repeat(10_000)),
        arguments(
            named("kafka.dlq.topic with `$`", QueueSourceConfig.KAFKA_DLQ_TOPIC_CONFIG), "$dlq"),
        arguments(
            named(
                "topic.template with an unknown placeholder",
                QueueSourceConfig.TOPIC_TEMPLATE_CONFIG),
            "x-${nope}"),
        arguments(named("consumer.mode unknown", QueueSourceConfig.CONSUMER_MODE_CONFIG), "both"),
        arguments(
            named("start.position unknown", QueueSourceConfig.START_POSITION_CONFIG), "middle"),
        arguments(named("queue.store.path relative", path), "data/store"),
        arguments(named("queue.store.path `..`", path), ".."),
        arguments(named("queue.store.path with NUL", path), "/tmp/a\u0000b"),
        arguments(named("queue.store.path empty", path), ""),
        arguments(named("queue.store.type unknown", QueueSourceConfig.STORE_TYPE_CONFIG), "nope"),
        arguments(
            named("restore.mode not a boolean", QueueSourceConfig.RESTORE_MODE_CONFIG), "perhaps"),
        arguments(named("queue.deliver.at.header with NUL", due), "a\u0000b"),
        arguments(named("queue.deliver.at.header with a lone surrogate", due), "lone\uD800"),
        arguments(named("queue.deliver.at.header of 256 bytes", due), "x".repeat(256)),
        arguments(named("queue.deliver.at.header blank", due), "   "),
        arguments(
            named("queue.deliver.at.header with a leading control character", due), "\u0001x"),
        arguments(named("queue.deliver.at.header with a trailing NUL", due), "x\u0000"));
  }

  @ParameterizedTest(name = "{0}: refused")
  @MethodSource("refused")
  void aHostileValueIsRefusedOnItsKey(String key, String value) {
    Map<String, List<String>> errors = validate(key, value);
    assertRefusedOnItsKey(errors, key, value);
  }

  static Stream<Arguments> accepted() {
    String names = QueueSourceConfig.QUEUE_NAMES_CONFIG;
    String due = QueueSourceConfig.DELIVER_AT_HEADER_CONFIG;
    return Stream.of(
        arguments(named("queue.deliver.at.header a plain name", due), "x-due-ms"),
        arguments(named("queue.deliver.at.header of 255 bytes", due), "x".repeat(255)),
        arguments(named("queue.deliver.at.header padded (trimmed)", due), "  x-due  "),
        arguments(named("queue.names `/` and `a/../b`", names), "/,a/../b"),
        arguments(named("queue.names `$SYS/x`", names), "$SYS/x"),
        arguments(named("queue.names of 200 characters", names), "n".repeat(200)),
        arguments(named("queue.group `..`", QueueSourceConfig.QUEUE_GROUP_CONFIG), ".."),
        arguments(named("an unknown key (a typo)", "queue.nmaes"), "q"),
        arguments(named("an unknown key with NUL", "x\u0000y"), "z\u0000"),
        arguments(named("a worker-level key", "transforms.t.type"), "org.example.Nope"));
  }

  @ParameterizedTest(name = "{0}: accepted, nothing created")
  @MethodSource("accepted")
  void aHostileButValidValueIsAcceptedWithoutCreatingAnything(String key, String value) {
    assertThat(validate(key, value)).isEmpty();
  }
}
