package io.queuebridge.core.store.contract;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.queuebridge.core.ManualScheduler;
import io.queuebridge.core.MutableClock;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueMessageTooLargeException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.message.TimestampType;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.Storage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hostile input through the embedded API, as a table: queue names, group and consumer ids, message
 * keys, values, header and property names, and message sizes, each either refused with an {@link
 * InvalidConfigException} (or {@link QueueMessageTooLargeException}) whose message names the field,
 * a safe rendering of the value and what was expected, or stored and read back byte-identical — the
 * same answer on every store (BEHAVIOUR S-NAMES, L-LIMITS, Q-MSG). Every case also checks that
 * nothing was written outside the store's directory: the tree around it (a sibling directory with a
 * file in it included) is the same before and after.
 *
 * <p>Extend it like {@link StoreContractTest}: open the store under test on a directory, say
 * whether it persists (reopen checks run then) and where it writes files, if it does.
 *
 * <p>The manager is never started (administration, publishing and pulling work before start), so no
 * thread runs; its clock and scheduler are manual.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
public abstract class HostileInputContractTest {
  private static final Instant T0 = Instant.parse("2024-05-01T12:00:00Z");

  /** A fresh directory per case: {@code root/store} for the store, {@code root/sibling} beside. */
  @TempDir protected Path dir;

  private final MutableClock clock = new MutableClock(T0);
  private Storage storage;
  private QueueManager manager;
  private Map<String, String> treeBefore;

  /** Opens the store under test on {@code storeDir}, again on the same data when persistent. */
  protected abstract Storage openStorage(Path storeDir) throws Exception;

  /** Whether the store keeps everything across close and reopen. */
  protected abstract boolean persistent();

  /** Whether the store writes files under the directory it is opened on. */
  protected abstract boolean writesFiles();

  private Path storeDir() {
    return dir.resolve("root").resolve("store");
  }

  @BeforeEach
  void openStore() throws Exception {
    Path sibling = dir.resolve("root").resolve("sibling");
    Files.createDirectories(sibling);
    Files.write(sibling.resolve("keep.txt"), "untouched".getBytes(UTF_8));
    storage = openStorage(storeDir());
    manager = newManager();
    treeBefore = treeOutsideStore();
  }

  @AfterEach
  void closeAndCheckTheTree() throws Exception {
    if (manager != null) {
      manager.stop();
    }
    if (storage != null) {
      storage.close();
    }
    assertThat(treeOutsideStore())
        .as("every file and directory outside the store directory, before and after")
        .isEqualTo(treeBefore);
    if (!writesFiles()) {
      assertThat(Files.exists(storeDir())).as("a store that keeps no files").isFalse();
    }
  }

  private QueueManager newManager() {
    return new QueueManager(
        storage,
        QueueManagerConfig.builder().clock(clock).scheduler(new ManualScheduler(clock)).build());
  }

  /** Reopens the store and the manager (a persistent store's reopen checks). */
  private void reopen() throws Exception {
    manager.stop();
    storage.close();
    storage = openStorage(storeDir());
    manager = newManager();
  }

