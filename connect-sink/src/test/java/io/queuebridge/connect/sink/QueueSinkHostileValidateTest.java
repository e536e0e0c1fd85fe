package io.queuebridge.connect.sink;

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
 * {@link QueueSinkConnector#validate} on hostile values, as a table: every number key with
 * negative, out-of-type, huge and non-numeric values, names, store paths and types, unknown keys.
 * Each answer either refuses the value on its own key (naming the key and the value and saying what
 * was expected) or accepts a value the task accepts too; {@code validate} never throws and creates
 * nothing on disk (the directory around the configured store is the same before and after).
 */
class QueueSinkHostileValidateTest {
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
    p.put("name", "hostile-sink");
    p.put("topics", "in");
    p.put(QueueSinkConfig.QUEUE_NAME_CONFIG, "s");
    p.put(QueueSinkConfig.STORE_TYPE_CONFIG, "file");
    p.put(QueueSinkConfig.STORE_PATH_CONFIG, tmp.resolve("root").resolve("store").toString());
    return p;
  }

  private Map<String, List<String>> validate(String key, String value) {
    Map<String, String> p = props();
    p.put(key, value);
    AtomicReference<Map<String, List<String>>> out = new AtomicReference<>();
    assertThatCode(() -> out.set(errors(new QueueSinkConnector().validate(p))))
        .as("validate never throws")
        .doesNotThrowAnyException();
    return out.get();
  }

  /** Values no number key of the sink accepts. */
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
    return HostileConfigValues.numberCases(QueueSinkConfig.CONFIG_DEF, Set.of());
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
      assertThatCode(() -> new QueueSinkConfig(p).streamContract().validate())
          .as("what validate accepts, the task's declaration accepts")
          .doesNotThrowAnyException();
    }
  }

  static Stream<Arguments> refused() {
    String name = QueueSinkConfig.QUEUE_NAME_CONFIG;
    String path = QueueSinkConfig.STORE_PATH_CONFIG;
    String type = QueueSinkConfig.STORE_TYPE_CONFIG;
    String topics = QueueSinkConfig.QUEUE_TOPICS_CONFIG;
    String routing = QueueSinkConfig.QUEUE_ROUTING_CONFIG;
    String retention = QueueSinkConfig.QUEUE_RETENTION_MS_CONFIG;
    String ttl = QueueSinkConfig.QUEUE_MESSAGE_TTL_MS_CONFIG;
    String delay = QueueSinkConfig.DELAY_HEADER_CONFIG;
    String deliverAt = QueueSinkConfig.DELIVER_AT_HEADER_CONFIG;
    return Stream.of(
        arguments(named("queue.name empty", name), ""),
        arguments(named("queue.name with NUL", name), "a\u0000b"),
        arguments(named("queue.name with a newline", name), "line\nbreak"),
        arguments(named("queue.name with a lone surrogate", name), "lone\uD800"),
        arguments(named("queue.name of 10,000 characters", name), "x".repeat(10_000)),
        arguments(named("queue.store.path relative", path), "data/store"),
        arguments(named("queue.store.path `..`", path), ".."),
        arguments(named("queue.store.path `../escape`", path), "../escape"),
        arguments(named("queue.store.path with NUL", path), "/tmp/a\u0000b"),
        arguments(named("queue.store.path empty", path), ""),
        arguments(named("queue.store.type unknown", type), "nope"),
        arguments(named("queue.store.type empty", type), ""),
        arguments(named("queue.store.type with NUL", type), "fi\u0000le"),
        arguments(named("queue.topics with a misplaced `#`", topics), "a/#/b"),
        arguments(named("queue.topics with NUL", topics), "a\u0000b"),
        arguments(named("queue.routing unknown", routing), "sideways"),
        arguments(named("queue.retention.ms over 100 years", retention), "3153600000001"),
        arguments(named("queue.message.ttl.ms Long.MAX_VALUE", ttl), "9223372036854775807"),
        arguments(
            named("queue.max.delay.ms over 100 years", QueueSinkConfig.QUEUE_MAX_DELAY_MS_CONFIG),
            "3153600000001"),
        arguments(
            named("queue.max.delay.ms negative", QueueSinkConfig.QUEUE_MAX_DELAY_MS_CONFIG), "-1"),
        arguments(
            named("forward.kafka.key not a boolean", QueueSinkConfig.FORWARD_KEY_CONFIG), "maybe"),
        arguments(named("queue.write.pipelined empty", QueueSinkConfig.WRITE_PIPELINED_CONFIG), ""),
        arguments(named("queue.delay.header with NUL", delay), "a\u0000b"),
        arguments(named("queue.delay.header with a newline", delay), "line\nbreak"),
        arguments(named("queue.delay.header with a lone surrogate", delay), "lone\uD800"),
        arguments(named("queue.delay.header of 256 bytes", delay), "x".repeat(256)),
        arguments(
            named("queue.delay.header of 128 two-byte characters", delay), "\u00E9".repeat(128)),
        arguments(named("queue.delay.header of 10,000 characters", delay), "x".repeat(10_000)),
        arguments(named("queue.delay.header blank", delay), "   "),
        arguments(named("queue.delay.header with a leading control character", delay), "\u0001x"),
        arguments(named("queue.delay.header with a trailing NUL", delay), "x\u0000"),
        arguments(named("queue.deliver.at.header with NUL", deliverAt), "a\u0000b"),
        arguments(named("queue.deliver.at.header blank", deliverAt), " "));
  }

  @ParameterizedTest(name = "{0}: refused")
  @MethodSource("refused")
  void aHostileValueIsRefusedOnItsKey(String key, String value) {
    assertRefusedOnItsKey(validate(key, value), key, value);
  }

  static Stream<Arguments> accepted() {
    String name = QueueSinkConfig.QUEUE_NAME_CONFIG;
    String delay = QueueSinkConfig.DELAY_HEADER_CONFIG;
    String deliverAt = QueueSinkConfig.DELIVER_AT_HEADER_CONFIG;
    return Stream.of(
        arguments(named("queue.name `..`", name), ".."),
        arguments(named("queue.name `/`", name), "/"),
        arguments(named("queue.name `a/../b`", name), "a/../b"),
        arguments(named("queue.name `$SYS/x`", name), "$SYS/x"),
        arguments(named("queue.name of 200 characters", name), "n".repeat(200)),
        arguments(named("queue.name with emoji", name), "s\uD83D\uDE00"),
        arguments(
            named("queue.store.path absolute through `..`", QueueSinkConfig.STORE_PATH_CONFIG),
            "/nonexistent-queue-bridge/../nonexistent-queue-bridge-store"),
        arguments(named("an unknown key (a typo)", "queue.nmae"), "s"),
        arguments(named("an unknown key with NUL", "x\u0000y"), "z\u0000"),
        arguments(named("an unknown key of 10,000 characters", "k".repeat(10_000)), "v"),
        arguments(named("a worker-level key", "transforms.t.type"), "org.example.Nope"),
        arguments(named("queue.delay.header a plain name", delay), "x-delay-ms"),
        arguments(named("queue.delay.header empty (none)", delay), ""),
        arguments(named("queue.delay.header with a space and accents", delay), "d\u00E9lai ms"),
        arguments(named("queue.delay.header with emoji", delay), "delay\uD83D\uDE00"),
        arguments(named("queue.delay.header of 255 bytes", delay), "x".repeat(255)),
        arguments(named("queue.delay.header padded (trimmed)", delay), "  x-delay  "),
        arguments(named("queue.deliver.at.header a plain name", deliverAt), "x-deliver-at"),
        arguments(
            named("queue.max.delay.ms of 30 days", QueueSinkConfig.QUEUE_MAX_DELAY_MS_CONFIG),
            "2592000000"));
  }

  @ParameterizedTest(name = "{0}: accepted, nothing created")
  @MethodSource("accepted")
  void aHostileButValidValueIsAcceptedWithoutCreatingAnything(String key, String value) {
    assertThat(validate(key, value)).isEmpty();
    assertThat(Path.of("/nonexistent-queue-bridge-store")).doesNotExist();
  }

  @ParameterizedTest(name = "both header keys `{0}`: refused on queue.deliver.at.header")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"x-due", "  x-due"})
  void bothHeaderKeysNamingOneHeaderAreRefusedOnTheSecond(String deliverAt) {
    Map<String, String> p = props();
    p.put(QueueSinkConfig.DELAY_HEADER_CONFIG, "x-due");
    p.put(QueueSinkConfig.DELIVER_AT_HEADER_CONFIG, deliverAt);
    Map<String, List<String>> errors = errors(new QueueSinkConnector().validate(p));
    assertRefusedOnItsKey(errors, QueueSinkConfig.DELIVER_AT_HEADER_CONFIG, "x-due");
    assertThat(errors.get(QueueSinkConfig.DELIVER_AT_HEADER_CONFIG))
        .singleElement()
        .asString()
        .contains("names the same header as queue.delay.header");
  }
}