  /** Path (relative to {@link #dir}) → size and SHA-256 of each file, "dir" for directories. */
  private Map<String, String> treeOutsideStore() throws IOException {
    Map<String, String> tree = new TreeMap<>();
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) all::iterator) {
        if (p.startsWith(storeDir()) && !p.equals(storeDir())) {
          continue;
        }
        String key = dir.relativize(p).toString();
        if (p.equals(storeDir())) {
          tree.put(key, "store dir");
        } else if (Files.isDirectory(p)) {
          tree.put(key, "dir");
        } else {
          byte[] b = Files.readAllBytes(p);
          tree.put(key, b.length + " " + sha256(b));
        }
      }
    }
    if (!writesFiles()) {
      tree.remove(dir.relativize(storeDir()).toString());
    }
    return tree;
  }

  private static String sha256(byte[] b) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  // ------------------------------------------------------------------------------ the tables

  private static final String X10K = "x".repeat(10_000);

  /** Names every store keeps as given (BEHAVIOUR S-NAMES: encoded, they cannot escape). */
  static Stream<Arguments> acceptedNames() {
    return Stream.of(
        arguments(named("`..`", "..")),
        arguments(named("`.`", ".")),
        arguments(named("`...`", "...")),
        arguments(named("`/`", "/")),
        arguments(named("`a/../b`", "a/../b")),
        arguments(named("`../../sibling/keep.txt`", "../../sibling/keep.txt")),
        arguments(named("`/etc/passwd` (absolute)", "/etc/passwd")),
        arguments(named("`\\` (backslash)", "\\")),
        arguments(named("`..\\..\\win`", "..\\..\\win")),
        arguments(named("`%2E%2E` (an encoded `..`)", "%2E%2E")),
        arguments(named("`$SYS/x`", "$SYS/x")),
        arguments(named("`$dlq/orders` (a DLQ name)", "$dlq/orders")),
        arguments(named("`$queue/x`", "$queue/x")),
        arguments(named("`$` alone", "$")),
        arguments(named("`+` and `#` (filter wildcards)", "a/+/#")),
        arguments(named("a single space", " ")),
        arguments(named("leading and trailing spaces", "  padded  ")),
        arguments(named("`queue.cfg` (a file the store writes)", "queue.cfg")),
        arguments(named("`store.lock` (a file the store writes)", "store.lock")),
        arguments(named("`queues` (the store's own directory)", "queues")),
        arguments(named("`CON` (reserved on Windows)", "CON")),
        arguments(named("non-BMP characters (emoji)", "emoji\uD83D\uDE00\uD83D\uDE80")),
        arguments(named("CJK and umlauts", "ümlaut/日本")),
        arguments(named("200 ASCII characters (the limit)", "n".repeat(200))),
        arguments(named("22 three-byte characters (198 bytes encoded)", "日".repeat(22))));
  }

  /** Names every store refuses, with what the message must say. */
  static Stream<Arguments> refusedNames() {
    return Stream.of(
        arguments(named("empty", ""), "a non-empty"),
        arguments(named("NUL alone", "\u0000"), "U+0000 at index 0"),
        arguments(named("NUL inside", "a\u0000b"), "U+0000 at index 1"),
        arguments(named("newline", "line\nbreak"), "U+000A"),
        arguments(named("tab", "tab\t"), "U+0009"),
        arguments(named("DEL", "del\u007F"), "U+007F"),
        arguments(named("C1 control (NEL)", "c1\u0085"), "U+0085"),
        arguments(named("escape sequence", "\u001B[31mred"), "U+001B"),
        arguments(named("lone high surrogate", "lone\uD800"), "unpaired surrogate at index 4"),
        arguments(named("lone low surrogate", "\uDC00lone"), "unpaired surrogate at index 0"),
        arguments(named("201 ASCII characters", "n".repeat(201)), "201 characters"),
        arguments(named("10,000 characters", X10K), "10000 characters"),
        arguments(named("67 slashes (201 bytes encoded)", "/".repeat(67)), "at most 200 bytes"),
        arguments(named("67 three-byte characters", "日".repeat(67)), "at most 200 bytes"));
  }

  /** A refusal's message: names the field and what was expected, safe to print. */
  private static void assertSafeRefusal(Throwable t, String field, String mustSay) {
    assertThat(t).isInstanceOf(InvalidConfigException.class);
    assertThat(((InvalidConfigException) t).field()).isEqualTo(field);
    assertThat(t.getMessage())
        .contains("invalid " + field)
        .contains("expected")
        .contains(mustSay)
        .doesNotContain("\u0000", "\n", "\t", "\u001B", "\u0085")
        .hasSizeLessThan(600);
    assertThat(t.getMessage().chars().filter(c -> Character.isSurrogate((char) c)).count() % 2)
        .as("no lone surrogate in the message")
        .isZero();
  }

  // ------------------------------------------------------------------------------ queue names

  @ParameterizedTest(name = "queue name {0}: stored and read back")
  @MethodSource("acceptedNames")
  void queueNameIsKeptExactly(String name) throws Exception {
    manager.createQueue(QueueConfig.durable(name).build());
    byte[] value = ("in " + name).getBytes(UTF_8);
    long offset = manager.publishTo(name, PublishRequest.of("t", value));
    assertThat(manager.listQueues()).extracting(QueueConfig::name).containsExactly(name);
    assertThat(manager.getQueue(name).name()).isEqualTo(name);

    manager.subscribe(name, "", "c1", "g1");
    List<GroupDelivery> got = manager.consumerGroups().claimBatch(name, "g1", "c1", 10);
    assertThat(got)
        .singleElement()
        .satisfies(d -> assertThat(d.message().value()).isEqualTo(value));
    got.get(0).ack();

    if (persistent()) {
      reopen();
      assertThat(manager.listQueues()).extracting(QueueConfig::name).containsExactly(name);
      assertThat(storage.queues().read(name, offset).value()).isEqualTo(value);
      assertThat(manager.consumerGroups().group(name, "g1"))
          .get()
          .extracting(ConsumerGroupState::committed)
          .isEqualTo(offset + 1);
    }
    manager.deleteQueue(name);
    assertThat(manager.listQueues()).isEmpty();
  }

  @Test
  void namesDifferingOnlyByCaseAreTwoQueues() throws Exception {
    manager.createQueue(QueueConfig.durable("Orders").build());
    manager.createQueue(QueueConfig.durable("orders").build());
    manager.publishTo("Orders", PublishRequest.of("t", "upper".getBytes(UTF_8)));
    manager.publishTo("orders", PublishRequest.of("t", "lower".getBytes(UTF_8)));
    if (persistent()) {
      reopen();
    }
    assertThat(manager.listQueues())
        .extracting(QueueConfig::name)
        .containsExactlyInAnyOrder("Orders", "orders");
    assertThat(storage.queues().read("Orders", 0).value()).isEqualTo("upper".getBytes(UTF_8));
    assertThat(storage.queues().read("orders", 0).value()).isEqualTo("lower".getBytes(UTF_8));
  }

  @ParameterizedTest(name = "queue name {0}: refused")
  @MethodSource("refusedNames")
  void queueNameIsRefusedEverywhere(String name, String mustSay) {
    List<ThrowingCallable> entries =
        List.of(
            () -> manager.createQueue(QueueConfig.durable(name).build()),
            () -> manager.getOrCreateQueue(name),
            () -> storage.queues().createQueue(QueueConfig.durable(name).build()),
            () -> QueueConfig.durable(name).build().validate());
    for (ThrowingCallable call : entries) {
      assertSafeRefusal(catchThrowable(call), "name", mustSay);
    }
    // a manager configured with such a queue is refused when built, not at start
    assertSafeRefusal(
        catchThrowable(
            () ->
                QueueManagerConfig.builder()
                    .queueConfigs(List.of(QueueConfig.durable(name).build()))
                    .build()),
        "queueConfigs[0]",
        mustSay);
    assertThat(catchThrowable(() -> manager.subscribe(name, "", "c1", "g1")))
        .isInstanceOfAny(InvalidConfigException.class, IllegalArgumentException.class)
        .hasMessageContaining("expected");
    assertThat(manager.listQueues()).as("nothing was stored").isEmpty();
  }

  @ParameterizedTest(name = "queue name {0}: looked up, not found")
  @MethodSource("refusedNames")
  void lookingUpAnInvalidNameFindsNothing(String name) throws Exception {
    // a store must not alias it to another queue (a driver writing '?' for a lone surrogate) nor
    // fail as a store error (NUL in a database text parameter)
    manager.createQueue(QueueConfig.durable("lone?").build());
    manager.createQueue(QueueConfig.durable("q").build());
    manager.publishTo("q", PublishRequest.of("t", new byte[] {1}));
    manager.subscribe("q", "", "c1", "g");
    if (!name.isEmpty()) {
      assertThatThrownBy(() -> manager.getQueue(name)).isInstanceOf(QueueNotFoundException.class);
      assertThatThrownBy(() -> manager.deleteQueue(name))
          .isInstanceOf(QueueNotFoundException.class);
      assertThatThrownBy(() -> storage.queues().read(name, 0))
          .isInstanceOf(QueueNotFoundException.class);
      assertThatThrownBy(() -> manager.publishTo(name, PublishRequest.of("t", new byte[] {1})))
          .isInstanceOf(QueueNotFoundException.class);
    }
    assertThat(manager.consumerGroups().group("q", name)).isEmpty();
    assertThatThrownBy(() -> manager.consumerGroups().claimBatch("q", name, "c1", 10))
        .isInstanceOf(GroupNotFoundException.class);
    assertThat(manager.listQueues()).extracting(QueueConfig::name).containsOnly("lone?", "q");
    assertThat(storage.queues().tail("q")).isEqualTo(1);
  }

  // ------------------------------------------------------------------------ group and consumer ids

  @ParameterizedTest(name = "group id {0}: stored and read back")
  @MethodSource("acceptedNames")
  void groupIdIsKeptExactly(String groupId) throws Exception {
    manager.createQueue(QueueConfig.durable("q").build());
    manager.publishTo("q", PublishRequest.of("t", "v".getBytes(UTF_8)));
    manager.subscribe("q", "", "c1", groupId);
    List<GroupDelivery> got = manager.consumerGroups().claimBatch("q", groupId, "c1", 10);
    assertThat(got).singleElement().satisfies(d -> assertThat(d.group()).isEqualTo(groupId));
    got.get(0).ack();
    if (persistent()) {
      reopen();
    }
    assertThat(manager.consumerGroups().groups("q"))
        .singleElement()
        .satisfies(
            g -> {
              assertThat(g.id()).isEqualTo(groupId);
              assertThat(g.committed()).isEqualTo(1);
              assertThat(g.consumers()).containsOnlyKeys("c1");
            });
  }

  @ParameterizedTest(name = "group id {0}: refused")
  @MethodSource("refusedNames")
  void groupIdIsRefusedEverywhere(String groupId, String mustSay) {
    manager.createQueue(QueueConfig.durable("q").build());
    if (!groupId.isEmpty()) { // an empty group id means the client's default group
      assertSafeRefusal(
          catchThrowable(() -> manager.subscribe("q", "", "c1", groupId)), "group id", mustSay);
    }
    assertSafeRefusal(
        catchThrowable(
            () ->
                storage
                    .groups()
                    .createGroup(
                        ConsumerGroupState.create("q", groupId, "", GroupMode.QUEUE, true, T0))),
        "group id",
        mustSay);
    assertThat(manager.consumerGroups().groups("q")).as("nothing was stored").isEmpty();
  }

  @Test
  void aGroupIdTooLongOnceQualifiedByItsPatternIsRefused() {
    manager.createQueue(QueueConfig.durable("q").build());
    String groupId = "g".repeat(190);
    Throwable t = catchThrowable(() -> manager.subscribe("q", "eu/+/orders", "c1", groupId));
    assertSafeRefusal(t, "group id", "at most 200 bytes");
    assertThat(t.getMessage()).contains("202 characters");
    assertThat(manager.consumerGroups().groups("q")).isEmpty();
  }

  /** Consumer (client) ids: any length, but the character rules of names (BEHAVIOUR S-NAMES). */
  static Stream<Arguments> acceptedConsumerIds() {
    return Stream.concat(
        acceptedNames(),
        Stream.of(
            arguments(named("10,000 characters", X10K)),
            arguments(named("67 three-byte characters", "日".repeat(67)))));
  }

  static Stream<Arguments> refusedConsumerIds() {
    return refusedNames()
        .filter(a -> !String.valueOf(a.get()[1]).contains("at most 200 bytes"))
        .filter(a -> !String.valueOf(a.get()[1]).endsWith(" characters"))
        .filter(a -> !String.valueOf(a.get()[1]).equals("a non-empty"));
  }

  @ParameterizedTest(name = "consumer id {0}: stored and read back")
  @MethodSource("acceptedConsumerIds")
  void consumerIdIsKeptExactly(String consumerId) throws Exception {
    manager.createQueue(QueueConfig.durable("q").build());
    manager.publishTo("q", PublishRequest.of("t", "v".getBytes(UTF_8)));
    manager.subscribe("q", "", consumerId, "g");
    List<GroupDelivery> got = manager.consumerGroups().claimBatch("q", "g", consumerId, 10);
    assertThat(got)
        .singleElement()
        .satisfies(d -> assertThat(d.consumerId()).isEqualTo(consumerId));
    if (persistent()) {
      reopen();
    }
    ConsumerGroupState g = manager.consumerGroups().group("q", "g").orElseThrow();
    assertThat(g.consumers()).containsOnlyKeys(consumerId);
    assertThat(g.consumers().get(consumerId))
        .extracting(ConsumerInfo::id, ConsumerInfo::clientId)
        .containsExactly(consumerId, consumerId);
    assertThat(g.pending())
        .singleElement()
        .satisfies(e -> assertThat(e.consumerId()).isEqualTo(consumerId));
  }

  @ParameterizedTest(name = "consumer id {0}: refused")
  @MethodSource("refusedConsumerIds")
  void consumerIdIsRefused(String consumerId, String mustSay) {
    manager.createQueue(QueueConfig.durable("q").build());
    manager.subscribe("q", "", "ok", "g");
    assertSafeRefusal(
        catchThrowable(() -> manager.subscribe("q", "", consumerId, "g")), "consumerId", mustSay);
    assertSafeRefusal(
        catchThrowable(() -> manager.consumerGroups().claimBatch("q", "g", consumerId, 10)),
        "consumerId",
        mustSay);
    assertThat(manager.consumerGroups().group("q", "g").orElseThrow().consumers())
        .as("nothing was stored")
        .containsOnlyKeys("ok");
  }

  @Test
  void anEmptyConsumerIdIsRefused() {
    manager.createQueue(QueueConfig.durable("q").build());
    assertThatThrownBy(() -> manager.subscribe("q", "", "", "g"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("non-empty");
    assertThat(manager.consumerGroups().groups("q")).isEmpty();
  }

  // ------------------------------------------------------------------------------ message content

  private static byte[] allBytes() {
    byte[] b = new byte[512];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) i;
    }
    return b;
  }

  private static final byte[] NOT_UTF8 = {
    (byte) 0xC3, 0x28, (byte) 0xFF, (byte) 0xFE, 0, (byte) 0x80
  };

  /** A publish and the message every store must hand back, field by field. */
  static Stream<Arguments> keptMessages() {
    return Stream.of(
        arguments(
            named("null key and null value (a tombstone)", PublishRequest.builder("t").build())),
        arguments(
            named(
                "0-length key and 0-length value",
                PublishRequest.builder("t").key(new byte[0]).value(new byte[0]).build())),
        arguments(
            named(
                "every byte value in key and value",
                PublishRequest.builder("t").key(allBytes()).value(allBytes()).build())),
        arguments(
            named(
                "non-UTF-8 bytes and NUL in key and value",
                PublishRequest.builder("t").key(NOT_UTF8).value(NOT_UTF8).build())),
        arguments(
            named(
                "header value: non-UTF-8, NUL, empty, null",
                PublishRequest.builder("t")
                    .header("bin", NOT_UTF8)
                    .header("empty", new byte[0])
                    .header("null", null)
                    .build())),
        arguments(
            named(
                "header names: NUL, empty, control, non-BMP, repeated",
                PublishRequest.builder("t")
                    .header("a\u0000b", "1".getBytes(UTF_8))
                    .header("", "2".getBytes(UTF_8))
                    .header("tab\there\n", "3".getBytes(UTF_8))
                    .header("\uD83D\uDE00", "4".getBytes(UTF_8))
                    .header("a\u0000b", "5".getBytes(UTF_8))
                    .build())),
        arguments(
            named(
                "header name of 10,000 characters",
                PublishRequest.builder("t").header(X10K, X10K.getBytes(UTF_8)).build())),
        arguments(
            named(
                "property names and values: NUL, empty, `$`, non-BMP",
                PublishRequest.builder("t")
                    .property("a\u0000b", "v\u0000w")
                    .property("empty", "")
                    .property("$x", "\uD83D\uDE00")
                    .build())),
        arguments(
            named(
                "client id with NUL and `..`",
                PublishRequest.builder("t").clientId("../c\u0000").value(new byte[] {1}).build())),
        arguments(
            named(
                "negative and extreme timestamps",
                PublishRequest.builder("t")
                    .timestamp(Long.MIN_VALUE, TimestampType.CREATE_TIME)
                    .build())),
        arguments(
            named(
                "a 1 MiB value of every byte value",
                PublishRequest.builder("t").value(repeat(allBytes(), 2048)).build())));
  }

  private static byte[] repeat(byte[] unit, int times) {
    byte[] out = new byte[unit.length * times];
    for (int i = 0; i < times; i++) {
      System.arraycopy(unit, 0, out, i * unit.length, unit.length);
    }
    return out;
  }

  @ParameterizedTest(name = "message with {0}: stored and read back byte-identical")
  @MethodSource("keptMessages")
  void messageContentIsKeptExactly(PublishRequest request) throws Exception {
    manager.createQueue(QueueConfig.durable("q").build());
    long offset = manager.publishTo("q", request);
    Consumer<Message> sameAsPublished =
        m -> {
          assertThat(m.key()).isEqualTo(request.key());
          assertThat(m.value()).isEqualTo(request.value());
          assertThat(m.headers()).containsExactlyElementsOf(request.headers());
          assertThat(m.timestamp()).isEqualTo(request.timestamp());
          for (Map.Entry<String, String> p : request.properties().entrySet()) {
            assertThat(m.properties()).containsEntry(p.getKey(), p.getValue());
          }
          if (!request.clientId().isEmpty()) {
            assertThat(m.properties()).containsEntry("x-client-id", request.clientId());
          }
        };
    manager.subscribe("q", "", "c1", "g");
    assertThat(manager.consumerGroups().claimBatch("q", "g", "c1", 10))
        .singleElement()
        .satisfies(d -> sameAsPublished.accept(d.message()));
    if (persistent()) {
      reopen();
    }
    sameAsPublished.accept(storage.queues().read("q", offset));
    assertThat(storage.queues().readBatch("q", 0, 10)).singleElement().satisfies(sameAsPublished);
  }

  /** Strings the stores would write as UTF-8 and read back changed: refused at the publish. */
  static Stream<Arguments> refusedMessages() {
    return Stream.of(
        arguments(
            named("header name with a lone surrogate", (Object) "header name"),
            PublishRequest.builder("t").header("k\uD800", new byte[] {1}).build(),
            "unpaired surrogate at index 1"),
        arguments(
            named("property name with a lone surrogate", (Object) "property name"),
            PublishRequest.builder("t").property("\uDC00p", "v").build(),
            "unpaired surrogate at index 0"),
        arguments(
            named("property value with a lone surrogate", (Object) "property value"),
            PublishRequest.builder("t").property("p", "v\uD800").build(),
            "unpaired surrogate at index 1"),
        arguments(
            named("client id with a lone surrogate", (Object) "clientId"),
            PublishRequest.builder("t").clientId("c\uDBFF").build(),
            "unpaired surrogate at index 1"));
  }

  @ParameterizedTest(name = "message with {0}: refused")
  @MethodSource("refusedMessages")
  void messageStringsThatCannotBeStoredExactlyAreRefused(
      Object field, PublishRequest request, String mustSay) throws Exception {
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    assertSafeRefusal(
        catchThrowable(() -> manager.publishTo("q", request)), (String) field, mustSay);
    assertSafeRefusal(catchThrowable(() -> manager.publish(request)), (String) field, mustSay);
    if (storage.queues().supportsDurableSync()) { // the memory store refuses it before
      assertSafeRefusal(
          catchThrowable(() -> manager.publishBatchDurably("q", List.of(request), Map.of())),
          (String) field,
          mustSay);
    }
    assertThat(storage.queues().tail("q")).as("nothing was appended").isZero();
  }

  @Test
  void aValueOneByteOverTheQueueLimitIsRefusedNamingTheLimit() throws Exception {
    manager.createQueue(QueueConfig.durable("small").maxMessageSize(1024).build());
    byte[] exactly = new byte[1024];
    long offset = manager.publishTo("small", PublishRequest.builder("t").value(exactly).build());
    for (PublishRequest over :
        List.of(
            PublishRequest.builder("t").value(new byte[1025]).build(),
            PublishRequest.builder("t").key(new byte[1]).value(new byte[1024]).build(),
            PublishRequest.builder("t").header("h", new byte[1024]).build())) {
      assertThatThrownBy(() -> manager.publishTo("small", over))
          .isInstanceOf(QueueMessageTooLargeException.class)
          .hasMessageContaining("maximum message size 1024")
          .hasMessageContaining("of queue small")
          .hasMessageContaining("message of 1025 bytes");
    }
    assertThat(storage.queues().tail("small")).isEqualTo(offset + 1);
    assertThat(storage.queues().read("small", offset).value()).isEqualTo(exactly);
  }

  @Test
  void aValueOverTheDefaultLimitIsRefusedNamingTheLimit() {
    manager.createQueue(QueueConfig.durable("q").build());
    int limit = (int) QueueConfig.durable("q").build().maxMessageSize();
    assertThatThrownBy(
            () ->
                manager.publishTo(
                    "q", PublishRequest.builder("t").value(new byte[limit + 1]).build()))
        .isInstanceOf(QueueMessageTooLargeException.class)
        .hasMessageContaining("maximum message size " + limit)
        .hasMessageContaining((limit + 1) + " bytes");
    assertThat(storage.queues().tail("q")).isZero();
  }

  @Test
  void aTopicTooLongToNameTheQueueAPublishWouldCreateIsRefused() {
    String topic = "t/".repeat(5_000);
    Throwable t = catchThrowable(() -> manager.publish(PublishRequest.of(topic, new byte[1])));
    assertSafeRefusal(t, "name", "10000 characters");
    assertThat(manager.listQueues()).isEmpty();
  }

  // ----------------------------------------------------------- sizes, durations and counts

  /** The table of {@link QueueConfig} fields: each hostile number refused naming the field. */
  static Stream<Arguments> refusedQueueConfigs() {
    Duration huge = Duration.ofSeconds(Long.MAX_VALUE);
    return Stream.of(
        arguments(named("maxMessageSize -1", q().maxMessageSize(-1)), "maxMessageSize", "> 0"),
        arguments(named("maxMessageSize 0", q().maxMessageSize(0)), "maxMessageSize", "> 0"),
        arguments(
            named("maxMessageSize Long.MIN_VALUE", q().maxMessageSize(Long.MIN_VALUE)),
            "maxMessageSize",
            "> 0"),
        arguments(named("maxDepth -1", q().maxDepth(-1)), "maxDepth", "> 0"),
        arguments(named("batchSize -1", q().batchSize(-1)), "batchSize", ">= 0"),
        arguments(
            named("heartbeatTimeout -1 ms", q().heartbeatTimeout(Duration.ofMillis(-1))),
            "heartbeatTimeout",
            ">= 0"),
        arguments(
            named("deliveryTimeout -1 ms", q().deliveryTimeout(Duration.ofMillis(-1))),
            "deliveryTimeout",
            "> 0"),
        arguments(
            named("deliveryTimeout 0", q().deliveryTimeout(Duration.ZERO)),
            "deliveryTimeout",
            "> 0"),
        arguments(
            named("deliveryTimeout huge", q().deliveryTimeout(huge)), "deliveryTimeout", "at most"),
        arguments(
            named("heartbeatTimeout huge", q().heartbeatTimeout(huge)),
            "heartbeatTimeout",
            "at most"),
        arguments(
            named("messageTtl -1 s", q().messageTtl(Duration.ofSeconds(-1))), "messageTtl", ">= 0"),
        arguments(named("messageTtl huge", q().messageTtl(huge)), "messageTtl", "at most"),
        arguments(
            named("expiresAfter huge (ephemeral)", QueueConfig.ephemeral("q").expiresAfter(huge)),
            "expiresAfter",
            "at most"),
        arguments(
            named(
                "retention bytes -1",
                q().retention(
                        new io.queuebridge.core.config.RetentionPolicy(Duration.ZERO, -1, 0))),
            "retention",
            "non-negative"),
        arguments(
            named(
                "retention messages -1",
                q().retention(
                        new io.queuebridge.core.config.RetentionPolicy(Duration.ZERO, 0, -1))),
            "retention",
            "non-negative"),
        arguments(
            named(
                "retention time -1 s",
                q().retention(
                        new io.queuebridge.core.config.RetentionPolicy(
                            Duration.ofSeconds(-1), 0, 0))),
            "retention",
            "non-negative"),
        arguments(
            named(
                "retention time huge",
                q().retention(new io.queuebridge.core.config.RetentionPolicy(huge, 0, 0))),
            "retention.retentionTime",
            "at most"),
        arguments(
            named(
                "retry maxRetries -1",
                q().retryPolicy(retry(-1, Duration.ZERO, Duration.ZERO, 1.0, Duration.ZERO))),
            "retryPolicy.maxRetries",
            ">= 0"),
        arguments(
            named(
                "retry initialBackoff -1 s",
                q().retryPolicy(
                        retry(1, Duration.ofSeconds(-1), Duration.ZERO, 1.0, Duration.ZERO))),
            "retryPolicy.initialBackoff",
            ">= 0"),
        arguments(
            named(
                "retry maxBackoff below initialBackoff",
                q().retryPolicy(
                        retry(
                            1, Duration.ofSeconds(2), Duration.ofSeconds(1), 1.0, Duration.ZERO))),
            "retryPolicy.maxBackoff",
            ">= retryPolicy.initialBackoff"),
        arguments(
            named(
                "retry maxBackoff huge",
                q().retryPolicy(retry(1, Duration.ZERO, huge, 2.0, Duration.ZERO))),
            "retryPolicy.maxBackoff",
            "at most"),
        arguments(
            named(
                "retry multiplier NaN",
                q().retryPolicy(retry(1, Duration.ZERO, Duration.ZERO, Double.NaN, Duration.ZERO))),
            "retryPolicy.backoffMultiplier",
            ">= 1.0"),
        arguments(
            named(
                "retry multiplier 0.5",
                q().retryPolicy(retry(1, Duration.ZERO, Duration.ZERO, 0.5, Duration.ZERO))),
            "retryPolicy.backoffMultiplier",
            ">= 1.0"),
        arguments(
            named(
                "retry totalTimeout -1 s",
                q().retryPolicy(
                        retry(1, Duration.ZERO, Duration.ZERO, 1.0, Duration.ofSeconds(-1)))),
            "retryPolicy.totalTimeout",
            ">= 0"),
        arguments(
            named(
                "retry totalTimeout huge",
                q().retryPolicy(retry(1, Duration.ZERO, Duration.ZERO, 1.0, huge))),
            "retryPolicy.totalTimeout",
            "at most"));
  }

  private static QueueConfig.Builder q() {
    return QueueConfig.durable("q");
  }

  private static io.queuebridge.core.config.RetryPolicy retry(
      int max, Duration initial, Duration maxBackoff, double multiplier, Duration total) {
    return new io.queuebridge.core.config.RetryPolicy(max, initial, maxBackoff, multiplier, total);
  }

  @ParameterizedTest(name = "queue config {0}: refused")
  @MethodSource("refusedQueueConfigs")
  void queueConfigNumbersAreRefusedNamingTheField(
      QueueConfig.Builder builder, String field, String mustSay) {
    QueueConfig config = builder.build();
    for (ThrowingCallable call :
        List.<ThrowingCallable>of(
            config::validate,
            () -> manager.createQueue(config),
            () -> storage.queues().createQueue(config))) {
      assertSafeRefusal(catchThrowable(call), field, mustSay);
    }
    assertThat(manager.listQueues()).isEmpty();
  }

  /** Extremes a queue accepts, stored exactly and working: a publish, a claim, a nack. */
  static Stream<Arguments> acceptedQueueConfigs() {
    Duration century = Duration.ofDays(36_500);
    return Stream.of(
        arguments(named("maxMessageSize Long.MAX_VALUE", q().maxMessageSize(Long.MAX_VALUE))),
        arguments(named("maxDepth Long.MAX_VALUE", q().maxDepth(Long.MAX_VALUE))),
        arguments(named("batchSize Integer.MAX_VALUE", q().batchSize(Integer.MAX_VALUE))),
        arguments(named("batchSize 0 (the manager's)", q().batchSize(0))),
        arguments(named("heartbeatTimeout 100 years", q().heartbeatTimeout(century))),
        arguments(named("heartbeatTimeout 1 ns", q().heartbeatTimeout(Duration.ofNanos(1)))),
        arguments(named("messageTtl 0 (never expires)", q().messageTtl(Duration.ZERO))),
        arguments(named("messageTtl 100 years (the limit)", q().messageTtl(century))),
        arguments(named("deliveryTimeout 100 years", q().deliveryTimeout(century))),
        arguments(named("deliveryTimeout 1 ns", q().deliveryTimeout(Duration.ofNanos(1)))),
        arguments(
            named(
                "retention: 100 years, Long.MAX_VALUE bytes and messages",
                q().retention(
                        new io.queuebridge.core.config.RetentionPolicy(
                            century, Long.MAX_VALUE, Long.MAX_VALUE)))),
        arguments(
            named(
                "retry: Integer.MAX_VALUE retries, 100-year backoffs, multiplier 1e308",
                q().retryPolicy(retry(Integer.MAX_VALUE, century, century, 1e308, century)))),
        arguments(
            named(
                "retry: multiplier +Infinity",
                q().retryPolicy(
                        retry(
                            3,
                            Duration.ofSeconds(1),
                            Duration.ofHours(1),
                            Double.POSITIVE_INFINITY,
                            Duration.ZERO)))));
  }

  @ParameterizedTest(name = "queue config {0}: stored exactly and usable")
  @MethodSource("acceptedQueueConfigs")
  void queueConfigExtremesAreStoredExactlyAndWork(QueueConfig.Builder builder) throws Exception {
    QueueConfig config = builder.build();
    manager.createQueue(config);
    manager.publishTo("q", PublishRequest.of("t", new byte[] {1, 2, 3}));
    manager.subscribe("q", "", "c1", "g");
    GroupDelivery d = manager.consumerGroups().claimBatch("q", "g", "c1", 10).get(0);
    assertThat(d.message().value()).containsExactly(1, 2, 3);
    d.nack();
    if (persistent()) {
      reopen();
    }
    assertThat(manager.getQueue("q")).isEqualTo(config);
    assertThat(manager.consumerGroups().group("q", "g").orElseThrow().pending()).hasSize(1);
  }
}
