package io.queuebridge.core.store.contract;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.tuple;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.config.RetentionPolicy;
import io.queuebridge.core.errors.ConsumerGroupExistsException;
import io.queuebridge.core.errors.GroupNotFoundException;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.OffsetOutOfRangeException;
import io.queuebridge.core.errors.PendingEntryNotFoundException;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.ReadOnlyStoreException;
import io.queuebridge.core.errors.ReservedQueueException;
import io.queuebridge.core.errors.StoreClosedException;
import io.queuebridge.core.errors.StoreNotFoundException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.MessageState;
import io.queuebridge.core.message.TimestampType;
import io.queuebridge.core.store.AppendResult;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.GroupOverview;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.PreparedBatch;
import io.queuebridge.core.store.Storage;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store contract kit: every documented rule of {@link io.queuebridge.core.store.QueueStore},
 * {@link DurableQueueStore}, {@link ConsumerGroupStore} and {@link Storage} as a test (BEHAVIOUR
 * S-QUEUE, Q-DUR, S-GROUP, Q-DEDUP). A store is correct when its subclass of this class passes.
 *
 * <p><b>Use.</b> Extend it in your store's tests and answer three questions:
 *
 * <pre>{@code
 * class MyStoreContractTest extends StoreContractTest {
 *   @Override protected Storage openStorage(Path dir) { return MyStore.open(dir); }
 *   @Override protected boolean persistent() { return true; }   // reopen tests run
 *   @Override protected boolean durableSync() { return true; }  // what supportsDurableSync() says
 * }
 * }</pre>
 *
 * Optional hooks ({@link #exactTruncation()}, {@link #exactTimeOffset()}) tighten assertions for
 * stores that promise more than the SPI; {@link #openReadOnly(Path)} runs the read-only rules for a
 * store with a read-only open. Each test gets a fresh {@link TempDir} and a store opened on it
 * before the test; the kit closes it (and every read-only store a test opened) afterwards.
 *
 * <p><b>What the kit assumes.</b> Time lookups ({@code timeOffset}) are driven by each message's
 * {@link Message#createdAt()}, which the kit sets; the manager stamps it at append in production.
 * The store must keep every field of a message exactly, instants to the nanosecond included.
 *
 * <p>Tests are named by the rule they pin. They wait with Awaitility and never sleep; the few
 * timeouts passed to {@code awaitAppend} are short on purpose.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
public abstract class StoreContractTest {

  /** A fixed instant for group timestamps and createdAt values. */
  protected static final Instant T0 = Instant.parse("2024-05-01T12:00:00.123456789Z");

  /** A fresh directory per test, for stores that keep files. */
  @TempDir protected Path dir;

  /** The store under test, opened on {@link #dir} before each test. */
  protected Storage storage;

  private ExecutorService executor;

  private final List<Storage> readOnlyStores = new ArrayList<>();

  /**
   * Opens the store under test on {@code dir}: a new store for an empty directory, and, when {@link
   * #persistent()}, the previous store's data again for a directory a closed store left behind.
   * Non-persistent stores may ignore {@code dir}.
   */
  protected abstract Storage openStorage(Path dir) throws Exception;

  /**
   * Whether the store keeps everything across {@code close()} and {@link #openStorage} on the same
   * directory. When true the reopen tests run; when false they are skipped.
   */
  protected abstract boolean persistent();

  /** What {@link DurableQueueStore#supportsDurableSync()} must answer for this store. */
  protected abstract boolean durableSync();

  /**
   * Whether the store can hold data an earlier release wrote (it encodes messages and reopens
   * them), so that it must read the property names those releases stored under today's names
   * (BEHAVIOUR Q-MSG). Defaults to {@link #persistent()}.
   */
  protected boolean readsEarlierReleases() {
    return persistent();
  }

  /**
   * Whether {@code truncate} removes exactly the messages below the requested offset (head ==
   * requested afterwards). Default false: a coarse store (whole segments) may keep more, and the
   * kit then only checks {@code head <= requested} and that everything from the request on is
   * readable.
   */
  protected boolean exactTruncation() {
    return false;
  }

  /**
   * Whether {@code timeOffset} answers exactly (the first message whose createdAt is at or after
   * the time). Default false: the kit then checks only that any answer lies between the head and
   * the exact answer.
   */
  protected boolean exactTimeOffset() {
    return false;
  }

  /**
   * Whether a second {@link #openStorage} on the same directory, while the first store is open,
   * gives another instance on the same data (a database each instance reaches with its own pool, as
   * separate processes would). When true the concurrency rules run their members on separate
   * instances, each under its own engine; when false on one instance under one engine. Default
   * false.
   */
  protected boolean sharedAcrossInstances() {
    return false;
  }

  /**
   * Opens read-only ({@link io.queuebridge.core.store.QueueStoreProvider#openReadOnly}) the store
   * that {@link #openStorage} opens on {@code dir}, beside the writer the kit keeps open there. For
   * a directory on which no store was ever opened it must throw {@link StoreNotFoundException} and
   * create nothing. Default: empty, the store has no read-only open, and the read-only rules are
   * skipped.
   */
  protected Optional<Storage> openReadOnly(Path dir) throws Exception {
    return Optional.empty();
  }

  @BeforeEach
  void openStoreUnderTest() throws Exception {
    executor = Executors.newCachedThreadPool();
    storage = openStorage(dir);
  }

  @AfterEach
  void closeStoreUnderTest() throws InterruptedException {
    try {
      readOnlyStores.forEach(Storage::close);
      if (storage != null) {
        storage.close();
      }
    } finally {
      executor.shutdownNow();
      assertThat(executor.awaitTermination(30, TimeUnit.SECONDS))
          .as("test threads finished")
          .isTrue();
    }
  }

  /** Closes the store and opens it again on the same directory. Only for persistent stores. */
  protected void reopen() throws Exception {
    storage.close();
    storage = null;
    storage = openStorage(dir);
  }

  /** The queue half of the store under test. */
  protected DurableQueueStore queues() {
    return storage.queues();
  }

  /** The group half of the store under test. */
  protected ConsumerGroupStore groups() {
    return storage.groups();
  }

  // ===========================================================================================
  // Storage
  // ===========================================================================================

  @Test
  void storageHandsOutTheSamePartsAndDescribesItself() {
    assertThat(storage.queues()).isNotNull().isSameAs(storage.queues());
    assertThat(storage.groups()).isNotNull().isSameAs(storage.groups());
    assertThat(storage.description()).isNotBlank();
  }

  @Test
  void newStoreIsEmpty() {
    assertThat(queues().listQueues()).isEmpty();
    assertThat(queues().findMatchingQueues("a/b")).isEmpty();
  }

  // ===========================================================================================
  // Queue administration
  // ===========================================================================================

  @Test
  void createQueueStartsAnEmptyLogAtOffsetZero() {
    QueueConfig config = QueueConfig.durable("q").build();
    queues().createQueue(config);
    assertThat(queues().getQueue("q")).isEqualTo(config);
    assertThat(queues().head("q")).isZero();
    assertThat(queues().tail("q")).isZero();
    assertThat(queues().count("q")).isZero();
    assertThat(queues().readBatch("q", 0, 10)).isEmpty();
  }

  @Test
  void createQueueKeepsEveryConfigField() {
    QueueConfig config =
        QueueConfig.reservedStream("$dlq/orders")
            .topics("orders/+", "$queue/orders/#")
            .primaryGroup("billing")
            .retention(new RetentionPolicy(Duration.ofHours(3), 1 << 20, 5000))
            .maxMessageSize(4096)
            .maxDepth(77)
            .messageTtl(Duration.ZERO)
            .deliveryTimeout(Duration.ofSeconds(9))
            .batchSize(7)
            .heartbeatTimeout(Duration.ofSeconds(11))
            .maxDelay(Duration.ofHours(2))
            .lastConsumerDisconnect(T0)
            .build();
    queues().createQueue(config);
    assertThat(queues().getQueue("$dlq/orders")).isEqualTo(config);
    assertThat(queues().getQueue("$dlq/orders").maxDelay()).isEqualTo(Duration.ofHours(2));
    assertThat(queues().getQueue("$dlq/orders").type()).isEqualTo(QueueType.STREAM);
  }

  @Test
  void createQueueKeepsTheOrdering() {
    QueueConfig byTenant =
        QueueConfig.durable("by-tenant").ordering(OrderingKey.property("tenant")).build();
    QueueConfig byKey = QueueConfig.durable("by-key").ordering(OrderingKey.MESSAGE_KEY).build();
    queues().createQueue(byTenant);
    queues().createQueue(byKey);
    assertThat(queues().getQueue("by-tenant").ordering()).isEqualTo(OrderingKey.property("tenant"));
    assertThat(queues().getQueue("by-key")).isEqualTo(byKey);
    queues().updateQueue(byKey.toBuilder().ordering(OrderingKey.NONE).build());
    assertThat(queues().getQueue("by-key").ordering()).isEqualTo(OrderingKey.NONE);
  }

  @Test
  void createQueueRefusesAnExistingNameAndKeepsTheOriginal() {
    QueueConfig original = QueueConfig.durable("q").topics("a").build();
    queues().createQueue(original);
    queues().append("q", message("kept"));
    assertThatThrownBy(() -> queues().createQueue(QueueConfig.durable("q").topics("b").build()))
        .isInstanceOf(QueueAlreadyExistsException.class)
        .hasMessageContaining("q");
    assertThat(queues().getQueue("q")).isEqualTo(original);
    assertThat(queues().tail("q")).isEqualTo(1);
    assertThat(queues().findMatchingQueues("a")).containsExactly("q");
    assertThat(queues().findMatchingQueues("b")).isEmpty();
  }

  @Test
  void createQueueRejectsAMalformedTopicFilterAndCreatesNothing() {
    for (String bad : List.of("a/#/b", "a+", "#x", "")) {
      assertThatThrownBy(() -> queues().createQueue(QueueConfig.durable("q").topics(bad).build()))
          .as("filter '%s'", bad)
          .isInstanceOf(InvalidConfigException.class);
    }
    assertThat(queues().listQueues()).isEmpty();
    assertThatThrownBy(() -> queues().getQueue("q")).isInstanceOf(QueueNotFoundException.class);
    assertThat(queues().findMatchingQueues("a/x/b")).isEmpty();
  }

  @Test
  void getQueueOfAnUnknownQueueIsQueueNotFound() {
    assertThatThrownBy(() -> queues().getQueue("nope"))
        .isInstanceOf(QueueNotFoundException.class)
        .hasMessageContaining("nope");
  }

  @Test
  void updateQueueReplacesTheConfigWholesale() {
    queues().createQueue(QueueConfig.durable("q").maxDepth(10).primaryGroup("g").build());
    QueueConfig next = QueueConfig.durable("q").maxDepth(20).lastConsumerDisconnect(T0).build();
    queues().updateQueue(next);
    assertThat(queues().getQueue("q")).isEqualTo(next);
    assertThat(queues().getQueue("q").primaryGroup()).isEmpty();
  }

  @Test
  void updateQueueReindexesTopicFilters() {
    queues().createQueue(QueueConfig.durable("q").topics("old/#").build());
    assertThat(queues().findMatchingQueues("old/x")).containsExactly("q");
    queues().updateQueue(QueueConfig.durable("q").topics("new/+").build());
    assertThat(queues().findMatchingQueues("old/x")).isEmpty();
    assertThat(queues().findMatchingQueues("new/x")).containsExactly("q");
  }

  @Test
  void updateQueueRejectsAMalformedTopicFilterAndKeepsTheOldConfig() {
    QueueConfig original = QueueConfig.durable("q").topics("a").build();
    queues().createQueue(original);
    assertThatThrownBy(() -> queues().updateQueue(QueueConfig.durable("q").topics("a/#/b").build()))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("a/#/b");
    assertThat(queues().getQueue("q")).isEqualTo(original);
    assertThat(queues().findMatchingQueues("a")).containsExactly("q");
  }

  @Test
  void updateQueueOfAnUnknownQueueIsQueueNotFound() {
    assertThatThrownBy(() -> queues().updateQueue(QueueConfig.durable("nope").build()))
        .isInstanceOf(QueueNotFoundException.class);
    assertThat(queues().listQueues()).isEmpty();
  }

  @Test
  void deleteQueueRemovesConfigLogGroupsAndIndexEntries() {
    queues().createQueue(QueueConfig.durable("q").topics("a/#").build());
    queues().append("q", message("x"));
    groups().createGroup(group("q", "g"));
    queues().deleteQueue("q");
    assertThatThrownBy(() -> queues().getQueue("q")).isInstanceOf(QueueNotFoundException.class);
    assertThatThrownBy(() -> queues().tail("q")).isInstanceOf(QueueNotFoundException.class);
    assertThatThrownBy(() -> queues().read("q", 0)).isInstanceOf(QueueNotFoundException.class);
    assertThatThrownBy(() -> groups().listGroups("q")).isInstanceOf(QueueNotFoundException.class);
    assertThat(queues().listQueues()).isEmpty();
    assertThat(queues().findMatchingQueues("a/b")).isEmpty();
  }

  @Test
  void deleteQueueRefusesAReservedQueueAndDeletesNothing() {
    QueueConfig reserved = QueueConfig.reservedStream("sys").topics("s/#").build();
    queues().createQueue(reserved);
    queues().append("sys", message("x"));
    groups().createGroup(group("sys", "g"));
    assertThatThrownBy(() -> queues().deleteQueue("sys"))
        .isInstanceOf(ReservedQueueException.class)
        .hasMessageContaining("sys");
    assertThat(queues().getQueue("sys")).isEqualTo(reserved);
    assertThat(utf8(queues().read("sys", 0))).isEqualTo("x");
    assertThat(groups().findGroup("sys", "g")).isPresent();
    assertThat(queues().findMatchingQueues("s/1")).containsExactly("sys");
  }

  @Test
  void deleteQueueOfAnUnknownQueueIsQueueNotFound() {
    assertThatThrownBy(() -> queues().deleteQueue("nope"))
        .isInstanceOf(QueueNotFoundException.class)
        .hasMessageContaining("nope");
  }

  @Test
  void aDeletedNameCanBeCreatedAgainEmpty() throws InterruptedException {
    queues().createQueue(QueueConfig.durable("q").topics("a").build());
    queues().appendBatchAndSync("q", List.of(message("1"), message("2")), Map.of("p", "1"));
    groups().createGroup(group("q", "g"));
    queues().deleteQueue("q");
    QueueConfig again = QueueConfig.durable("q").topics("b").build();
    queues().createQueue(again);
    assertThat(queues().getQueue("q")).isEqualTo(again);
    assertThat(queues().head("q")).isZero();
    assertThat(queues().tail("q")).isZero();
    assertThat(queues().checkpoints("q")).isEmpty();
    assertThat(groups().listGroups("q")).isEmpty();
    assertThat(queues().findMatchingQueues("a")).isEmpty();
    assertThat(queues().findMatchingQueues("b")).containsExactly("q");
    assertThat(queues().append("q", message("new"))).isZero();
  }

  @Test
  void listQueuesReturnsEveryConfig() {
    QueueConfig a = QueueConfig.durable("a").build();
    QueueConfig b = QueueConfig.ephemeral("b").build();
    QueueConfig c = QueueConfig.reservedStream("c").build();
    queues().createQueue(a);
    queues().createQueue(b);
    queues().createQueue(c);
    assertThat(queues().listQueues()).containsExactlyInAnyOrder(a, b, c);
  }

  @Test
  void findMatchingQueuesReturnsEachMatchingQueueOnce() {
    queues().createQueue(QueueConfig.durable("both").topics("orders/+", "orders/#").build());
    queues().createQueue(QueueConfig.durable("plus").topics("orders/+").build());
    queues().createQueue(QueueConfig.durable("other").topics("users/#").build());
    queues().createQueue(QueueConfig.durable("all").topics("#").build());
    queues().createQueue(QueueConfig.durable("sys").topics("$queue/#").build());
    assertThat(queues().findMatchingQueues("orders/1"))
        .containsExactlyInAnyOrder("both", "plus", "all")
        .doesNotHaveDuplicates();
    assertThat(queues().findMatchingQueues("orders"))
        .containsExactlyInAnyOrder("both", "all"); // a/# matches a
    assertThat(queues().findMatchingQueues("$queue/x")).containsExactly("sys");
    assertThat(queues().findMatchingQueues("")).isEmpty();
  }

  @Test
  void queueNamesMayContainSlashesDollarsAndDots() {
    List<String> names = List.of("$dlq/orders", "a/b/c", "x.y-z_1", "$queue");
    for (String name : names) {
      queues().createQueue(QueueConfig.durable(name).build());
      queues().append(name, message(name));
    }
    for (String name : names) {
      assertThat(utf8(queues().read(name, 0))).isEqualTo(name);
      assertThat(queues().tail(name)).isEqualTo(1);
    }
    assertThat(queues().listQueues())
        .extracting(QueueConfig::name)
        .containsExactlyInAnyOrderElementsOf(names);
  }

  // ===========================================================================================
  // Append and read
  // ===========================================================================================

  @Test
  void appendAssignsConsecutiveOffsetsFromTheTail() {
    queues().createQueue(QueueConfig.durable("q").build());
    for (int i = 0; i < 5; i++) {
      assertThat(queues().append("q", message("m" + i))).isEqualTo(i);
      assertThat(queues().tail("q")).isEqualTo(i + 1);
    }
    for (int i = 0; i < 5; i++) {
      Message m = queues().read("q", i);
      assertThat(m.offset()).isEqualTo(i);
      assertThat(utf8(m)).isEqualTo("m" + i);
    }
  }

  @Test
  void appendedMessageCarriesItsOffsetAndEveryOtherFieldAsGiven() {
    queues().createQueue(QueueConfig.durable("q").build());
    Message given =
        Message.builder()
            .id("msg-1")
            .topic("orders/eu/1")
            .key(new byte[] {0, 1, 2, (byte) 0xff})
            .value("värde".getBytes(UTF_8))
            .header(Header.of("trace", "abc"))
            .header(Header.of("trace", "def"))
            .header("bin", new byte[] {(byte) 0x80, 0})
            .timestamp(1_714_564_800_123L, TimestampType.CREATE_TIME)
            .createdAt(T0)
            .expiresAt(T0.plus(Duration.ofDays(7)).plusNanos(1))
            .state(MessageState.RETRY)
            .property(MessageProperties.CLIENT_ID, "c-1")
            .property("x-empty", "")
            .build();
    long offset = queues().append("q", given);
    Message read = queues().read("q", offset);
    assertThat(read).isEqualTo(given.withOffset(offset));
    assertThat(read.offset()).isEqualTo(offset);
    assertThat(queues().readBatch("q", offset, 1)).containsExactly(given.withOffset(offset));
  }

  @Test
  void propertiesStoredUnderTheNamesOfEarlierReleasesReadUnderTodays() throws Exception {
    assumeThat(readsEarlierReleases())
        .as("the store holds no data written by an earlier release")
        .isTrue();
    queues().createQueue(QueueConfig.durable("q").build());
    Message old =
        Message.builder()
            .value("dead".getBytes(UTF_8))
            .property("client_id", "c-1")
            .property("_dlq_original_queue", "jobs")
            .property("_dlq_reason", "poison")
            .property("tenant", "eu")
            .build();
    long offset = queues().append("q", old);
    reopen();
    assertThat(queues().read("q", offset).properties())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                MessageProperties.CLIENT_ID,
                "c-1",
                MessageProperties.DLQ_ORIGINAL_QUEUE,
                "jobs",
                MessageProperties.DLQ_REASON,
                "poison",
                "tenant",
                "eu"));
  }

  @Test
  void messageWithDefaultFieldsRoundTrips() {
    queues().createQueue(QueueConfig.durable("q").build());
    Message bare = Message.builder().build();
    long offset = queues().append("q", bare);
    Message read = queues().read("q", offset);
    assertThat(read).isEqualTo(bare.withOffset(offset));
    assertThat(read.createdAt()).isNull();
    assertThat(read.expiresAt()).isNull();
    assertThat(read.timestampType()).isEqualTo(TimestampType.NO_TIMESTAMP);
  }

  @Test
  void appendBatchAssignsContiguousOffsetsInListOrder() {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().append("q", message("first"));
    long firstOffset = queues().appendBatch("q", List.of(message("a"), message("b"), message("c")));
    assertThat(firstOffset).isEqualTo(1);
    assertThat(queues().tail("q")).isEqualTo(4);
    assertThat(queues().readBatch("q", 0, 10))
        .extracting(StoreContractTest::utf8)
        .containsExactly("first", "a", "b", "c");
    assertThat(queues().readBatch("q", 0, 10))
        .extracting(Message::offset)
        .containsExactly(0L, 1L, 2L, 3L);
  }

  @Test
  void readBatchRaisesAStartBelowTheHeadToTheHeadAndEndsAtTheTail() {
    // the group coordinator claims from a cursor that may lie below the head, without asking for
    // the head or the tail first
    queues().createQueue(QueueConfig.durable("q").build());
    for (int i = 0; i < 6; i++) {
      queues().append("q", message("m" + i));
    }
    queues().truncate("q", 3);
    long head = queues().head("q");
    assertThat(head).isBetween(0L, 3L);
    assertThat(queues().readBatch("q", 0, 100))
        .extracting(Message::offset)
        .containsExactlyElementsOf(java.util.stream.LongStream.range(head, 6).boxed().toList());
    assertThat(queues().readBatch("q", 6, 10)).isEmpty();
    assertThat(queues().readBatch("q", 60, 10)).isEmpty();
  }

  @Test
  void appendBatchRefusesAnEmptyListAndWritesNothing() {
    queues().createQueue(QueueConfig.durable("q").build());
    assertThatThrownBy(() -> queues().appendBatch("q", List.of()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(queues().tail("q")).isZero();
  }

  @Test
  void everyQueueOperationOnAnUnknownQueueIsQueueNotFound() {
    Map<String, ThrowingCallable> calls = new LinkedHashMap<>();
    calls.put("append", () -> queues().append("nope", message("x")));
    calls.put("appendBatch", () -> queues().appendBatch("nope", List.of(message("x"))));
    calls.put("appendAndSync", () -> queues().appendAndSync("nope", message("x")));
    calls.put(
        "appendBatchAndSync",
        () -> queues().appendBatchAndSync("nope", List.of(message("x")), Map.of()));
    calls.put("checkpoints", () -> queues().checkpoints("nope"));
    calls.put("read", () -> queues().read("nope", 0));
    calls.put("readBatch", () -> queues().readBatch("nope", 0, 1));
    calls.put("head", () -> queues().head("nope"));
    calls.put("tail", () -> queues().tail("nope"));
    calls.put("count", () -> queues().count("nope"));
    calls.put("truncate", () -> queues().truncate("nope", 1));
    calls.put("awaitAppend", () -> queues().awaitAppend("nope", 0, Duration.ZERO));
    calls.forEach(
        (name, call) ->
            assertThatThrownBy(call).as(name).isInstanceOf(QueueNotFoundException.class));
  }

  @Test
  void optionalLookupsOnAnUnknownQueueNeverMakeUpAnOffset() throws Exception {
    for (Callable<OptionalLong> lookup :
        List.<Callable<OptionalLong>>of(
            () -> queues().timeOffset("nope", T0),
            () -> queues().sizeOffset("nope", 100),
            () -> queues().bytes("nope"))) {
      OptionalLong answer;
      try {
        answer = lookup.call();
      } catch (QueueNotFoundException expected) {
        continue;
      }
      assertThat(answer).as("a store without the capability answers empty").isEmpty();
    }
  }

  @Test
  void readOutsideHeadAndTailIsOffsetOutOfRange() {
    queues().createQueue(QueueConfig.durable("q").build());
    assertThatThrownBy(() -> queues().read("q", 0))
        .isInstanceOfSatisfying(
            OffsetOutOfRangeException.class,
            e -> {
              assertThat(e.offset()).isZero();
              assertThat(e.head()).isZero();
              assertThat(e.tail()).isZero();
            });
    queues().appendBatch("q", List.of(message("a"), message("b")));
    for (long offset : new long[] {-1, 2, 3, Long.MAX_VALUE}) {
      assertThatThrownBy(() -> queues().read("q", offset))
          .as("offset %d", offset)
          .isInstanceOfSatisfying(
              OffsetOutOfRangeException.class,
              e -> {
                assertThat(e.offset()).isEqualTo(offset);
                assertThat(e.tail()).isEqualTo(2);
              });
    }
  }

  @Test
  void readBatchReturnsUpToLimitInOffsetOrder() {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 10);
    assertThat(queues().readBatch("q", 2, 3))
        .extracting(Message::offset)
        .containsExactly(2L, 3L, 4L);
    assertThat(queues().readBatch("q", 8, 100)).extracting(Message::offset).containsExactly(8L, 9L);
    assertThat(queues().readBatch("q", 0, Integer.MAX_VALUE)).hasSize(10);
  }

  @Test
  void readBatchRaisesAStartBelowTheHeadToTheHead() {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 10);
    queues().truncate("q", 4);
    long head = queues().head("q");
    List<Message> batch = queues().readBatch("q", 0, 3);
    assertThat(batch).extracting(Message::offset).containsExactly(head, head + 1, head + 2);
    assertThat(queues().readBatch("q", -100, 1)).extracting(Message::offset).containsExactly(head);
  }

  @Test
  void readBatchAtOrPastTheTailIsEmpty() {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 3);
    assertThat(queues().readBatch("q", 3, 10)).isNotNull().isEmpty();
    assertThat(queues().readBatch("q", 1000, 10)).isNotNull().isEmpty();
  }

  @Test
  void readBatchRefusesANonPositiveLimit() {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 3);
    assertThatThrownBy(() -> queues().readBatch("q", 0, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> queues().readBatch("q", 0, -1))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void countIsTailMinusHead() {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 7);
    assertThat(queues().count("q")).isEqualTo(7);
    queues().truncate("q", 3);
    assertThat(queues().count("q")).isEqualTo(queues().tail("q") - queues().head("q"));
  }

  @Test
  void nullKeyAndValueStayDistinctFromEmpty() {
    queues().createQueue(QueueConfig.durable("q").build());
    byte[] empty = new byte[0];
    List<Message> given =
        List.of(
            Message.builder().key(null).value(null).build(),
            Message.builder().key(empty).value(null).build(),
            Message.builder().key(null).value(empty).build(),
            Message.builder().key(empty).value(empty).build());
    long first = queues().appendBatch("q", given);
    assertThat(queues().read("q", first).key()).isNull();
    assertThat(queues().read("q", first).value()).isNull();
    assertThat(queues().read("q", first + 1).key()).isEmpty();
    assertThat(queues().read("q", first + 1).value()).isNull();
    assertThat(queues().read("q", first + 2).key()).isNull();
    assertThat(queues().read("q", first + 2).value()).isEmpty();
    assertThat(queues().read("q", first + 3).key()).isEmpty();
    assertThat(queues().read("q", first + 3).value()).isEmpty();
  }

  @Test
  void headersKeepOrderRepeatedKeysAndNullValuesByteForByte() {
    queues().createQueue(QueueConfig.durable("q").build());
    List<Header> headers =
        List.of(
            Header.of("k", new byte[] {1}),
            Header.of("a", (byte[]) null),
            Header.of("k", new byte[0]),
            Header.of("", new byte[] {0, 0}),
            Header.of("ключ", new byte[] {(byte) 0xff, (byte) 0xfe, 0x7f}),
            Header.of("k", new byte[] {2}),
            Header.of("a", "text"));
    long offset = queues().append("q", Message.builder().headers(headers).build());
    List<Header> read = queues().read("q", offset).headers();
    assertThat(read).containsExactlyElementsOf(headers);
    assertThat(read.get(1).value()).isNull();
    assertThat(read.get(2).value()).isEmpty();
  }

  @Test
  void propertiesRoundTripInOrder() {
    queues().createQueue(QueueConfig.durable("q").build());
    Map<String, String> props = new LinkedHashMap<>();
    props.put("z", "1");
    props.put("a", "");
    props.put("x-source-topic", "orders/1");
    props.put("ünicode", "välue ✓");
    long offset = queues().append("q", Message.builder().properties(props).build());
    assertThat(queues().read("q", offset).properties()).containsExactlyEntriesOf(props);
  }

  @Test
  void storedMessagesAreImmutableAgainstCallerBuffers() {
    queues().createQueue(QueueConfig.durable("q").build());
    byte[] key = "key".getBytes(UTF_8);
    byte[] value = "value".getBytes(UTF_8);
    byte[] header = "header".getBytes(UTF_8);
    long offset =
        queues().append("q", Message.builder().key(key).value(value).header("h", header).build());
    long batched =
        queues().appendBatch("q", List.of(Message.builder().key(key).value(value).build()));
    key[0] = 'X';
    value[0] = 'X';
    header[0] = 'X';
    Message read = queues().read("q", offset);
    read.key()[0] = 'Y';
    read.value()[0] = 'Y';
    read.headers().get(0).value()[0] = 'Y';
    for (long o : new long[] {offset, batched}) {
      Message again = queues().read("q", o);
      assertThat(new String(again.key(), UTF_8)).isEqualTo("key");
      assertThat(new String(again.value(), UTF_8)).isEqualTo("value");
    }
    assertThat(new String(queues().read("q", offset).headers().get(0).value(), UTF_8))
        .isEqualTo("header");
  }

  @Test
  void largeValuesRoundTrip() {
    queues().createQueue(QueueConfig.durable("q").build());
    byte[] big = new byte[1 << 20];
    for (int i = 0; i < big.length; i++) {
      big[i] = (byte) (i * 31 + 7);
    }
    long offset = queues().append("q", Message.builder().value(big).build());
    queues().append("q", message("after"));
    assertThat(queues().read("q", offset).value()).isEqualTo(big);
    assertThat(utf8(queues().read("q", offset + 1))).isEqualTo("after");
  }

  @Test
  void queuesHaveIndependentLogs() {
    queues().createQueue(QueueConfig.durable("a").build());
    queues().createQueue(QueueConfig.durable("b").build());
    queues().append("a", message("a0"));
    queues().append("a", message("a1"));
    assertThat(queues().append("b", message("b0"))).isZero();
    assertThat(queues().tail("a")).isEqualTo(2);
    queues().truncate("a", 2);
    assertThat(utf8(queues().read("b", 0))).isEqualTo("b0");
  }

  @Test
  void concurrentAppendsGetContiguousUniqueOffsetsInEachCallersOrder() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    int threads = 4;
    int callsPerThread = 300;
    List<Future<List<long[]>>> results = new ArrayList<>();
    CountDownLatch start = new CountDownLatch(1);
    for (int t = 0; t < threads; t++) {
      int thread = t;
      results.add(
          executor.submit(
              () -> {
                start.await();
                List<long[]> offsets = new ArrayList<>(); // {first, size}
                for (int i = 0; i < callsPerThread; i++) {
                  int size = 1 + (i % 4);
                  List<Message> batch = new ArrayList<>();
                  for (int j = 0; j < size; j++) {
                    batch.add(message(thread + ":" + i + ":" + j));
                  }
                  long first =
                      size == 1
                          ? queues().append("q", batch.get(0))
                          : queues().appendBatch("q", batch);
                  offsets.add(new long[] {first, size});
                }
                return offsets;
              }));
    }
    start.countDown();
    TreeSet<Long> seen = new TreeSet<>();
    long total = 0;
    for (int t = 0; t < threads; t++) {
      long previous = -1;
      List<long[]> calls = results.get(t).get(1, TimeUnit.MINUTES);
      for (int i = 0; i < calls.size(); i++) {
        long first = calls.get(i)[0];
        int size = (int) calls.get(i)[1];
        assertThat(first).as("offsets grow in one caller's order").isGreaterThan(previous);
        previous = first;
        for (int j = 0; j < size; j++) {
          assertThat(seen.add(first + j)).as("offset %d handed out once", first + j).isTrue();
          assertThat(utf8(queues().read("q", first + j))).isEqualTo(t + ":" + i + ":" + j);
        }
        total += size;
      }
    }
    assertThat(queues().tail("q")).isEqualTo(total);
    assertThat(seen.first()).isZero();
    assertThat(seen.last()).isEqualTo(total - 1);
    assertThat(seen).hasSize((int) total);
  }

  @Test
  void tailNeverRunsAheadOfReadableData() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    AtomicBoolean done = new AtomicBoolean();
    Future<Integer> reader =
        executor.submit(
            () -> {
              int checks = 0;
              while (!done.get() || checks == 0) {
                long tail = queues().tail("q");
                if (tail > 0) {
                  assertThat(queues().read("q", tail - 1).offset()).isEqualTo(tail - 1);
                  assertThat(queues().readBatch("q", tail - 1, 10)).isNotEmpty();
                }
                checks++;
              }
              return checks;
            });
    try {
      for (int i = 0; i < 500; i++) {
        if (i % 2 == 0) {
          queues().append("q", message("m" + i));
        } else {
          queues().appendBatch("q", List.of(message("a" + i), message("b" + i)));
        }
      }
    } finally {
      done.set(true);
    }
    assertThat(reader.get(1, TimeUnit.MINUTES)).isPositive();
  }

  // ===========================================================================================
  // Truncation
  // ===========================================================================================

  @Test
  void truncateRemovesMessagesBelowTheRequestedOffsetAndKeepsTheRest() {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 20);
    queues().truncate("q", 12);
    long head = queues().head("q");
    assertThat(head).isBetween(0L, 12L);
    if (exactTruncation()) {
      assertThat(head).isEqualTo(12);
    }
    assertThat(queues().tail("q")).isEqualTo(20);
    for (long o = head; o < 20; o++) {
      assertThat(utf8(queues().read("q", o))).isEqualTo("v" + o);
    }
    if (head > 0) {
      assertThatThrownBy(() -> queues().read("q", head - 1))
          .isInstanceOf(OffsetOutOfRangeException.class);
    }
  }

  @Test
  void truncateAtOrBelowTheHeadDoesNothing() {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 10);
    queues().truncate("q", 5);
    long head = queues().head("q");
    queues().truncate("q", head);
    queues().truncate("q", 0);
    queues().truncate("q", -3);
    assertThat(queues().head("q")).isEqualTo(head);
    assertThat(queues().tail("q")).isEqualTo(10);
  }

  @Test
  void truncateAboveTheTailClampsToTheTail() {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 10);
    queues().truncate("q", 1_000);
    assertThat(queues().tail("q")).isEqualTo(10);
    assertThat(queues().head("q")).isBetween(0L, 10L);
    if (exactTruncation()) {
      assertThat(queues().head("q")).isEqualTo(10);
      assertThat(queues().count("q")).isZero();
    }
    assertThat(queues().append("q", message("v10"))).isEqualTo(10);
    assertThat(utf8(queues().read("q", 10))).isEqualTo("v10");
  }

  @Test
  void truncateOfAnEmptyQueueKeepsItEmptyAtZero() {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().truncate("q", 5);
    assertThat(queues().head("q")).isZero();
    assertThat(queues().tail("q")).isZero();
    assertThat(queues().append("q", message("first"))).isZero();
  }

  @Test
  void appendsContinueAtTheTailAfterTruncation() {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 10);
    queues().truncate("q", 10);
    assertThat(queues().append("q", message("v10"))).isEqualTo(10);
    assertThat(queues().appendBatch("q", List.of(message("v11"), message("v12")))).isEqualTo(11);
    assertThat(queues().readBatch("q", 10, 10))
        .extracting(StoreContractTest::utf8)
        .containsExactly("v10", "v11", "v12");
  }

  @Test
  void repeatedTruncationsOnlyEverMoveTheHeadForward() {
    queues().createQueue(QueueConfig.durable("q").build());
    long previousHead = 0;
    for (int round = 0; round < 20; round++) {
      appendValues("q", 25);
      long tail = queues().tail("q");
      long requested = tail - 10;
      queues().truncate("q", requested);
      long head = queues().head("q");
      assertThat(head).isBetween(previousHead, requested);
      assertThat(utf8(queues().read("q", requested))).isEqualTo("v" + requested);
      previousHead = head;
    }
  }

  // ===========================================================================================
  // Optional lookups
  // ===========================================================================================

  @Test
  void timeOffsetOfAnEmptyQueueIsTheHead() {
    queues().createQueue(QueueConfig.durable("q").build());
    OptionalLong answer = queues().timeOffset("q", T0);
    answer.ifPresent(o -> assertThat(o).isZero());
  }

  @Test
  void timeOffsetIsNeverLaterThanTheFirstMessageCreatedAtOrAfterTheTime() {
    queues().createQueue(QueueConfig.durable("q").build());
    int n = 200;
    for (int i = 0; i < n; i++) {
      queues().append("q", message("v" + i, T0.plusSeconds(10L * i)));
    }
    queues().truncate("q", 20);
    long head = queues().head("q");
    for (long seconds = -10; seconds <= 10L * n + 10; seconds += 7) {
      Instant at = T0.plusSeconds(seconds);
      long exact = Math.max(head, Math.min(n, Math.floorDiv(seconds + 9, 10)));
      OptionalLong answer = queues().timeOffset("q", at);
      if (answer.isPresent()) {
        assertThat(answer.getAsLong()).as("timeOffset(%s)", at).isBetween(head, exact);
        if (exactTimeOffset()) {
          assertThat(answer.getAsLong()).as("exact timeOffset(%s)", at).isEqualTo(exact);
        }
      }
    }
    OptionalLong atTheLast = queues().timeOffset("q", T0.plusSeconds(10L * (n - 1)));
    atTheLast.ifPresent(o -> assertThat(o).isBetween(head, n - 1L));
  }

  @Test
  void sizeOffsetStaysWithinTheLogAndShrinksAsTheBudgetGrows() {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().sizeOffset("q", 1000).ifPresent(o -> assertThat(o).isZero());
    for (int i = 0; i < 100; i++) {
      queues().append("q", Message.builder().value(new byte[100]).build());
    }
    queues().truncate("q", 10);
    long head = queues().head("q");
    long tail = queues().tail("q");
    long previous = Long.MAX_VALUE;
    for (long budget : new long[] {0, 1, 150, 1_000, 5_000, 20_000, 100_000, 1 << 30}) {
      OptionalLong answer = queues().sizeOffset("q", budget);
      if (answer.isPresent()) {
        long o = answer.getAsLong();
        assertThat(o).as("sizeOffset(%d)", budget).isBetween(head, tail);
        assertThat(o)
            .as("sizeOffset(%d) does not grow with the budget", budget)
            .isLessThanOrEqualTo(previous);
        previous = o;
      }
    }
    queues()
        .sizeOffset("q", Long.MAX_VALUE)
        .ifPresent(o -> assertThat(o).as("an unlimited budget keeps everything").isEqualTo(head));
  }

  // ===========================================================================================
  // awaitAppend
  // ===========================================================================================

  @Test
  void awaitAppendWakesUpOnAppend() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 3);
    AtomicReference<Thread> waiterThread = new AtomicReference<>();
    CompletableFuture<Boolean> waiter =
        CompletableFuture.supplyAsync(
            () -> {
              waiterThread.set(Thread.currentThread());
              return awaitUnchecked("q", 3, Duration.ofMinutes(1));
            },
            executor);
    awaitParked(waiterThread);
    assertThat(waiter).isNotDone();
    queues().append("q", message("v3"));
    assertThat(waiter.get(30, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void awaitAppendTakesATimeoutTooLongToCountInNanoseconds() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    AtomicReference<Thread> waiterThread = new AtomicReference<>();
    CompletableFuture<Boolean> waiter =
        CompletableFuture.supplyAsync(
            () -> {
              waiterThread.set(Thread.currentThread());
              return awaitUnchecked("q", 0, Duration.ofSeconds(Long.MAX_VALUE));
            },
            executor);
    awaitParked(waiterThread);
    assertThat(waiter).isNotDone();
    queues().append("q", message("v0"));
    assertThat(waiter.get(30, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void awaitAppendReturnsFalseWhenTheTimeoutPasses() throws InterruptedException {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 2);
    long started = System.nanoTime();
    assertThat(queues().awaitAppend("q", 2, Duration.ofMillis(50))).isFalse();
    assertThat(System.nanoTime() - started)
        .as("waited for the timeout")
        .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(40));
    assertThat(queues().awaitAppend("q", 5, Duration.ZERO)).isFalse();
  }

  @Test
  void awaitAppendReturnsAtOnceWhenTheOffsetExistsOrWasTruncated() throws InterruptedException {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 5);
    assertThat(queues().awaitAppend("q", 4, Duration.ZERO)).isTrue();
    assertThat(queues().awaitAppend("q", 0, Duration.ofMinutes(1))).isTrue();
    queues().truncate("q", 5);
    assertThat(queues().awaitAppend("q", 2, Duration.ZERO)).isTrue();
    assertThat(queues().awaitAppend("q", 5, Duration.ZERO)).isFalse();
  }

  @Test
  void awaitAppendIsInterruptible() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    AtomicReference<Thread> waiterThread = new AtomicReference<>();
    Future<Boolean> waiter =
        executor.submit(
            () -> {
              waiterThread.set(Thread.currentThread());
              return queues().awaitAppend("q", 0, Duration.ofMinutes(1));
            });
    awaitParked(waiterThread);
    waiterThread.get().interrupt();
    assertThatThrownBy(() -> waiter.get(30, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(InterruptedException.class);
    assertThat(queues().tail("q")).isZero();
  }

  // ===========================================================================================
  // Durable appends and checkpoints
  // ===========================================================================================

  @Test
  void supportsDurableSyncIsHonest() {
    assertThat(queues().supportsDurableSync()).isEqualTo(durableSync());
  }

  @Test
  void appendAndSyncAppendsAtTheTail() throws InterruptedException {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().append("q", message("v0"));
    assertThat(queues().appendAndSync("q", message("v1"))).isEqualTo(1);
    assertThat(queues().appendBatchAndSync("q", List.of(message("v2"), message("v3")), Map.of()))
        .isEqualTo(2);
    assertThat(queues().readBatch("q", 0, 10))
        .extracting(StoreContractTest::utf8)
        .containsExactly("v0", "v1", "v2", "v3");
  }

  @Test
  void checkpointsStartEmpty() {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().append("q", message("plain"));
    assertThat(queues().checkpoints("q")).isEmpty();
  }

  @Test
  void appendBatchAndSyncMergesCheckpointsWithTheBatch() throws InterruptedException {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().createQueue(QueueConfig.durable("other").build());
    queues().appendBatchAndSync("q", List.of(message("a")), Map.of("t-0", "5", "t-1", "9"));
    assertThat(queues().checkpoints("q"))
        .containsExactlyInAnyOrderEntriesOf(Map.of("t-0", "5", "t-1", "9"));
    queues().appendBatchAndSync("q", List.of(message("b")), Map.of("t-1", "10", "t-2", "1"));
    queues().appendBatchAndSync("q", List.of(message("c")), Map.of());
    queues().append("q", message("d"));
    queues().appendAndSync("q", message("e"));
    assertThat(queues().checkpoints("q"))
        .containsExactlyInAnyOrderEntriesOf(Map.of("t-0", "5", "t-1", "10", "t-2", "1"));
    assertThat(queues().checkpoints("other")).isEmpty();
  }

  @Test
  void aPreparedBatchStoresNothingUntilAppendedAndThenIsAppendBatchAndSync()
      throws InterruptedException {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().append("q", message("v0"));
    PreparedBatch prepared = queues().prepareBatch("q", List.of(message("v1"), message("v2")));
    PreparedBatch later = queues().prepareBatch("q", List.of(message("v3")));
    PreparedBatch plain = PreparedBatch.of("q", List.of(message("v4")));
    assertThat(prepared.queue()).isEqualTo("q");
    assertThat(prepared.messages()).extracting(StoreContractTest::utf8).containsExactly("v1", "v2");
    assertThat(queues().tail("q")).as("preparing stores nothing").isEqualTo(1);
    assertThat(queues().checkpoints("q")).isEmpty();

    assertThat(queues().appendPreparedAndSync(prepared, Map.of("t-0", "2"))).isEqualTo(1);
    assertThat(queues().appendPreparedAndSync(later, Map.of("t-0", "3"))).isEqualTo(3);
    assertThat(queues().appendPreparedAndSync(plain, Map.of())).as("not prepared").isEqualTo(4);
    assertThat(queues().readBatch("q", 0, 10))
        .extracting(StoreContractTest::utf8)
        .containsExactly("v0", "v1", "v2", "v3", "v4");
    assertThat(queues().checkpoints("q")).containsExactlyEntriesOf(Map.of("t-0", "3"));
    assertThatThrownBy(
            () ->
                queues()
                    .appendPreparedAndSync(
                        queues().prepareBatch("nope", List.of(message("x"))), Map.of()))
        .as("a queue that does not exist is found out when appending")
        .isInstanceOf(QueueNotFoundException.class);
    assertThatThrownBy(() -> queues().prepareBatch("q", List.of()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void checkpointsReturnsACopy() throws InterruptedException {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().appendBatchAndSync("q", List.of(message("a")), Map.of("k", "1"));
    Map<String, String> copy = queues().checkpoints("q");
    catchThrowable(() -> copy.put("k", "changed"));
    catchThrowable(() -> copy.put("new", "x"));
    assertThat(queues().checkpoints("q")).containsExactlyEntriesOf(Map.of("k", "1"));
  }

  @Test
  void appendBatchAndSyncRefusesAnEmptyBatchAndWritesNoCheckpoints() {
    queues().createQueue(QueueConfig.durable("q").build());
    assertThatThrownBy(() -> queues().appendBatchAndSync("q", List.of(), Map.of("k", "1")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(queues().tail("q")).isZero();
    assertThat(queues().checkpoints("q")).isEmpty();
  }

  @Test
  void checkpointsAreNeverVisibleBeforeTheirBatch() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    AtomicBoolean done = new AtomicBoolean();
    Future<Integer> reader =
        executor.submit(
            () -> {
              int checks = 0;
              while (!done.get() || checks == 0) {
                String mark = queues().checkpoints("q").get("tail");
                long tail = queues().tail("q");
                if (mark != null) {
                  assertThat(tail)
                      .as("a checkpoint is visible only with its batch")
                      .isGreaterThanOrEqualTo(Long.parseLong(mark));
                }
                checks++;
              }
              return checks;
            });
    try {
      for (int i = 0; i < 100; i++) {
        long tailAfter = 2L * (i + 1);
        queues()
            .appendBatchAndSync(
                "q", List.of(message("a" + i), message("b" + i)), Map.of("tail", "" + tailAfter));
      }
    } finally {
      done.set(true);
    }
    assertThat(reader.get(1, TimeUnit.MINUTES)).isPositive();
    assertThat(queues().checkpoints("q")).containsEntry("tail", "200");
  }

  @Test
  void concurrentDurableAppendsGetContiguousUniqueOffsets() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    int threads = 4;
    int callsPerThread = 40;
    List<Future<List<Long>>> results = new ArrayList<>();
    CountDownLatch start = new CountDownLatch(1);
    for (int t = 0; t < threads; t++) {
      int thread = t;
      results.add(
          executor.submit(
              () -> {
                start.await();
                List<Long> firsts = new ArrayList<>();
                for (int i = 0; i < callsPerThread; i++) {
                  if (i % 2 == 0) {
                    firsts.add(queues().appendAndSync("q", message(thread + ":" + i + ":0")));
                  } else {
                    firsts.add(
                        queues()
                            .appendBatchAndSync(
                                "q",
                                List.of(
                                    message(thread + ":" + i + ":0"),
                                    message(thread + ":" + i + ":1")),
                                Map.of("writer-" + thread, "" + i)));
                  }
                }
                return firsts;
              }));
    }
    start.countDown();
    Set<Long> seen = new TreeSet<>();
    for (int t = 0; t < threads; t++) {
      List<Long> firsts = results.get(t).get(1, TimeUnit.MINUTES);
      for (int i = 0; i < firsts.size(); i++) {
        int size = i % 2 == 0 ? 1 : 2;
        for (int j = 0; j < size; j++) {
          long offset = firsts.get(i) + j;
          assertThat(seen.add(offset)).as("offset %d handed out once", offset).isTrue();
          assertThat(utf8(queues().read("q", offset))).isEqualTo(t + ":" + i + ":" + j);
        }
      }
    }
    long total = threads * (callsPerThread / 2) * 3L;
    assertThat(seen).hasSize((int) total);
    assertThat(queues().tail("q")).isEqualTo(total);
    Map<String, String> expected = new HashMap<>();
    for (int t = 0; t < threads; t++) {
      expected.put("writer-" + t, "" + (callsPerThread - 1));
    }
    assertThat(queues().checkpoints("q")).containsExactlyInAnyOrderEntriesOf(expected);
  }

  @Test
  void appendAndSyncInterruptedBeforeTheAppendWritesNothing() {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().append("q", message("v0"));
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(() -> queues().appendAndSync("q", message("lost")))
          .isInstanceOf(InterruptedException.class);
    } finally {
      Thread.interrupted();
    }
    assertThat(queues().tail("q")).isEqualTo(1);
  }

  @Test
  void appendBatchAndSyncInterruptedBeforeTheAppendWritesNothing() throws InterruptedException {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().appendBatchAndSync("q", List.of(message("v0")), Map.of("k", "1"));
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(
              () ->
                  queues()
                      .appendBatchAndSync(
                          "q", List.of(message("lost"), message("lost")), Map.of("k", "2")))
          .isInstanceOf(InterruptedException.class);
    } finally {
      Thread.interrupted();
    }
    assertThat(queues().tail("q")).isEqualTo(1);
    assertThat(queues().checkpoints("q")).containsExactlyEntriesOf(Map.of("k", "1"));
  }

  // ===========================================================================================
  // Close
  // ===========================================================================================

  @Test
  void everyOperationAfterCloseIsStoreClosed() throws InterruptedException {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().appendBatchAndSync("q", List.of(message("x")), Map.of("k", "v"));
    groups().createGroup(group("q", "g"));
    DurableQueueStore q = queues();
    ConsumerGroupStore g = groups();
    storage.close();

    Map<String, ThrowingCallable> calls = new LinkedHashMap<>();
    calls.put("createQueue", () -> q.createQueue(QueueConfig.durable("n").build()));
    calls.put("getQueue", () -> q.getQueue("q"));
    calls.put("updateQueue", () -> q.updateQueue(QueueConfig.durable("q").build()));
    calls.put("deleteQueue", () -> q.deleteQueue("q"));
    calls.put("listQueues", q::listQueues);
    calls.put("findMatchingQueues", () -> q.findMatchingQueues("a"));
    calls.put("append", () -> q.append("q", message("y")));
    calls.put("appendBatch", () -> q.appendBatch("q", List.of(message("y"))));
    calls.put("appendAndSync", () -> q.appendAndSync("q", message("y")));
    calls.put(
        "appendBatchAndSync", () -> q.appendBatchAndSync("q", List.of(message("y")), Map.of()));
    calls.put("checkpoints", () -> q.checkpoints("q"));
    calls.put("read", () -> q.read("q", 0));
    calls.put("readBatch", () -> q.readBatch("q", 0, 1));
    calls.put("head", () -> q.head("q"));
    calls.put("tail", () -> q.tail("q"));
    calls.put("count", () -> q.count("q"));
    calls.put("truncate", () -> q.truncate("q", 1));
    calls.put("awaitAppend", () -> q.awaitAppend("q", 5, Duration.ofSeconds(30)));
    calls.put("createGroup", () -> g.createGroup(group("q", "h")));
    calls.put("findGroup", () -> g.findGroup("q", "g"));
    calls.put("getGroup", () -> g.getGroup("q", "g"));
    calls.put("updateGroup", () -> g.updateGroup(group("q", "g")));
    calls.put("deleteGroup", () -> g.deleteGroup("q", "g"));
    calls.put("listGroups", () -> g.listGroups("q"));
    calls.put("addPending", () -> g.addPending("q", "g", pending(0, "c")));
    calls.put("removePending", () -> g.removePending("q", "g", "c", 0));
    calls.put("updatePending", () -> g.updatePending("q", "g", pending(0, "c")));
    calls.put(
        "transferPending",
        () -> g.transferPending("q", "g", 0, "c", "d", T0, Duration.ofSeconds(1)));
    calls.put("getPending", () -> g.getPending("q", "g", "c"));
    calls.put("getAllPending", () -> g.getAllPending("q", "g"));
    calls.put("updateCursor", () -> g.updateCursor("q", "g", 1, T0));
    calls.put("updateCommitted", () -> g.updateCommitted("q", "g", 1, T0));
    calls.put("registerConsumer", () -> g.registerConsumer("q", "g", consumer("c", T0)));
    calls.put("unregisterConsumer", () -> g.unregisterConsumer("q", "g", "c"));
    calls.put("listConsumers", () -> g.listConsumers("q", "g"));
    calls.forEach(
        (name, call) -> assertThatThrownBy(call).as(name).isInstanceOf(StoreClosedException.class));
    Throwable time = catchThrowable(() -> q.timeOffset("q", T0));
    Throwable size = catchThrowable(() -> q.sizeOffset("q", 10));
    for (Throwable t : new Throwable[] {time, size}) {
      if (t != null) { // a store without the capability may answer empty without looking
        assertThat(t).isInstanceOf(StoreClosedException.class);
      }
    }
  }

  @Test
  void closeIsIdempotent() {
    queues().createQueue(QueueConfig.durable("q").build());
    DurableQueueStore q = queues();
    assertThatCode(
            () -> {
              storage.close();
              storage.close();
              q.close();
            })
        .doesNotThrowAnyException();
  }

  // ===========================================================================================
  // Consumer groups
  // ===========================================================================================

  @Test
  void createGroupThenFindAndGetReturnIt() {
    queues().createQueue(QueueConfig.durable("q").build());
    ConsumerGroupState g =
        ConsumerGroupState.create("q", "workers@orders/+", "orders/+", GroupMode.STREAM, false, T0);
    groups().createGroup(g);
    assertThat(groups().findGroup("q", "workers@orders/+")).contains(g);
    assertThat(groups().getGroup("q", "workers@orders/+")).isEqualTo(g);
    assertThat(g.cursor()).isZero();
  }

  @Test
  void createGroupRefusesAnExistingIdAndKeepsTheOriginal() {
    queues().createQueue(QueueConfig.durable("q").build());
    ConsumerGroupState original = group("q", "g").withCursor(5, T0);
    groups().createGroup(original);
    assertThatThrownBy(() -> groups().createGroup(group("q", "g")))
        .isInstanceOf(ConsumerGroupExistsException.class)
        .hasMessageContaining("g");
    assertThat(groups().getGroup("q", "g")).isEqualTo(original);
  }

  @Test
  void createGroupOnAnUnknownQueueIsQueueNotFound() {
    assertThatThrownBy(() -> groups().createGroup(group("nope", "g")))
        .isInstanceOf(QueueNotFoundException.class);
  }

  @Test
  void findGroupIsEmptyForAnUnknownGroupAndQueueNotFoundForAnUnknownQueue() {
    queues().createQueue(QueueConfig.durable("q").build());
    assertThat(groups().findGroup("q", "none")).isEmpty();
    assertThatThrownBy(() -> groups().findGroup("nope", "g"))
        .isInstanceOf(QueueNotFoundException.class);
  }

  @Test
  void getGroupOfAnUnknownGroupIsGroupNotFound() {
    queues().createQueue(QueueConfig.durable("q").build());
    assertThatThrownBy(() -> groups().getGroup("q", "none"))
        .isInstanceOf(GroupNotFoundException.class)
        .hasMessageContaining("none");
  }

  @Test
  void updateGroupReplacesTheWholeState() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    Instant later = T0.plusSeconds(5);
    ConsumerGroupState next =
        group("q", "g")
            .withMode(GroupMode.STREAM, false, later)
            .withCursor(10, later)
            .withCommitted(7, later)
            .withPending(List.of(pending(8, "c1"), pending(9, "c2")), later)
            .withConsumers(Map.of("c1", consumer("c1", later)), later);
    groups().updateGroup(next);
    assertThat(groups().getGroup("q", "g")).isEqualTo(next);
    ConsumerGroupState cleared = next.withPending(List.of(), later).withConsumers(Map.of(), later);
    groups().updateGroup(cleared);
    assertThat(groups().getGroup("q", "g")).isEqualTo(cleared);
  }

  @Test
  void updateGroupOfAnUnknownGroupIsGroupNotFoundAndCreatesNothing() {
    queues().createQueue(QueueConfig.durable("q").build());
    assertThatThrownBy(() -> groups().updateGroup(group("q", "none")))
        .isInstanceOf(GroupNotFoundException.class);
    assertThat(groups().findGroup("q", "none")).isEmpty();
  }

  @Test
  void deleteGroupIsIdempotent() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().createGroup(group("q", "keep"));
    groups().deleteGroup("q", "g");
    assertThat(groups().findGroup("q", "g")).isEmpty();
    assertThatCode(
            () -> {
              groups().deleteGroup("q", "g");
              groups().deleteGroup("q", "never");
              groups().deleteGroup("no-such-queue", "g");
            })
        .doesNotThrowAnyException();
    assertThat(groups().findGroup("q", "keep")).isPresent();
  }

  @Test
  void listGroupsReturnsEveryGroupOfTheQueueOnly() {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().createQueue(QueueConfig.durable("other").build());
    assertThat(groups().listGroups("q")).isEmpty();
    ConsumerGroupState a = group("q", "a");
    ConsumerGroupState b = group("q", "b").withCursor(3, T0);
    groups().createGroup(a);
    groups().createGroup(b);
    groups().createGroup(group("other", "a"));
    assertThat(groups().listGroups("q")).containsExactlyInAnyOrder(a, b);
    assertThatThrownBy(() -> groups().listGroups("nope"))
        .isInstanceOf(QueueNotFoundException.class);
  }

  @Test
  void sameGroupIdOnTwoQueuesIsTwoIndependentGroups() {
    queues().createQueue(QueueConfig.durable("a").build());
    queues().createQueue(QueueConfig.durable("b").build());
    groups().createGroup(group("a", "g"));
    groups().createGroup(group("b", "g"));
    groups().updateCursor("a", "g", 9, T0);
    groups().addPending("b", "g", pending(1, "c"));
    assertThat(groups().getGroup("a", "g").cursor()).isEqualTo(9);
    assertThat(groups().getGroup("a", "g").pending()).isEmpty();
    assertThat(groups().getGroup("b", "g").cursor()).isZero();
    assertThat(groups().getGroup("b", "g").pending()).containsExactly(pending(1, "c"));
  }

  @Test
  void addPendingKeepsEntriesByOffsetAndReplacesTheOneAtTheSameOffset() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().addPending("q", "g", pending(5, "c1"));
    groups().addPending("q", "g", pending(2, "c2"));
    groups().addPending("q", "g", pending(9, "c1"));
    PendingEntry replacement =
        new PendingEntry(5, "c2", T0.plusSeconds(1), 2, T0, T0.plusSeconds(31));
    groups().addPending("q", "g", replacement);
    assertThat(groups().getAllPending("q", "g"))
        .containsExactly(pending(2, "c2"), replacement, pending(9, "c1"));
    assertThat(groups().getPending("q", "g", "c1")).containsExactly(pending(9, "c1"));
    assertThat(groups().getPending("q", "g", "c2")).containsExactly(pending(2, "c2"), replacement);
    assertThat(groups().getPending("q", "g", "nobody")).isEmpty();
  }

  @Test
  void removePendingRemovesTheHoldersEntry() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().addPending("q", "g", pending(1, "c1"));
    groups().addPending("q", "g", pending(2, "c1"));
    groups().removePending("q", "g", "c1", 1);
    assertThat(groups().getAllPending("q", "g")).containsExactly(pending(2, "c1"));
  }

  @Test
  void removePendingByAConsumerThatDoesNotHoldTheOffsetIsPendingEntryNotFound() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().addPending("q", "g", pending(1, "c1"));
    assertThatThrownBy(() -> groups().removePending("q", "g", "c2", 1))
        .isInstanceOf(PendingEntryNotFoundException.class);
    assertThatThrownBy(() -> groups().removePending("q", "g", "c1", 7))
        .isInstanceOf(PendingEntryNotFoundException.class);
    assertThat(groups().getAllPending("q", "g")).containsExactly(pending(1, "c1"));
  }

  @Test
  void updatePendingReplacesTheEntryWhoeverHoldsIt() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().addPending("q", "g", pending(3, "c1"));
    PendingEntry renewed = new PendingEntry(3, "c2", T0.plusSeconds(4), 1, T0, T0.plusSeconds(60));
    groups().updatePending("q", "g", renewed);
    assertThat(groups().getAllPending("q", "g")).containsExactly(renewed);
  }

  @Test
  void updatePendingOfAnOffsetNobodyHoldsIsPendingEntryNotFound() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().addPending("q", "g", pending(3, "c1"));
    assertThatThrownBy(() -> groups().updatePending("q", "g", pending(4, "c1")))
        .isInstanceOf(PendingEntryNotFoundException.class);
    assertThat(groups().getAllPending("q", "g")).containsExactly(pending(3, "c1"));
  }

  @Test
  void transferPendingMovesTheEntryAndCountsADelivery() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    PendingEntry original = new PendingEntry(4, "c1", T0, 2, T0.minusSeconds(60), T0);
    groups().addPending("q", "g", original);
    Instant now = T0.plusSeconds(30);
    PendingEntry moved =
        groups().transferPending("q", "g", 4, "c1", "c2", now, Duration.ofSeconds(30));
    PendingEntry expected =
        new PendingEntry(4, "c2", now, 3, T0.minusSeconds(60), now.plusSeconds(30));
    assertThat(moved).isEqualTo(expected);
    assertThat(groups().getAllPending("q", "g")).containsExactly(expected);
    assertThat(groups().getPending("q", "g", "c1")).isEmpty();
  }

  @Test
  void transferPendingFromAConsumerThatDoesNotHoldTheOffsetIsPendingEntryNotFound() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().addPending("q", "g", pending(4, "c1"));
    assertThatThrownBy(
            () -> groups().transferPending("q", "g", 4, "c3", "c2", T0, Duration.ofSeconds(1)))
        .isInstanceOf(PendingEntryNotFoundException.class);
    assertThatThrownBy(
            () -> groups().transferPending("q", "g", 5, "c1", "c2", T0, Duration.ofSeconds(1)))
        .isInstanceOf(PendingEntryNotFoundException.class);
    assertThat(groups().getAllPending("q", "g")).containsExactly(pending(4, "c1"));
  }

  @Test
  void findPendingReturnsTheEntryAtAnOffsetWhoeverHoldsIt() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().addPending("q", "g", pending(3, "c1"));
    groups().addPending("q", "g", pending(5, "c2"));
    assertThat(groups().findPending("q", "g", 5)).contains(pending(5, "c2"));
    assertThat(groups().findPending("q", "g", 4)).isEmpty();
    groups().removePending("q", "g", "c1", 3);
    assertThat(groups().findPending("q", "g", 3)).isEmpty();
  }

  @Test
  void claimPendingAddsTheEntriesAndMovesTheCursorInOneCall() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().addPending("q", "g", pending(1, "c0"));
    PendingEntry replacement = new PendingEntry(1, "c1", T0.plusSeconds(5), 1, T0, T0);
    groups()
        .claimPending(
            "q",
            "g",
            List.of(replacement, pending(3, "c1"), pending(4, "c1")),
            5,
            T0.plusSeconds(5));
    ConsumerGroupState g = groups().getGroup("q", "g");
    assertThat(g.pending()).containsExactly(replacement, pending(3, "c1"), pending(4, "c1"));
    assertThat(g.cursor()).isEqualTo(5);
    assertThat(g.committed()).isZero();
    assertThat(g.updatedAt()).isEqualTo(T0.plusSeconds(5));

    groups().claimPending("q", "g", List.of(), 9, T0.plusSeconds(6));
    assertThat(groups().getGroup("q", "g").cursor())
        .as("nothing claimed, cursor moves")
        .isEqualTo(9);
    assertThat(groups().getAllPending("q", "g")).hasSize(3);
  }

  @Test
  void acknowledgePendingRemovesTheEntryAndCommitsUpToTheLowestStillPending() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g").withCursor(10, T0));
    groups().claimPending("q", "g", List.of(pending(4, "c1"), pending(6, "c2")), 10, T0);

    assertThat(groups().acknowledgePending("q", "g", "c2", 6, 1, T0.plusSeconds(1)))
        .as("4 is still pending: committed stays below it")
        .isEqualTo(4);
    ConsumerGroupState g = groups().getGroup("q", "g");
    assertThat(g.pending()).containsExactly(pending(4, "c1"));
    assertThat(g.committed()).isEqualTo(4);
    assertThat(g.updatedAt()).isEqualTo(T0.plusSeconds(1));

    assertThat(groups().acknowledgePending("q", "g", "c1", 4, 1, T0.plusSeconds(2)))
        .as("nothing pending: committed = cursor")
        .isEqualTo(10);
    g = groups().getGroup("q", "g");
    assertThat(g.pending()).isEmpty();
    assertThat(g.committed()).isEqualTo(10);
    assertThat(g.cursor()).isEqualTo(10);
    assertThat(g.updatedAt()).isEqualTo(T0.plusSeconds(2));
  }

  @Test
  void acknowledgePendingNeverLowersTheCommittedOffset() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g").withCursor(10, T0).withCommitted(8, T0));
    groups().addPending("q", "g", pending(2, "c1"));
    groups().addPending("q", "g", pending(3, "c1"));
    assertThat(groups().acknowledgePending("q", "g", "c1", 2, 1, T0.plusSeconds(1))).isEqualTo(8);
    ConsumerGroupState g = groups().getGroup("q", "g");
    assertThat(g.committed()).isEqualTo(8);
    assertThat(g.pending()).containsExactly(pending(3, "c1"));
  }

  @Test
  void acknowledgePendingIsFencedByHolderAndDeliveryCountAndChangesNothingWhenRefused() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g").withCursor(5, T0));
    PendingEntry second = new PendingEntry(4, "c1", T0, 2, T0, T0);
    groups().addPending("q", "g", second);
    ConsumerGroupState before = groups().getGroup("q", "g");
    assertThatThrownBy(() -> groups().acknowledgePending("q", "g", "c2", 4, 2, T0))
        .as("another holder")
        .isInstanceOf(PendingEntryNotFoundException.class);
    assertThatThrownBy(() -> groups().acknowledgePending("q", "g", "c1", 4, 1, T0))
        .as("an earlier delivery of the same message")
        .isInstanceOf(PendingEntryNotFoundException.class);
    assertThatThrownBy(() -> groups().acknowledgePending("q", "g", "c1", 3, 2, T0))
        .as("nothing pending there")
        .isInstanceOf(PendingEntryNotFoundException.class);
    assertThat(groups().getGroup("q", "g")).isEqualTo(before);
    assertThat(groups().acknowledgePending("q", "g", "c1", 4, 2, T0)).isEqualTo(5);
  }

  @Test
  void acknowledgeAllPendingRemovesEachHeldEntryReportsTheRefusedAndCommitsAsTheLastAckWould() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g").withCursor(10, T0));
    groups()
        .claimPending(
            "q",
            "g",
            List.of(pending(3, "c1"), pending(4, "c1"), pending(5, "c2"), pending(6, "c1")),
            10,
            T0);
    boolean[] removed = new boolean[4];
    long committed =
        groups()
            .acknowledgeAllPending(
                "q",
                "g",
                "c1",
                new long[] {4, 3, 5, 7},
                new int[] {1, 1, 1, 1},
                removed,
                T0.plusSeconds(1));
    assertThat(removed)
        .as("3 and 4 held by c1; 5 by c2; nothing at 7")
        .containsExactly(true, true, false, false);
    assertThat(committed).as("5 is the lowest still pending").isEqualTo(5);
    ConsumerGroupState g = groups().getGroup("q", "g");
    assertThat(g.pending()).containsExactly(pending(5, "c2"), pending(6, "c1"));
    assertThat(g.committed()).isEqualTo(5);
    assertThat(g.updatedAt()).isEqualTo(T0.plusSeconds(1));

    ConsumerGroupState before = g;
    boolean[] none = new boolean[1];
    assertThat(
            groups()
                .acknowledgeAllPending(
                    "q", "g", "c1", new long[] {6}, new int[] {2}, none, T0.plusSeconds(2)))
        .as("an earlier delivery count is refused")
        .isEqualTo(5);
    assertThat(none).containsExactly(false);
    assertThat(groups().getGroup("q", "g")).isEqualTo(before);
    assertThatThrownBy(
            () ->
                groups()
                    .acknowledgeAllPending(
                        "q", "g", "c1", new long[] {6}, new int[0], new boolean[1], T0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("one length");
    assertThat(groups().getGroup("q", "g")).isEqualTo(before);
    assertThatThrownBy(
            () ->
                groups()
                    .acknowledgeAllPending(
                        "q", "nope", "c1", new long[] {6}, new int[] {1}, new boolean[1], T0))
        .isInstanceOf(GroupNotFoundException.class);
  }

  @Test
  void claimsAndAcknowledgementsInterleavedKeepThePendingListSorted() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    long cursor = 0;
    List<Long> expected = new ArrayList<>();
    for (int round = 0; round < 20; round++) {
      List<PendingEntry> batch = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        batch.add(pending(cursor, "c"));
        expected.add(cursor++);
      }
      groups().claimPending("q", "g", batch, cursor, T0);
      long ack = expected.get(round % expected.size()); // acks out of order
      groups().acknowledgePending("q", "g", "c", ack, 1, T0);
      expected.remove(Long.valueOf(ack));
    }
    ConsumerGroupState g = groups().getGroup("q", "g");
    assertThat(g.pending()).extracting(PendingEntry::offset).containsExactlyElementsOf(expected);
    assertThat(g.committed()).isEqualTo(expected.get(0));
  }

  @Test
  void updateCursorSetsTheCursorAndTheUpdateTime() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g").withCommitted(3, T0));
    groups().updateCursor("q", "g", 42, T0.plusSeconds(1));
    ConsumerGroupState g = groups().getGroup("q", "g");
    assertThat(g.cursor()).isEqualTo(42);
    assertThat(g.committed()).isEqualTo(3);
    assertThat(g.updatedAt()).isEqualTo(T0.plusSeconds(1));
    groups().updateCursor("q", "g", 7, T0.plusSeconds(2));
    assertThat(groups().getGroup("q", "g").cursor()).isEqualTo(7);
  }

  @Test
  void updateCommittedBeyondTheCursorRaisesTheCursor() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g").withCursor(10, T0));
    groups().updateCommitted("q", "g", 4, T0.plusSeconds(1));
    assertThat(groups().getGroup("q", "g").committed()).isEqualTo(4);
    assertThat(groups().getGroup("q", "g").cursor()).isEqualTo(10);
    groups().updateCommitted("q", "g", 15, T0.plusSeconds(2));
    ConsumerGroupState g = groups().getGroup("q", "g");
    assertThat(g.committed()).isEqualTo(15);
    assertThat(g.cursor()).isEqualTo(15);
    assertThat(g.updatedAt()).isEqualTo(T0.plusSeconds(2));
  }

  @Test
  void registerConsumerAddsOrRefreshesAMember() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().registerConsumer("q", "g", consumer("c1", T0));
    groups().registerConsumer("q", "g", consumer("c2", T0));
    ConsumerInfo refreshed = new ConsumerInfo("c1", "c1", T0.plusSeconds(9), T0.plusSeconds(9));
    groups().registerConsumer("q", "g", refreshed);
    assertThat(groups().listConsumers("q", "g"))
        .containsExactlyInAnyOrder(refreshed, consumer("c2", T0));
    assertThat(groups().getGroup("q", "g").consumers()).containsEntry("c1", refreshed);
  }

  // ----------------------------------------------------------- due index (BEHAVIOUR Q-DELAY)

  /** An entry held by {@code consumer}, claimable again at {@code T0 + visibleSeconds}. */
  private static PendingEntry visibleAt(long offset, String consumer, long visibleSeconds) {
    return new PendingEntry(offset, consumer, T0, 1, T0, T0.plusSeconds(visibleSeconds));
  }

  @Test
  void overviewIsTheGroupWithoutItsEntriesAndCountsThemAndTheScheduledOnes() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    GroupOverview empty = groups().overview("q", "g");
    assertThat(empty.group()).isEqualTo(groups().getGroup("q", "g"));
    assertThat(empty.pending()).isZero();
    assertThat(empty.highestPendingOffset()).isEqualTo(-1);
    groups().registerConsumer("q", "g", consumer("c1", T0));
    groups()
        .claimPending(
            "q",
            "g",
            List.of(
                pending(3, "c1"),
                PendingEntry.scheduled(7, T0, T0.plusSeconds(9)),
                PendingEntry.scheduled(5, T0, T0.plusSeconds(8)),
                pending(4, "c1")),
            8,
            T0.plusSeconds(1));
    GroupOverview o = groups().overview("q", "g");
    ConsumerGroupState full = groups().getGroup("q", "g");
    assertThat(o.group()).isEqualTo(full.withPending(List.of(), full.updatedAt()));
    assertThat(o.group().consumers()).containsOnlyKeys("c1");
    assertThat(o.pending()).isEqualTo(4);
    assertThat(o.scheduled()).isEqualTo(2);
    assertThat(o.held()).isEqualTo(2);
    assertThat(o.highestPendingOffset()).isEqualTo(7);
    groups().updatePending("q", "g", new PendingEntry(7, "c1", T0, 1, T0, T0.plusSeconds(40)));
    groups().acknowledgePending("q", "g", "c1", 3, 1, T0.plusSeconds(2));
    o = groups().overview("q", "g");
    assertThat(o.pending()).isEqualTo(3);
    assertThat(o.scheduled()).as("7 became a delivery").isEqualTo(1);
    assertThat(o.group().committed()).isEqualTo(4);
    assertThatThrownBy(() -> groups().overview("q", "nope"))
        .isInstanceOf(GroupNotFoundException.class);
    assertThatThrownBy(() -> groups().overview("nope", "g"))
        .isInstanceOf(QueueNotFoundException.class);
  }

  @Test
  void anOverviewThatCarriesTheQueuesConfigurationCarriesTheCurrentOne() {
    QueueConfig created = QueueConfig.durable("q").maxDepth(10).build();
    queues().createQueue(created);
    groups().createGroup(group("q", "g"));
    QueueConfig before = groups().overview("q", "g").queueConfig();
    assertThat(before).as("none, or the queue's own").isIn(null, queues().getQueue("q"));
    QueueConfig updated = QueueConfig.durable("q").maxDepth(20).build();
    queues().updateQueue(updated);
    QueueConfig after = groups().overview("q", "g").queueConfig();
    assertThat(after).as("none, or the updated one").isIn(null, queues().getQueue("q"));
    if (after != null) {
      assertThat(after.maxDepth()).isEqualTo(20);
    }
  }

  @Test
  void duePendingAnswersTheEntriesClaimableNowEarliestFirstThenByOffset() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups()
        .claimPending(
            "q",
            "g",
            List.of(
                visibleAt(1, "c1", 50),
                PendingEntry.scheduled(2, T0, T0.plusSeconds(10)),
                visibleAt(3, "c2", 30),
                PendingEntry.scheduled(4, T0, T0.plusSeconds(30)),
                visibleAt(5, "c1", 90),
                PendingEntry.scheduled(6, T0, T0.plusSeconds(20))),
            7,
            T0);
    assertThat(groups().duePending("q", "g", T0.plusSeconds(9), null, 10)).isEmpty();
    assertThat(groups().duePending("q", "g", T0.plusSeconds(30), null, 10))
        .as("by visibleAt, equal times by offset; the bound is inclusive")
        .extracting(PendingEntry::offset)
        .containsExactly(2L, 6L, 3L, 4L);
    assertThat(groups().duePending("q", "g", T0.plusSeconds(60), null, 2))
        .extracting(PendingEntry::offset)
        .containsExactly(2L, 6L);
    PendingEntry six = groups().findPending("q", "g", 6).orElseThrow();
    assertThat(groups().duePending("q", "g", T0.plusSeconds(60), six, 10))
        .as("the page after entry 6")
        .extracting(PendingEntry::offset)
        .containsExactly(3L, 4L, 1L);
    assertThat(groups().duePending("q", "g", T0.plusSeconds(60), null, 10).get(0))
        .isEqualTo(PendingEntry.scheduled(2, T0, T0.plusSeconds(10)));
    assertThatThrownBy(() -> groups().duePending("q", "g", T0, null, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("limit is 0");
    assertThatThrownBy(() -> groups().duePending("q", "nope", T0, null, 1))
        .isInstanceOf(GroupNotFoundException.class);
  }

  @Test
  void duePendingFollowsEveryChangeOfAnEntrysVisibility() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups()
        .claimPending(
            "q",
            "g",
            List.of(
                PendingEntry.scheduled(0, T0, T0.plusSeconds(5)),
                visibleAt(1, "c1", 10),
                visibleAt(2, "c1", 20)),
            3,
            T0);
    Instant later = T0.plusSeconds(100);
    // a scheduled entry becomes a first delivery held by c2, visible again in 30 s
    PendingEntry first =
        new PendingEntry(0, "c2", T0.plusSeconds(5), 1, T0.plusSeconds(5), T0.plusSeconds(35));
    groups().updatePending("q", "g", first);
    // a renewal pushes entry 1 past entry 2
    groups().updatePending("q", "g", visibleAt(1, "c1", 40));
    assertThat(groups().duePending("q", "g", later, null, 10))
        .extracting(PendingEntry::offset)
        .containsExactly(2L, 0L, 1L);
    groups().transferPending("q", "g", 2, "c1", "c2", T0.plusSeconds(50), Duration.ofSeconds(60));
    assertThat(groups().duePending("q", "g", later, null, 10))
        .as("stolen: visible again at 110 s")
        .extracting(PendingEntry::offset)
        .containsExactly(0L, 1L);
    groups().acknowledgePending("q", "g", "c2", 0, 1, T0.plusSeconds(51));
    assertThat(groups().duePending("q", "g", later, null, 10))
        .extracting(PendingEntry::offset)
        .containsExactly(1L);
    boolean[] removed = new boolean[1];
    groups()
        .acknowledgeAllPending(
            "q", "g", "c1", new long[] {1}, new int[] {1}, removed, T0.plusSeconds(52));
    assertThat(removed).containsExactly(true);
    assertThat(groups().duePending("q", "g", later.plusSeconds(100), null, 10))
        .extracting(PendingEntry::offset)
        .containsExactly(2L);
    groups().updateGroup(groups().getGroup("q", "g").withPending(List.of(), T0.plusSeconds(53)));
    assertThat(groups().duePending("q", "g", later.plusSeconds(100), null, 10)).isEmpty();
  }

  @Test
  void nextVisibleIsTheEarliestTimeAfterTheInstantOverTheQueueModeGroupsBlockedOnesLeftOut() {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().createQueue(QueueConfig.durable("idle").build());
    groups().createGroup(group("q", "g"));
    groups().createGroup(group("q", "h"));
    ConsumerGroupState stream =
        ConsumerGroupState.create("q", "s@a/#", "a/#", GroupMode.STREAM, false, T0);
    groups().createGroup(stream);
    groups()
        .claimPending(
            "q",
            "g",
            List.of(
                visibleAt(1, "c1", 50),
                PendingEntry.scheduled(2, T0, T0.plusSeconds(10)),
                PendingEntry.blocked(3, T0, "k")),
            4,
            T0);
    groups().claimPending("q", "h", List.of(visibleAt(4, "c2", 30)), 5, T0);
    groups().addPending("q", "s@a/#", visibleAt(5, "c1", 5)); // a stream group's: not counted
    assertThat(groups().nextVisible("q", T0)).contains(T0.plusSeconds(10));
    assertThat(groups().nextVisible("q", T0.plusSeconds(10)))
        .as("strictly after the instant, across groups")
        .contains(T0.plusSeconds(30));
    assertThat(groups().nextVisible("q", T0.plusSeconds(30))).contains(T0.plusSeconds(50));
    assertThat(groups().nextVisible("q", T0.plusSeconds(50)))
        .as("a blocked entry is never visible")
        .isEmpty();
    groups().updatePending("q", "g", visibleAt(1, "c1", 70)); // a renewal
    assertThat(groups().nextVisible("q", T0.plusSeconds(50))).contains(T0.plusSeconds(70));
    groups().acknowledgePending("q", "h", "c2", 4, 1, T0.plusSeconds(1));
    assertThat(groups().nextVisible("q", T0.plusSeconds(10))).contains(T0.plusSeconds(70));
    assertThat(groups().nextVisible("idle", T0)).isEmpty();
    assertThatThrownBy(() -> groups().nextVisible("nope", T0))
        .isInstanceOf(QueueNotFoundException.class);
  }

  @Test
  void aScheduledEntryHoldsTheCommittedOffsetAndIsReleasedByItsEmptyHolder() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    PendingEntry parked = PendingEntry.scheduled(0, T0, T0.plusSeconds(60));
    assertThat(parked.isScheduled()).isTrue();
    assertThat(parked.consumerId()).isEqualTo(PendingEntry.NO_HOLDER);
    assertThat(parked.deliveryCount()).isZero();
    groups().claimPending("q", "g", List.of(parked, pending(1, "c1")), 2, T0);
    assertThat(groups().acknowledgePending("q", "g", "c1", 1, 1, T0.plusSeconds(1)))
        .as("the scheduled entry at 0 keeps the committed offset")
        .isZero();
    assertThat(groups().getPending("q", "g", PendingEntry.NO_HOLDER)).containsExactly(parked);
    assertThat(
            groups().acknowledgePending("q", "g", PendingEntry.NO_HOLDER, 0, 0, T0.plusSeconds(2)))
        .isEqualTo(2);
    assertThat(groups().getAllPending("q", "g")).isEmpty();
  }

  @Test
  void scheduledEntriesAndTheDueOrderSurviveReopen() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    List<PendingEntry> entries = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      entries.add(PendingEntry.scheduled(i, T0, T0.plusSeconds((i * 7) % 20)));
    }
    groups().claimPending("q", "g", entries, 20, T0);
    List<PendingEntry> before = groups().duePending("q", "g", T0.plusSeconds(30), null, 100);
    reopen();
    assertThat(groups().getAllPending("q", "g")).containsExactlyElementsOf(entries);
    assertThat(groups().duePending("q", "g", T0.plusSeconds(30), null, 100))
        .hasSize(20)
        .containsExactlyElementsOf(before)
        .isSortedAccordingTo(PendingEntry.BY_VISIBILITY);
  }

  private static PendingEntry keyed(long offset, String consumer, String key) {
    return new PendingEntry(offset, consumer, T0, 1, T0, T0.plusSeconds(30), key);
  }

  @Test
  void everyWriteKeepsTheOrderKeyAndTheLookupsFindEntriesByIt() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    assertThat(groups().firstPendingByKey("q", "g", List.of("ka"))).isEmpty();
    assertThat(firstWithKey(groups(), "q", "g", "ka")).isEmpty();
    PendingEntry a0 = keyed(0, "c1", "ka");
    PendingEntry b1 = PendingEntry.scheduled(1, T0, T0.plusSeconds(9)).withOrderKey("kb");
    PendingEntry a2 = PendingEntry.blocked(2, T0, "ka");
    PendingEntry plain3 = pending(3, "c1");
    groups().claimPending("q", "g", List.of(a0, b1, a2, plain3), 4, T0);
    PendingEntry c4 = keyed(4, "c2", "kc");
    groups().addPending("q", "g", c4);
    assertThat(groups().getAllPending("q", "g")).containsExactly(a0, b1, a2, plain3, c4);
    assertThat(groups().findPending("q", "g", 2)).contains(a2);
    assertThat(a2.isBlocked()).isTrue();
    assertThat(a2.isScheduled()).as("no member holds a blocked entry").isTrue();
    assertThat(groups().firstPendingByKey("q", "g", List.of("ka", "kb", "kc", "kd")))
        .containsOnlyKeys("ka", "kb", "kc")
        .containsEntry("ka", a0)
        .containsEntry("kb", b1);
    assertThat(groups().firstPendingByKey("q", "g", List.of())).isEmpty();
    assertThat(firstWithKey(groups(), "q", "g", "ka")).contains(a0);
    assertThat(firstWithKey(groups(), "q", "g", "kd")).isEmpty();

    // a transfer keeps the key; an update may change the visibility and keeps what it is given
    PendingEntry moved =
        groups().transferPending("q", "g", 4, "c2", "c3", T0.plusSeconds(1), Duration.ofSeconds(5));
    assertThat(moved.orderKey()).isEqualTo("kc");
    assertThat(groups().findPending("q", "g", 4)).contains(moved);
    PendingEntry released = a2.withVisibleAt(T0.plusSeconds(2));
    groups().updatePending("q", "g", released);
    assertThat(groups().findPending("q", "g", 2)).contains(released);
    assertThat(released.isBlocked()).isFalse();

    // removals: the key's next entry is the lowest left; a key without entries is gone
    groups().acknowledgePending("q", "g", "c1", 0, 1, T0.plusSeconds(3));
    assertThat(firstWithKey(groups(), "q", "g", "ka")).contains(released);
    groups().acknowledgePending("q", "g", PendingEntry.NO_HOLDER, 2, 0, T0.plusSeconds(3));
    assertThat(firstWithKey(groups(), "q", "g", "ka")).isEmpty();
    boolean[] removed = new boolean[1];
    groups()
        .acknowledgeAllPending(
            "q", "g", "c3", new long[] {4}, new int[] {2}, removed, T0.plusSeconds(4));
    assertThat(removed).containsExactly(true);
    assertThat(groups().firstPendingByKey("q", "g", List.of("ka", "kb", "kc")))
        .containsOnlyKeys("kb");

    // a whole-group write keeps the keys too
    PendingEntry a7 = PendingEntry.blocked(7, T0, "ka");
    ConsumerGroupState g = groups().getGroup("q", "g");
    groups()
        .updateGroup(
            g.withPending(List.of(b1, plain3, keyed(6, "c1", "ka"), a7), T0.plusSeconds(5)));
    assertThat(groups().getAllPending("q", "g"))
        .containsExactly(b1, plain3, keyed(6, "c1", "ka"), a7);
    assertThat(firstWithKey(groups(), "q", "g", "ka")).contains(keyed(6, "c1", "ka"));
    groups().updateGroup(g.withPending(List.of(), T0.plusSeconds(6)));
    assertThat(groups().firstPendingByKey("q", "g", List.of("ka", "kb"))).isEmpty();
  }

  @Test
  void aBlockedEntryIsNeverDueAndCountsAsScheduled() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups()
        .claimPending(
            "q", "g", List.of(keyed(0, "c1", "k"), PendingEntry.blocked(1, T0, "k")), 2, T0);
    assertThat(groups().duePending("q", "g", Instant.MAX.minusSeconds(1), null, 10))
        .extracting(PendingEntry::offset)
        .containsExactly(0L);
    GroupOverview o = groups().overview("q", "g");
    assertThat(o.pending()).isEqualTo(2);
    assertThat(o.scheduled()).isEqualTo(1);
    assertThat(o.held()).isEqualTo(1);
    assertThat(o.blocked()).as("the blocked entries among the scheduled ones").isEqualTo(1);
    assertThat(o.waiting()).isZero();
  }

  @Test
  void theOrderKeyLookupsRefuseAnEmptyKeyAndAnUnknownGroup() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    assertThatThrownBy(() -> groups().firstPendingByKey("q", "g", List.of("k", "")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ordering key")
        .hasMessageContaining("empty");
    assertThatThrownBy(
            () -> groups().firstPendingByKey("q", "g", java.util.Arrays.asList("k", null)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("null");
    assertThatThrownBy(() -> groups().firstPendingByKey("q", "none", List.of("k")))
        .isInstanceOf(GroupNotFoundException.class);
    assertThat(groups().firstPendingByKey("q", "none", List.of()))
        .as("no keys: nothing is looked up")
        .isEmpty();
  }

  @Test
  void releaseBlockedMakesVisibleOnlyTheLowestEntryOfEachKeyAndOnlyWhenItIsBlocked()
      throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().createGroup(group("q", "none-blocked"));
    PendingEntry a0 = keyed(0, "c1", "ka");
    PendingEntry a1 = PendingEntry.blocked(1, T0, "ka");
    PendingEntry a2 = PendingEntry.blocked(2, T0, "ka");
    PendingEntry b3 = PendingEntry.blocked(3, T0, "kb");
    PendingEntry b5 = PendingEntry.blocked(5, T0, "kb");
    PendingEntry c4 = keyed(4, "c2", "kc");
    groups().claimPending("q", "g", List.of(a0, a1, a2, b3, c4, b5), 6, T0);
    groups().claimPending("q", "none-blocked", List.of(keyed(0, "c1", "ka")), 1, T0);
    Instant at = T0.plusSeconds(5);

    // ka's lowest entry is held, kc's too, kd has none: only kb's lowest is released, once
    assertThat(groups().releaseBlocked("q", "g", List.of("ka", "kb", "kc", "kd", "kb"), at))
        .containsExactly(b3.withVisibleAt(at));
    assertThat(groups().getAllPending("q", "g"))
        .containsExactly(a0, a1, a2, b3.withVisibleAt(at), c4, b5);
    assertThat(groups().overview("q", "g").blocked()).isEqualTo(3);
    assertThat(groups().releaseBlocked("q", "g", List.of("kb"), at))
        .as("kb's lowest entry is no longer blocked")
        .isEmpty();

    groups().acknowledgePending("q", "g", "c1", 0, 1, at);
    assertThat(groups().releaseBlocked("q", "g", List.of("ka"), at.plusSeconds(1)))
        .containsExactly(a1.withVisibleAt(at.plusSeconds(1)));
    assertThat(groups().duePending("q", "g", at.plusSeconds(1), null, 10))
        .extracting(PendingEntry::offset)
        .containsExactly(3L, 1L);
    assertThat(groups().overview("q", "g").blocked()).isEqualTo(2);

    // nothing blocked, no keys, bad keys, no group
    assertThat(groups().releaseBlocked("q", "none-blocked", List.of("ka"), at)).isEmpty();
    assertThat(groups().getAllPending("q", "none-blocked")).containsExactly(keyed(0, "c1", "ka"));
    assertThat(groups().releaseBlocked("q", "missing", List.of(), at))
        .as("no keys: nothing is looked up")
        .isEmpty();
    assertThatThrownBy(() -> groups().releaseBlocked("q", "missing", List.of("ka"), at))
        .isInstanceOf(GroupNotFoundException.class);
    assertThatThrownBy(() -> groups().releaseBlocked("q", "g", List.of("ka", ""), at))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ordering key");

    if (persistent()) {
      reopen();
      assertThat(groups().getAllPending("q", "g"))
          .containsExactly(a1.withVisibleAt(at.plusSeconds(1)), a2, b3.withVisibleAt(at), c4, b5);
    }
  }

  @Test
  void orderKeysAndBlockedEntriesSurviveReopen() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().createGroup(group("q", "unkeyed"));
    List<PendingEntry> entries = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      String key = "k" + (i % 4);
      entries.add(i < 4 ? keyed(i, "c1", key) : PendingEntry.blocked(i, T0, key));
    }
    groups().claimPending("q", "g", entries, 30, T0);
    groups().addPending("q", "unkeyed", pending(0, "c1"));
    PendingEntry moved =
        groups().transferPending("q", "g", 1, "c1", "c2", T0.plusSeconds(1), Duration.ofSeconds(5));
    groups().updatePending("q", "g", entries.get(5).withVisibleAt(T0.plusSeconds(2)));
    reopen();
    List<PendingEntry> expected = new ArrayList<>(entries);
    expected.set(1, moved);
    expected.set(5, entries.get(5).withVisibleAt(T0.plusSeconds(2)));
    assertThat(groups().getAllPending("q", "g")).containsExactlyElementsOf(expected);
    assertThat(groups().getAllPending("q", "unkeyed")).containsExactly(pending(0, "c1"));
    assertThat(groups().firstPendingByKey("q", "g", List.of("k0", "k1", "k2", "k3", "k4")))
        .containsOnlyKeys("k0", "k1", "k2", "k3");
    assertThat(firstWithKey(groups(), "q", "g", "k1")).contains(moved);
    assertThat(groups().duePending("q", "g", T0.plus(Duration.ofDays(365)), null, 100))
        .extracting(PendingEntry::offset)
        .containsExactly(5L, 1L, 0L, 2L, 3L);
  }

  @Test
  void unregisterConsumerKeepsItsPendingEntries() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().registerConsumer("q", "g", consumer("c1", T0));
    groups().registerConsumer("q", "g", consumer("c2", T0));
    groups().addPending("q", "g", pending(1, "c1"));
    groups().addPending("q", "g", pending(2, "c2"));
    groups().unregisterConsumer("q", "g", "c1");
    assertThat(groups().listConsumers("q", "g")).containsExactly(consumer("c2", T0));
    assertThat(groups().getAllPending("q", "g"))
        .containsExactly(pending(1, "c1"), pending(2, "c2"));
    ConsumerGroupState before = groups().getGroup("q", "g");
    groups().unregisterConsumer("q", "g", "never-registered");
    assertThat(groups().getGroup("q", "g")).isEqualTo(before);
  }

  @Test
  void groupOperationsOnAnUnknownGroupAreGroupNotFound() {
    queues().createQueue(QueueConfig.durable("q").build());
    assertGroupOperationsFail("q", "none", GroupNotFoundException.class);
  }

  @Test
  void groupOperationsOnAnUnknownQueueFailWithoutCreatingAnything() {
    assertGroupOperationsFail(
        "nope", "g", QueueNotFoundException.class, GroupNotFoundException.class);
    assertThat(queues().listQueues()).isEmpty();
  }

  @Test
  void deleteQueueDeletesItsGroups() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().addPending("q", "g", pending(0, "c"));
    queues().deleteQueue("q");
    queues().createQueue(QueueConfig.durable("q").build());
    assertThat(groups().listGroups("q")).isEmpty();
    assertThat(groups().findGroup("q", "g")).isEmpty();
    groups().createGroup(group("q", "g"));
    assertThat(groups().getAllPending("q", "g")).isEmpty();
  }

  @Test
  void atomicallyRunsTheBodyOnceAndReturnsItsResult() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    AtomicInteger runs = new AtomicInteger();
    String result =
        groups()
            .atomically(
                "q",
                "g",
                () -> {
                  runs.incrementAndGet();
                  groups().updateCursor("q", "g", 5, T0.plusSeconds(1));
                  groups().addPending("q", "g", pending(3, "c"));
                  return "done";
                });
    assertThat(result).isEqualTo("done");
    assertThat(runs).hasValue(1);
    ConsumerGroupState after = groups().getGroup("q", "g");
    assertThat(after.cursor()).isEqualTo(5);
    assertThat(after.pending()).containsExactly(pending(3, "c"));
  }

  @Test
  void atomicallyPropagatesTheBodysExceptionUnchangedAndTheStoreStaysUsable() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    IllegalStateException boom = new IllegalStateException("boom");
    AtomicInteger runs = new AtomicInteger();
    assertThatThrownBy(
            () ->
                groups()
                    .atomically(
                        "q",
                        "g",
                        () -> {
                          runs.incrementAndGet();
                          throw boom;
                        }))
        .isSameAs(boom);
    assertThat(runs).hasValue(1);
    assertThatThrownBy(
            () ->
                groups()
                    .atomically(
                        "q",
                        "g",
                        () -> {
                          groups().removePending("q", "g", "nobody", 42);
                          return null;
                        }))
        .isInstanceOf(PendingEntryNotFoundException.class);
    groups().updateCursor("q", "g", 7, T0);
    assertThat(groups().getGroup("q", "g").cursor()).isEqualTo(7);
  }

  @Test
  void concurrentMutationsOfDistinctGroupsLoseNothing() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    int threads = 4;
    int entries = 50;
    for (int t = 0; t < threads; t++) {
      groups().createGroup(group("q", "g" + t));
    }
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      String id = "g" + t;
      done.add(
          executor.submit(
              () -> {
                for (int i = 0; i < entries; i++) {
                  groups().addPending("q", id, pending(i, "c"));
                  groups().updateCursor("q", id, i + 1, T0);
                }
                return null;
              }));
    }
    for (Future<?> f : done) {
      f.get(1, TimeUnit.MINUTES);
    }
    for (int t = 0; t < threads; t++) {
      ConsumerGroupState g = groups().getGroup("q", "g" + t);
      assertThat(g.pending()).hasSize(entries);
      assertThat(g.cursor()).isEqualTo(entries);
    }
  }

  @Test
  void claimDueClaimsTheClaimableEntriesEarliestFirstAndReturnsThemAsTheyWere() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g").withCursor(10, T0));
    PendingEntry expired = new PendingEntry(2, "c1", T0, 1, T0, T0.plusSeconds(1));
    PendingEntry ready = PendingEntry.scheduled(3, T0, T0).withOrderKey("k");
    PendingEntry later = new PendingEntry(4, "c1", T0, 1, T0, T0.plusSeconds(60));
    PendingEntry blocked = PendingEntry.blocked(5, T0, "k");
    PendingEntry due = PendingEntry.scheduled(6, T0, T0.plusSeconds(2));
    groups().claimPending("q", "g", List.of(expired, ready, later, blocked, due), 10, T0);
    Instant now = T0.plusSeconds(5);
    Duration visibility = Duration.ofSeconds(30);

    List<PendingEntry> first = groups().claimDue("q", "g", "c2", now, visibility, 2);
    assertThat(first)
        .as("earliest visibleAt first, at most the limit")
        .containsExactly(ready, expired);
    List<PendingEntry> second = groups().claimDue("q", "g", "c2", now, visibility, 10);
    assertThat(second)
        .as("neither one claimed already, nor one visible later, nor a blocked one")
        .containsExactly(due);
    assertThat(groups().claimDue("q", "g", "c2", now, visibility, 10)).isEmpty();

    assertThat(groups().getAllPending("q", "g"))
        .containsExactly(
            expired.claimedBy("c2", now, visibility),
            new PendingEntry(3, "c2", now, 1, now, now.plus(visibility), "k"),
            later,
            blocked,
            new PendingEntry(6, "c2", now, 1, now, now.plus(visibility)));
    assertThat(groups().getAllPending("q", "g").get(0).deliveryCount())
        .as("a stolen entry counts one delivery more and keeps its first claim")
        .isEqualTo(2);
    assertThat(groups().getGroup("q", "g").cursor()).isEqualTo(10);
  }

  @Test
  void claimDueRefusesBadArgumentsAndAnUnknownGroup() {
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    Duration v = Duration.ofSeconds(1);
    assertThatThrownBy(() -> groups().claimDue("q", "g", "c", T0, v, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("limit is 0");
    assertThatThrownBy(() -> groups().claimDue("q", "g", "", T0, v, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("consumerId");
    assertThatThrownBy(() -> groups().claimDue("q", "g", "c", T0, Duration.ofSeconds(-1), 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("visibility");
    assertThatThrownBy(() -> groups().claimDue("q", "nope", "c", T0, v, 1))
        .isInstanceOf(GroupNotFoundException.class);
  }

  @Test
  void aPauseIsKeptByEveryReadAndEveryLaterChangeUntilResumed() {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 3);
    groups().createGroup(group("q", "g"));
    groups().createGroup(group("q", "other"));
    assertThat(groups().getGroup("q", "g").paused()).as("a new group").isFalse();

    groups().setPaused("q", "g", true, T0.plusSeconds(1));
    ConsumerGroupState paused = groups().getGroup("q", "g");
    assertThat(paused.paused()).isTrue();
    assertThat(paused.updatedAt()).isEqualTo(T0.plusSeconds(1));
    assertThat(groups().overview("q", "g").group().paused()).as("the overview").isTrue();
    assertThat(groups().listGroups("q"))
        .as("listed")
        .extracting(ConsumerGroupState::id, ConsumerGroupState::paused)
        .containsExactlyInAnyOrder(tuple("g", true), tuple("other", false));

    groups().registerConsumer("q", "g", consumer("c1", T0));
    groups().claimPending("q", "g", List.of(pending(0, "c1"), pending(1, "c1")), 2, T0);
    groups().acknowledgePending("q", "g", "c1", 0, 1, T0.plusSeconds(2));
    groups().updateCursor("q", "g", 3, T0.plusSeconds(3));
    assertThat(groups().getGroup("q", "g").paused()).as("after claims, acks, a cursor").isTrue();

    groups().setPaused("q", "g", false, T0.plusSeconds(4));
    ConsumerGroupState resumed = groups().getGroup("q", "g");
    assertThat(resumed.paused()).isFalse();
    assertThat(resumed.updatedAt()).isEqualTo(T0.plusSeconds(4));
    assertThat(resumed.pending()).as("the pause changed nothing else").hasSize(1);
    assertThat(resumed.cursor()).isEqualTo(3);
    assertThat(groups().getGroup("q", "other").paused()).as("the other group").isFalse();
  }

  @Test
  void aPauseSurvivesReopenAndAResumeToo() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "g"));
    groups().createGroup(group("q", "keyed"));
    groups().addPending("q", "keyed", keyed(0, "c1", "ka"));
    groups().setPaused("q", "g", true, T0.plusSeconds(1));
    groups().setPaused("q", "keyed", true, T0.plusSeconds(1));
    reopen();
    assertThat(groups().getGroup("q", "g").paused()).isTrue();
    assertThat(groups().getGroup("q", "keyed").paused()).isTrue();
    assertThat(groups().getGroup("q", "keyed").pending())
        .as("the keyed entry kept with the pause")
        .containsExactly(keyed(0, "c1", "ka"));
    groups().setPaused("q", "g", false, T0.plusSeconds(2));
    reopen();
    assertThat(groups().getGroup("q", "g").paused()).as("resumed, reopened").isFalse();
    assertThat(groups().getGroup("q", "keyed").paused()).isTrue();
  }

  @Test
  void aPausedGroupHandsOutNothingUntilResumedAndItsHoldersStillSettle() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().createQueue(QueueConfig.durable("s").type(QueueType.STREAM).build());
    appendValues("q", 6);
    appendValues("s", 3);
    MutableClock clock = new MutableClock(T0);
    GroupCoordinator engine = GroupCoordinator.builder(storage).clock(clock).build();
    engine.join("q", "", "g", "c1", null);
    engine.join("q", "", "g", "c2", null);
    engine.join("s", "", "r", "c1", CursorOption.earliest(GroupMode.STREAM));
    List<GroupDelivery> held = engine.claimBatch("q", "g", "c1", 2);
    assertThat(held).hasSize(2);

    assertThat(engine.pause("q", "g")).isTrue();
    assertThat(engine.pause("q", "g")).as("paused already").isFalse();
    assertThat(engine.pause("s", "r")).isTrue();
    assertThat(engine.claimBatch("q", "g", "c2", 10)).as("a claim while paused").isEmpty();
    assertThat(engine.claimNext("q", "g", "c2")).isEmpty();
    assertThat(engine.peek("s", "r", "c1", 10).isEmpty()).as("a stream read while paused").isTrue();
    held.get(0).ack();
    held.get(1).nack(Duration.ZERO);
    clock.advance(Duration.ofHours(2)); // any visibility timeout has passed
    assertThat(engine.claimBatch("q", "g", "c2", 10))
        .as("neither the nacked message nor a timed out one goes out while paused")
        .isEmpty();
    assertThat(groups().getGroup("q", "g").committed()).as("the ack counted").isEqualTo(1);

    assertThat(engine.resume("q", "g")).isTrue();
    assertThat(engine.resume("q", "g")).as("resumed already").isFalse();
    assertThat(engine.resume("s", "r")).isTrue();
    assertThat(engine.claimBatch("q", "g", "c2", 10))
        .as("the rest from the cursor, then the nacked one")
        .extracting(GroupDelivery::offset)
        .containsExactly(2L, 3L, 4L, 5L, 1L);
    assertThat(engine.peek("s", "r", "c1", 10).deliveries()).hasSize(3);
    assertThatThrownBy(() -> engine.pause("q", "nope")).isInstanceOf(GroupNotFoundException.class);
  }

  @Test
  void aPauseMadeThroughOneInstanceHoldsForEveryOther() throws Exception {
    assumeThat(sharedAcrossInstances()).as("the store has one instance per data set").isTrue();
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 4);
    Storage other = openStorage(dir);
    try {
      GroupCoordinator here = GroupCoordinator.builder(storage).build();
      GroupCoordinator there = GroupCoordinator.builder(other).build();
      here.join("q", "", "g", "c1", null);
      there.join("q", "", "g", "c2", null);
      assertThat(here.pause("q", "g")).isTrue();
      assertThat(there.claimBatch("q", "g", "c2", 10))
          .as("claimed on the other instance")
          .isEmpty();
      assertThat(there.resume("q", "g")).as("resumed on the other instance").isTrue();
      assertThat(here.claimBatch("q", "g", "c1", 10)).hasSize(4);
    } finally {
      other.close();
    }
  }

  /**
   * The engines of the concurrency rules: four over four instances of the store when it is {@link
   * #sharedAcrossInstances() shared}, else one over the store under test, named four times.
   */
  private List<GroupCoordinator> engines(List<Storage> opened) throws Exception {
    List<GroupCoordinator> engines = new ArrayList<>();
    GroupCoordinator only = GroupCoordinator.builder(storage).build();
    for (int i = 0; i < 4; i++) {
      if (sharedAcrossInstances() && i > 0) {
        Storage other = openStorage(dir);
        opened.add(other);
        engines.add(GroupCoordinator.builder(other).build());
      } else {
        engines.add(only);
      }
    }
    return engines;
  }

  @Test
  void competingMembersOfOneGroupGetEachMessageOnceAtATimeAndLoseNone() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    int messages = 600;
    for (int i = 0; i < messages / 100; i++) {
      appendValues("q", 100);
    }
    List<Storage> opened = new ArrayList<>();
    try {
      List<GroupCoordinator> engines = engines(opened);
      for (int i = 0; i < engines.size(); i++) {
        engines.get(i).join("q", "", "g", "m" + i, null);
      }
      List<CompetingMembers.Member> members = new ArrayList<>();
      for (int i = 0; i < engines.size(); i++) {
        GroupCoordinator engine = engines.get(i);
        String me = "m" + i;
        members.add(
            new CompetingMembers.Member(n -> engine.claimBatch("q", "g", me, n), engine::ackAll));
      }
      CompetingMembers.drainAndCheck(members, messages, 7, 29, Duration.ofSeconds(90));
      ConsumerGroupState g = groups().getGroup("q", "g");
      assertThat(g.pending()).as("nothing left pending").isEmpty();
      assertThat(g.committed()).as("committed up to the tail").isEqualTo(messages);
    } finally {
      opened.forEach(Storage::close);
    }
  }

  @Test
  void competingMembersOfAnOrderedQueueKeepEachKeysOrder() throws Exception {
    queues().createQueue(QueueConfig.durable("q").ordering(OrderingKey.MESSAGE_KEY).build());
    Map<String, List<Integer>> published = new LinkedHashMap<>();
    List<Message> batch = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      String key = "k" + (i * 7 % 13);
      published.computeIfAbsent(key, k -> new ArrayList<>()).add(i);
      batch.add(
          Message.builder()
              .topic("t")
              .key(key.getBytes(UTF_8))
              .value(Integer.toString(i).getBytes(UTF_8))
              .build());
    }
    queues().appendBatch("q", batch);
    List<Storage> opened = new ArrayList<>();
    try {
      List<GroupCoordinator> engines = engines(opened);
      List<java.util.function.Function<Integer, List<GroupDelivery>>> claimers = new ArrayList<>();
      for (int i = 0; i < engines.size(); i++) {
        GroupCoordinator engine = engines.get(i);
        String me = "m" + i;
        engine.join("q", "", "g", me, null);
        claimers.add(n -> engine.claimBatch("q", "g", me, n));
      }
      CompetingKeyConsumers.drainAndCheck(claimers, published, Duration.ofSeconds(90));
    } finally {
      opened.forEach(Storage::close);
    }
  }

  // ===========================================================================================
  // Exact truncation (exactTruncation() stores only) and size
  // ===========================================================================================

  @Test
  void exactTruncationMovesTheHeadToTheRequestedOffsetInsideABatch() throws Exception {
    assumeThat(exactTruncation()).as("the store truncates exactly").isTrue();
    queues().createQueue(QueueConfig.durable("q").build());
    for (int batch = 0; batch < 3; batch++) {
      appendValues("q", 10);
    }
    queues().truncate("q", 13);
    assertExactHead(queues(), 13, 30);
    queues().truncate("q", 13);
    queues().truncate("q", 7);
    assertExactHead(queues(), 13, 30);
    queues().truncate("q", 21);
    assertExactHead(queues(), 21, 30);
    if (persistent()) {
      reopen();
      assertExactHead(queues(), 21, 30);
    }
    assertThat(queues().append("q", message("v30"))).isEqualTo(30);
    assertExactHead(queues(), 21, 31);
  }

  /** head == {@code head}, tail == {@code tail}, nothing below the head readable. */
  private static void assertExactHead(DurableQueueStore q, long head, long tail) {
    assertThat(q.head("q")).as("head").isEqualTo(head);
    assertThat(q.tail("q")).as("tail").isEqualTo(tail);
    assertThat(q.count("q")).as("count").isEqualTo(tail - head);
    assertThatThrownBy(() -> q.read("q", head - 1))
        .as("read below the head")
        .isInstanceOf(OffsetOutOfRangeException.class);
    assertThat(utf8(q.read("q", head))).isEqualTo("v" + head);
    List<Message> all = q.readBatch("q", 0, 1000);
    assertThat(all).extracting(Message::offset).first().isEqualTo(head);
    assertThat(all).hasSize((int) (tail - head));
    q.sizeOffset("q", Long.MAX_VALUE)
        .ifPresent(o -> assertThat(o).as("sizeOffset within the log").isEqualTo(head));
    q.timeOffset("q", Instant.EPOCH)
        .ifPresent(o -> assertThat(o).as("timeOffset within the log").isBetween(head, tail));
  }

  @Test
  void bytesGrowWithAppendsAndShrinkAfterTruncation() {
    queues().createQueue(QueueConfig.durable("q").build());
    OptionalLong empty = queues().bytes("q");
    assumeThat(empty).as("the store tells the bytes a queue occupies").isPresent();
    assertThat(empty.getAsLong()).isNotNegative();
    appendValues("q", 10);
    long ten = queues().bytes("q").orElseThrow();
    assertThat(ten).isGreaterThan(empty.getAsLong());
    queues().appendBatch("q", List.of(message("x".repeat(500)), message("y".repeat(500))));
    long twelve = queues().bytes("q").orElseThrow();
    assertThat(twelve).isGreaterThanOrEqualTo(ten + 1000);
    queues().truncate("q", queues().tail("q"));
    long none = queues().bytes("q").orElseThrow();
    assertThat(none).isNotNegative().isLessThan(twelve);
    assertThat(queues().bytes("q")).as("asking changes nothing").hasValue(none);
  }

  // ===========================================================================================
  // Read-only open (stores whose openReadOnly(Path) hook answers)
  // ===========================================================================================

  /** The store under test opened read-only beside the writer; skips the test if it cannot be. */
  private Storage readOnly() throws Exception {
    Optional<Storage> ro = openReadOnly(dir);
    assumeThat(ro).as("the store has a read-only open (openReadOnly(Path))").isPresent();
    readOnlyStores.add(ro.get());
    return ro.get();
  }

  @Test
  void readOnlyOpenSeesWhatTheWriterCommitted() throws Exception {
    queues().createQueue(QueueConfig.durable("q").topics("a/#").build());
    queues().createQueue(QueueConfig.durable("s").topics("s/#").type(QueueType.STREAM).build());
    appendValues("q", 5);
    queues()
        .appendBatchAndSync(
            "q", List.of(message("v5", T0), message("v6", T0.plusSeconds(1))), Map.of("p0", "7"));
    groups().createGroup(group("q", "g"));
    groups().registerConsumer("q", "g", consumer("c1", T0));
    groups().claimPending("q", "g", List.of(pending(0, "c1"), pending(1, "c1")), 2, T0);
    groups().acknowledgePending("q", "g", "c1", 0, 1, T0.plusSeconds(1));
    groups().createGroup(group("s", "empty"));

    Storage ro = readOnly();
    assertSameAsWriter(ro, "q", "s");
    assertThat(ro.queues().findMatchingQueues("a/b")).containsExactly("q");
    assertThat(ro.queues().readBatch("q", 0, 100))
        .extracting(StoreContractTest::utf8)
        .containsExactly("v0", "v1", "v2", "v3", "v4", "v5", "v6");
    assertThat(ro.queues().checkpoints("q")).isEqualTo(Map.of("p0", "7"));
    assertThat(ro.groups().getGroup("q", "g").committed()).isEqualTo(1);
    assertThat(ro.groups().findPending("q", "g", 1)).contains(pending(1, "c1"));
    assertThat(ro.groups().getPending("q", "g", "c1")).containsExactly(pending(1, "c1"));
    assertThat(ro.groups().listConsumers("q", "g")).containsExactly(consumer("c1", T0));
    assertThat(ro.groups().findGroup("q", "nope")).isEmpty();
    assertThatThrownBy(() -> ro.queues().getQueue("nope"))
        .isInstanceOf(QueueNotFoundException.class);
    assertThatThrownBy(() -> ro.groups().listGroups("nope"))
        .isInstanceOf(QueueNotFoundException.class);
    assertThatThrownBy(() -> ro.groups().getGroup("q", "nope"))
        .isInstanceOf(GroupNotFoundException.class);
  }

  @Test
  void readOnlyOpenSeesLaterChangesOfTheWriter() throws Exception {
    Storage ro = readOnly();
    assertThat(ro.queues().listQueues()).isEmpty();

    queues().createQueue(QueueConfig.durable("q").topics("a/#").build());
    assertThat(ro.queues().getQueue("q")).isEqualTo(queues().getQueue("q"));
    assertThat(ro.queues().findMatchingQueues("a/b")).containsExactly("q");
    assertThat(ro.queues().tail("q")).isZero();

    Future<Boolean> woken =
        executor.submit(() -> ro.queues().awaitAppend("q", 2, Duration.ofSeconds(30)));
    appendValues("q", 3);
    assertThat(woken.get(30, TimeUnit.SECONDS)).as("awaitAppend saw the append").isTrue();
    assertThat(ro.queues().tail("q")).isEqualTo(3);
    assertThat(utf8(ro.queues().read("q", 2))).isEqualTo("v2");
    queues().appendBatchAndSync("q", List.of(message("v3")), Map.of("k", "1"));
    assertThat(ro.queues().checkpoints("q")).isEqualTo(Map.of("k", "1"));

    groups().createGroup(group("q", "g"));
    assertThat(ro.groups().listGroups("q")).containsExactly(groups().getGroup("q", "g"));
    groups().claimPending("q", "g", List.of(pending(0, "c1"), pending(1, "c1")), 2, T0);
    assertThat(ro.groups().getGroup("q", "g")).isEqualTo(groups().getGroup("q", "g"));
    groups().acknowledgePending("q", "g", "c1", 0, 1, T0.plusSeconds(1));
    groups().acknowledgePending("q", "g", "c1", 1, 1, T0.plusSeconds(2));
    assertThat(ro.groups().getGroup("q", "g")).isEqualTo(groups().getGroup("q", "g"));
    assertThat(ro.groups().getGroup("q", "g").committed()).isEqualTo(2);

    queues().truncate("q", 2);
    assertThat(ro.queues().head("q")).isEqualTo(queues().head("q"));
    long head = ro.queues().head("q");
    if (head > 0) {
      assertThatThrownBy(() -> ro.queues().read("q", head - 1))
          .isInstanceOf(OffsetOutOfRangeException.class);
    }
    assertThat(ro.queues().readBatch("q", 0, 10).get(0).offset()).isEqualTo(head);

    QueueConfig updated = queues().getQueue("q").toBuilder().topics("b/#").build();
    queues().updateQueue(updated);
    assertThat(ro.queues().getQueue("q")).isEqualTo(updated);
    assertThat(ro.queues().findMatchingQueues("b/c")).containsExactly("q");
    assertThat(ro.queues().findMatchingQueues("a/b")).isEmpty();

    groups().deleteGroup("q", "g");
    assertThat(ro.groups().findGroup("q", "g")).isEmpty();
    assertThat(ro.groups().listGroups("q")).isEmpty();

    queues().deleteQueue("q");
    assertThat(ro.queues().listQueues()).isEmpty();
    assertThatThrownBy(() -> ro.queues().tail("q")).isInstanceOf(QueueNotFoundException.class);
    queues().createQueue(QueueConfig.durable("q").build());
    assertThat(ro.queues().tail("q")).as("created again: a new, empty queue").isZero();
    assertThat(ro.groups().listGroups("q")).isEmpty();
  }

  @Test
  void readOnlyMutatorsRefuseAndChangeNothing() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 4);
    groups().createGroup(group("q", "g"));
    groups().addPending("q", "g", pending(1, "c1"));
    groups().registerConsumer("q", "g", consumer("c1", T0));
    Storage ro = readOnly();
    List<QueueConfig> queuesBefore = queues().listQueues();
    List<ConsumerGroupState> groupsBefore = groups().listGroups("q");
    List<Message> messagesBefore = queues().readBatch("q", 0, 100);

    Map<String, ThrowingCallable> calls = new LinkedHashMap<>();
    DurableQueueStore q = ro.queues();
    ConsumerGroupStore g = ro.groups();
    calls.put("createQueue", () -> q.createQueue(QueueConfig.durable("new").build()));
    calls.put("updateQueue", () -> q.updateQueue(QueueConfig.durable("q").topics("x").build()));
    calls.put("deleteQueue", () -> q.deleteQueue("q"));
    calls.put("append", () -> q.append("q", message("x")));
    calls.put("append to an unknown queue", () -> q.append("nope", message("x")));
    calls.put("appendBatch", () -> q.appendBatch("q", List.of(message("x"))));
    calls.put("appendAndSync", () -> q.appendAndSync("q", message("x")));
    calls.put(
        "appendBatchAndSync", () -> q.appendBatchAndSync("q", List.of(message("x")), Map.of()));
    calls.put("truncate", () -> q.truncate("q", 2));
    calls.put("createGroup", () -> g.createGroup(group("q", "new")));
    calls.put("updateGroup", () -> g.updateGroup(group("q", "g")));
    calls.put("deleteGroup", () -> g.deleteGroup("q", "g"));
    calls.put("addPending", () -> g.addPending("q", "g", pending(2, "c1")));
    calls.put("removePending", () -> g.removePending("q", "g", "c1", 1));
    calls.put("updatePending", () -> g.updatePending("q", "g", pending(1, "c2")));
    calls.put(
        "transferPending",
        () -> g.transferPending("q", "g", 1, "c1", "c2", T0, Duration.ofSeconds(1)));
    calls.put("claimPending", () -> g.claimPending("q", "g", List.of(pending(2, "c1")), 3, T0));
    calls.put("acknowledgePending", () -> g.acknowledgePending("q", "g", "c1", 1, 1, T0));
    calls.put(
        "acknowledgeAllPending",
        () ->
            g.acknowledgeAllPending(
                "q", "g", "c1", new long[] {1}, new int[] {1}, new boolean[1], T0));
    calls.put("setPaused", () -> g.setPaused("q", "g", true, T0));
    calls.put("updateCursor", () -> g.updateCursor("q", "g", 3, T0));
    calls.put("updateCommitted", () -> g.updateCommitted("q", "g", 3, T0));
    calls.put("registerConsumer", () -> g.registerConsumer("q", "g", consumer("c2", T0)));
    calls.put("unregisterConsumer", () -> g.unregisterConsumer("q", "g", "c1"));
    calls.forEach(
        (name, call) ->
            assertThatThrownBy(call)
                .as(name)
                .isInstanceOf(ReadOnlyStoreException.class)
                .hasMessageContaining(ro.description())
                .hasMessageContaining("read-only"));

    assertThat(queues().listQueues()).containsExactlyInAnyOrderElementsOf(queuesBefore);
    assertThat(queues().readBatch("q", 0, 100)).isEqualTo(messagesBefore);
    assertThat(queues().head("q")).isZero();
    assertThat(groups().listGroups("q")).containsExactlyInAnyOrderElementsOf(groupsBefore);
    assertSameAsWriter(ro, "q");
  }

  @Test
  void readOnlyOpenOfAMissingStoreIsStoreNotFoundAndCreatesNothing() throws Exception {
    readOnly(); // the store has a read-only open
    Path missing = dir.resolve("missing");
    Set<Path> before = filesUnder(dir);
    Throwable thrown = catchThrowable(() -> openReadOnly(missing).ifPresent(Storage::close));
    assertThat(thrown).isInstanceOf(StoreNotFoundException.class);
    assertThat(missing).doesNotExist();
    assertThat(filesUnder(dir)).as("nothing created").isEqualTo(before);
  }

  @Test
  void closingAReadOnlyStoreClosesOnlyIt() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    Storage ro = readOnly();
    assertThat(ro.queues().tail("q")).isZero();
    ro.close();
    ro.close();
    assertThatThrownBy(() -> ro.queues().tail("q")).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> ro.queues().listQueues()).isInstanceOf(StoreClosedException.class);
    assertThatThrownBy(() -> ro.groups().listGroups("q")).isInstanceOf(StoreClosedException.class);
    assertThat(queues().append("q", message("v0"))).isZero();
    assertThat(queues().tail("q")).isEqualTo(1);
  }

  /** The read-only store answers every read of {@code names} as the writer does. */
  private void assertSameAsWriter(Storage ro, String... names) {
    assertThat(ro.queues().listQueues()).containsExactlyInAnyOrderElementsOf(queues().listQueues());
    for (String name : names) {
      DurableQueueStore w = queues();
      DurableQueueStore r = ro.queues();
      assertThat(r.getQueue(name)).isEqualTo(w.getQueue(name));
      assertThat(r.head(name)).as("head of %s", name).isEqualTo(w.head(name));
      assertThat(r.tail(name)).as("tail of %s", name).isEqualTo(w.tail(name));
      assertThat(r.count(name)).as("count of %s", name).isEqualTo(w.count(name));
      assertThat(r.readBatch(name, 0, 1000)).isEqualTo(w.readBatch(name, 0, 1000));
      if (w.tail(name) > 0) {
        assertThat(r.read(name, w.tail(name) - 1)).isEqualTo(w.read(name, w.tail(name) - 1));
      }
      assertThat(r.checkpoints(name)).isEqualTo(w.checkpoints(name));
      assertThat(r.timeOffset(name, T0)).isEqualTo(w.timeOffset(name, T0));
      assertThat(r.sizeOffset(name, 100)).isEqualTo(w.sizeOffset(name, 100));
      assertThat(r.bytes(name)).isEqualTo(w.bytes(name));
      Map<String, ConsumerGroupState> writerGroups = new HashMap<>();
      groups().listGroups(name).forEach(g -> writerGroups.put(g.id(), g));
      Map<String, ConsumerGroupState> readerGroups = new HashMap<>();
      ro.groups().listGroups(name).forEach(g -> readerGroups.put(g.id(), g));
      assertThat(readerGroups).isEqualTo(writerGroups);
      for (String id : writerGroups.keySet()) {
        assertThat(ro.groups().getGroup(name, id)).isEqualTo(groups().getGroup(name, id));
        assertThat(ro.groups().getAllPending(name, id)).isEqualTo(groups().getAllPending(name, id));
      }
    }
  }

  /** Every path under {@code root}, {@code root} included. */
  private static Set<Path> filesUnder(Path root) throws java.io.IOException {
    try (java.util.stream.Stream<Path> s = java.nio.file.Files.walk(root)) {
      return s.collect(java.util.stream.Collectors.toCollection(TreeSet::new));
    }
  }

  // ===========================================================================================
  // Persistence (persistent() stores only)
  // ===========================================================================================

  @Test
  void queuesConfigsAndMessagesSurviveReopen() throws Exception {
    assumePersistent();
    QueueConfig a = QueueConfig.durable("a").topics("x/#").maxDepth(5).build();
    QueueConfig b = QueueConfig.reservedStream("$dlq/b").lastConsumerDisconnect(T0).build();
    QueueConfig empty = QueueConfig.ephemeral("empty").build();
    queues().createQueue(a);
    queues().createQueue(b);
    queues().createQueue(empty);
    Message full =
        Message.builder()
            .id("1")
            .topic("x/y")
            .key(new byte[] {1, 2})
            .value(null)
            .header("h", (byte[]) null)
            .header("h", new byte[0])
            .timestamp(77, TimestampType.LOG_APPEND_TIME)
            .createdAt(T0)
            .expiresAt(T0.plusNanos(5))
            .state(MessageState.DLQ)
            .property("p", "v")
            .build();
    List<Message> expectedA = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      Message m = i == 3 ? full : message("a" + i, T0.plusSeconds(i));
      expectedA.add(m.withOffset(queues().append("a", m)));
    }
    long bFirst = queues().appendBatch("$dlq/b", List.of(message("b0"), message("b1")));

    reopen();

    assertThat(queues().listQueues()).containsExactlyInAnyOrder(a, b, empty);
    assertThat(queues().readBatch("a", 0, 100)).containsExactlyElementsOf(expectedA);
    assertThat(queues().tail("a")).isEqualTo(10);
    assertThat(queues().head("a")).isZero();
    assertThat(queues().readBatch("$dlq/b", bFirst, 10))
        .extracting(StoreContractTest::utf8)
        .containsExactly("b0", "b1");
    assertThat(queues().head("empty")).isZero();
    assertThat(queues().tail("empty")).isZero();
  }

  @Test
  void appendsContinueAtTheTailAfterReopen() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 5);
    reopen();
    assertThat(queues().append("q", message("v5"))).isEqualTo(5);
    assertThat(queues().appendBatch("q", List.of(message("v6"), message("v7")))).isEqualTo(6);
    reopen();
    assertThat(queues().appendAndSync("q", message("v8"))).isEqualTo(8);
    assertThat(queues().readBatch("q", 0, 100))
        .extracting(StoreContractTest::utf8)
        .containsExactly("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8");
  }

  @Test
  void durableAppendsAndCheckpointsSurviveReopen() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("q").build());
    queues().appendAndSync("q", message("v0"));
    queues().appendBatchAndSync("q", List.of(message("v1"), message("v2")), Map.of("p0", "3"));
    queues().appendBatchAndSync("q", List.of(message("v3")), Map.of("p0", "4", "p1", "1"));
    reopen();
    assertThat(queues().checkpoints("q"))
        .containsExactlyInAnyOrderEntriesOf(Map.of("p0", "4", "p1", "1"));
    assertThat(queues().readBatch("q", 0, 10))
        .extracting(StoreContractTest::utf8)
        .containsExactly("v0", "v1", "v2", "v3");
  }

  @Test
  void truncationSurvivesReopen() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 30);
    queues().truncate("q", 17);
    long head = queues().head("q");
    reopen();
    assertThat(queues().head("q")).isEqualTo(head);
    assertThat(queues().tail("q")).isEqualTo(30);
    assertThat(utf8(queues().read("q", 17))).isEqualTo("v17");
    assertThat(queues().append("q", message("v30"))).isEqualTo(30);
  }

  @Test
  void fullyTruncatedQueueKeepsItsTailAcrossReopen() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("q").build());
    appendValues("q", 12);
    queues().truncate("q", 12);
    reopen();
    assertThat(queues().tail("q")).isEqualTo(12);
    assertThat(queues().head("q")).isBetween(0L, 12L);
    assertThat(queues().append("q", message("v12"))).isEqualTo(12);
  }

  @Test
  void configUpdatesAndTheTopicIndexSurviveReopen() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("q").topics("old/#").build());
    queues().createQueue(QueueConfig.durable("r").topics("old/+").build());
    QueueConfig updated = QueueConfig.durable("q").topics("new/+").maxDepth(3).build();
    queues().updateQueue(updated);
    reopen();
    assertThat(queues().getQueue("q")).isEqualTo(updated);
    assertThat(queues().findMatchingQueues("new/x")).containsExactly("q");
    assertThat(queues().findMatchingQueues("old/x")).containsExactly("r");
  }

  @Test
  void deletedQueuesAndGroupsStayDeletedAfterReopen() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("gone").topics("g/#").build());
    queues().append("gone", message("x"));
    groups().createGroup(group("gone", "g"));
    queues().createQueue(QueueConfig.durable("q").build());
    groups().createGroup(group("q", "dropped"));
    groups().createGroup(group("q", "kept"));
    queues().deleteQueue("gone");
    groups().deleteGroup("q", "dropped");
    reopen();
    assertThatThrownBy(() -> queues().getQueue("gone")).isInstanceOf(QueueNotFoundException.class);
    assertThat(queues().findMatchingQueues("g/1")).containsExactly("q"); // "#" by default
    assertThat(groups().listGroups("q")).containsExactly(group("q", "kept"));
    queues().createQueue(QueueConfig.durable("gone").build());
    assertThat(queues().tail("gone")).isZero();
    assertThat(groups().listGroups("gone")).isEmpty();
  }

  @Test
  void groupsPendingEntriesAndMembersSurviveReopen() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("q").build());
    ConsumerGroupState stream =
        ConsumerGroupState.create("q", "s@a/#", "a/#", GroupMode.STREAM, false, T0);
    groups().createGroup(stream);
    groups().createGroup(group("q", "w"));
    groups().updateCursor("q", "s@a/#", 12, T0.plusSeconds(1));
    groups().updateCommitted("q", "s@a/#", 9, T0.plusSeconds(2));
    groups().registerConsumer("q", "w", consumer("c1", T0));
    groups().registerConsumer("q", "w", consumer("c2", T0.plusSeconds(3)));
    groups().addPending("q", "w", pending(1, "c1"));
    groups().addPending("q", "w", pending(2, "c2"));
    groups().addPending("q", "w", pending(3, "c1"));
    groups().removePending("q", "w", "c1", 1);
    groups().transferPending("q", "w", 3, "c1", "c2", T0.plusSeconds(4), Duration.ofSeconds(30));
    groups().unregisterConsumer("q", "w", "c1");
    Map<String, ConsumerGroupState> before = new HashMap<>();
    groups().listGroups("q").forEach(g -> before.put(g.id(), g));

    reopen();

    Map<String, ConsumerGroupState> after = new HashMap<>();
    groups().listGroups("q").forEach(g -> after.put(g.id(), g));
    assertThat(after).isEqualTo(before);
    assertThat(after.get("w").pending()).extracting(PendingEntry::offset).containsExactly(2L, 3L);
    assertThat(after.get("w").consumers()).containsOnlyKeys("c2");
    assertThat(after.get("s@a/#").cursor()).isEqualTo(12);
    assertThat(after.get("s@a/#").committed()).isEqualTo(9);
  }

  // ===========================================================================================
  // Deduplicated appends (BEHAVIOUR Q-DEDUP)
  // ===========================================================================================

  /** The window every deduplication rule uses: ids of messages created in the last minute. */
  private static final Duration WINDOW = Duration.ofMinutes(1);

  /** A message carrying deduplication id {@code id}, created at {@code at}. */
  protected static Message dedup(String value, String id, Instant at) {
    return Message.builder()
        .topic("t")
        .value(value.getBytes(UTF_8))
        .property(MessageProperties.DEDUP_ID, id)
        .createdAt(at)
        .build();
  }

  private AppendResult appendDedup(String queue, String value, String id, Instant at) {
    return queues().appendDeduplicated(queue, dedup(value, id, at), at.minus(WINDOW));
  }

  @Test
  void deduplicatedAppendStoresANewIdAndAnswersTheFirstOffsetForARepeatStoringNothing() {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().append("q", message("plain", T0));
    assertThat(appendDedup("q", "first", "id-1", T0)).isEqualTo(AppendResult.stored(1));
    assertThat(appendDedup("q", "retry", "id-1", T0.plusSeconds(30)))
        .isEqualTo(AppendResult.duplicateOf(1));
    assertThat(appendDedup("q", "other", "id-2", T0.plusSeconds(31)))
        .isEqualTo(AppendResult.stored(2));
    assertThat(appendDedup("q", "retry", "id-1", T0.plus(WINDOW)))
        .as("still inside the window: created at its start")
        .isEqualTo(AppendResult.duplicateOf(1));
    assertThat(queues().tail("q")).isEqualTo(3);
    List<Message> log = queues().readBatch("q", 0, 10);
    assertThat(log).extracting(StoreContractTest::utf8).containsExactly("plain", "first", "other");
    assertThat(log.get(1).properties()).containsEntry(MessageProperties.DEDUP_ID, "id-1");
    assertThat(log.get(1).createdAt()).isEqualTo(T0);
    assertThat(log.get(2).properties()).containsEntry(MessageProperties.DEDUP_ID, "id-2");
  }

  @Test
  void deduplicatedOffsetLooksUpWhatADeduplicatedAppendRememberedAndChangesNothing()
      throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    queues().createQueue(QueueConfig.durable("other").build());
    assertThat(queues().deduplicatedOffset("q", "id-1", T0.minus(WINDOW))).isEmpty();
    queues().append("q", message("plain", T0));
    assertThat(appendDedup("q", "first", "id-1", T0)).isEqualTo(AppendResult.stored(1));
    assertThat(queues().deduplicatedOffset("q", "id-1", T0.minus(WINDOW))).hasValue(1);
    assertThat(queues().deduplicatedOffset("q", "id-1", T0))
        .as("created at the window's start: still remembered")
        .hasValue(1);
    assertThat(queues().deduplicatedOffset("q", "id-1", T0.plusNanos(1)))
        .as("created before the window's start: forgotten")
        .isEmpty();
    assertThat(queues().deduplicatedOffset("q", "id-2", T0.minus(WINDOW))).isEmpty();
    assertThat(queues().deduplicatedOffset("other", "id-1", T0.minus(WINDOW)))
        .as("ids are kept per queue")
        .isEmpty();
    assertThat(queues().tail("q")).as("a lookup stores nothing").isEqualTo(2);
    assertThat(appendDedup("q", "retry", "id-1", T0.plusSeconds(1)))
        .as("a lookup with a later window start forgot nothing")
        .isEqualTo(AppendResult.duplicateOf(1));
    assertThatThrownBy(() -> queues().deduplicatedOffset("q", "", T0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("deduplication id")
        .hasMessageContaining("empty");
    assertThatThrownBy(() -> queues().deduplicatedOffset("missing", "id-1", T0))
        .isInstanceOf(QueueNotFoundException.class);
    if (persistent()) {
      reopen();
      assertThat(queues().deduplicatedOffset("q", "id-1", T0.minus(WINDOW))).hasValue(1);
    }
  }

  @Test
  void anIdWhoseMessageIsOlderThanTheWindowIsStoredAnewAndRememberedFromThen() {
    queues().createQueue(QueueConfig.durable("q").build());
    assertThat(appendDedup("q", "first", "id", T0)).isEqualTo(AppendResult.stored(0));
    Instant later = T0.plus(WINDOW).plusNanos(1);
    assertThat(appendDedup("q", "second", "id", later)).isEqualTo(AppendResult.stored(1));
    assertThat(appendDedup("q", "third", "id", later.plusSeconds(1)))
        .isEqualTo(AppendResult.duplicateOf(1));
    assertThat(queues().readBatch("q", 0, 10))
        .extracting(StoreContractTest::utf8)
        .containsExactly("first", "second");
  }

  @Test
  void theSyncAndThePlainDeduplicatedAppendShareTheIds() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    assertThat(queues().appendDeduplicatedAndSync("q", dedup("a", "x", T0), T0.minus(WINDOW)))
        .isEqualTo(AppendResult.stored(0));
    assertThat(appendDedup("q", "b", "x", T0.plusSeconds(1)))
        .isEqualTo(AppendResult.duplicateOf(0));
    assertThat(appendDedup("q", "c", "y", T0.plusSeconds(2))).isEqualTo(AppendResult.stored(1));
    assertThat(
            queues()
                .appendDeduplicatedAndSync(
                    "q", dedup("d", "y", T0.plusSeconds(3)), T0.plusSeconds(3).minus(WINDOW)))
        .isEqualTo(AppendResult.duplicateOf(1));
    assertThat(queues().readBatch("q", 0, 10))
        .extracting(StoreContractTest::utf8)
        .containsExactly("a", "c");
  }

  @Test
  void deduplicationIdsArePerQueueAndADeletedQueueForgetsThem() {
    queues().createQueue(QueueConfig.durable("q1").build());
    queues().createQueue(QueueConfig.durable("q2").build());
    assertThat(appendDedup("q1", "a", "id", T0)).isEqualTo(AppendResult.stored(0));
    assertThat(appendDedup("q2", "b", "id", T0)).isEqualTo(AppendResult.stored(0));
    queues().deleteQueue("q1");
    queues().createQueue(QueueConfig.durable("q1").build());
    assertThat(appendDedup("q1", "c", "id", T0.plusSeconds(1))).isEqualTo(AppendResult.stored(0));
    assertThat(utf8(queues().read("q1", 0))).isEqualTo("c");
    assertThat(appendDedup("q2", "d", "id", T0.plusSeconds(1)))
        .isEqualTo(AppendResult.duplicateOf(0));
  }

  @Test
  void aTruncatedOriginalStillBlocksItsIdAndAnswersItsOffset() {
    queues().createQueue(QueueConfig.durable("q").build());
    assertThat(appendDedup("q", "first", "id", T0)).isEqualTo(AppendResult.stored(0));
    queues().appendBatch("q", List.of(message("v1", T0), message("v2", T0)));
    queues().truncate("q", 2);
    assertThat(appendDedup("q", "retry", "id", T0.plusSeconds(5)))
        .isEqualTo(AppendResult.duplicateOf(0));
    assertThat(queues().tail("q")).isEqualTo(3);
  }

  @Test
  void aReopenedStoreStillRefusesADuplicateInsideTheWindow() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("q").build());
    queues().append("q", message("plain", T0));
    assertThat(appendDedup("q", "a", "id-a", T0)).isEqualTo(AppendResult.stored(1));
    assertThat(queues().appendDeduplicatedAndSync("q", dedup("b", "id-b", T0), T0.minus(WINDOW)))
        .isEqualTo(AppendResult.stored(2));
    reopen();
    Instant now = T0.plusSeconds(20);
    assertThat(appendDedup("q", "a2", "id-a", now)).isEqualTo(AppendResult.duplicateOf(1));
    assertThat(appendDedup("q", "b2", "id-b", now)).isEqualTo(AppendResult.duplicateOf(2));
    assertThat(appendDedup("q", "c", "id-c", now)).isEqualTo(AppendResult.stored(3));
    assertThat(appendDedup("q", "a3", "id-a", T0.plus(WINDOW).plusNanos(1)))
        .as("past the window after the reopen")
        .isEqualTo(AppendResult.stored(4));
    assertThat(queues().readBatch("q", 0, 10))
        .extracting(StoreContractTest::utf8)
        .containsExactly("plain", "a", "b", "c", "a3");
  }

  @Test
  void aReopenedStoreRemembersTheIdOfATruncatedOriginal() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("q").dedupWindow(WINDOW).build());
    assertThat(appendDedup("q", "first", "id", T0)).isEqualTo(AppendResult.stored(0));
    assertThat(appendDedup("q", "second", "id-2", T0)).isEqualTo(AppendResult.stored(1));
    queues().appendBatch("q", List.of(message("v2", T0), message("v3", T0)));
    queues().truncate("q", 3);
    reopen();
    assertThat(appendDedup("q", "retry", "id", T0.plusSeconds(5)))
        .isEqualTo(AppendResult.duplicateOf(0));
    assertThat(appendDedup("q", "retry", "id-2", T0.plusSeconds(5)))
        .isEqualTo(AppendResult.duplicateOf(1));
    assertThat(queues().tail("q")).isEqualTo(4);
    queues().truncate("q", 4);
    reopen();
    assertThat(appendDedup("q", "again", "id", T0.plusSeconds(6)))
        .as("truncated twice, reopened twice")
        .isEqualTo(AppendResult.duplicateOf(0));
    assertThat(appendDedup("q", "later", "id", T0.plus(WINDOW).plusSeconds(1)))
        .as("past the window")
        .isEqualTo(AppendResult.stored(4));
  }

  @Test
  void aTruncationBeforeAnyDeduplicatedAppendSinceTheOpenStillKeepsTheIds() throws Exception {
    assumePersistent();
    queues().createQueue(QueueConfig.durable("q").dedupWindow(WINDOW).build());
    assertThat(appendDedup("q", "first", "id", T0)).isEqualTo(AppendResult.stored(0));
    queues().append("q", message("v1", T0.plusSeconds(1)));
    reopen();
    queues().truncate("q", 2); // the retention pass of a restarted process
    reopen();
    assertThat(appendDedup("q", "retry", "id", T0.plusSeconds(10)))
        .isEqualTo(AppendResult.duplicateOf(0));
    assertThat(queues().tail("q")).isEqualTo(2);
  }

  @Test
  void concurrentAppendsOfTheSameIdsStoreEachIdOnceAndAllAnswerItsOffset() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    int threads = 8;
    int ids = 250;
    CountDownLatch start = new CountDownLatch(1);
    List<Future<Map<String, Long>>> answers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int seed = t;
      answers.add(
          executor.submit(
              () -> {
                List<Integer> order = new ArrayList<>();
                for (int i = 0; i < ids; i++) {
                  order.add(i);
                }
                java.util.Collections.shuffle(order, new java.util.Random(seed));
                Map<String, Long> seen = new HashMap<>();
                start.await();
                for (int i : order) {
                  String id = "id-" + i;
                  Message m = dedup("t" + seed + "-" + i, id, T0);
                  AppendResult r =
                      seed % 2 == 0
                          ? queues().appendDeduplicated("q", m, T0.minus(WINDOW))
                          : queues().appendDeduplicatedAndSync("q", m, T0.minus(WINDOW));
                  seen.put(id, r.offset());
                }
                return seen;
              }));
    }
    start.countDown();
    List<Map<String, Long>> all = new ArrayList<>();
    for (Future<Map<String, Long>> f : answers) {
      all.add(f.get(90, TimeUnit.SECONDS));
    }
    assertThat(queues().tail("q")).isEqualTo(ids);
    Map<String, Long> stored = new HashMap<>();
    for (Message m : queues().readBatch("q", 0, ids + 1)) {
      String id = m.properties().get(MessageProperties.DEDUP_ID);
      assertThat(stored.put(id, m.offset())).as("id %s stored once", id).isNull();
    }
    assertThat(stored).hasSize(ids);
    for (Map<String, Long> seen : all) {
      assertThat(seen).as("every thread got the stored offset of every id").isEqualTo(stored);
    }
  }

  @Test
  void aDeduplicatedAppendNeedsAnIdAndAnExistingQueue() {
    queues().createQueue(QueueConfig.durable("q").build());
    assertThatThrownBy(() -> queues().appendDeduplicated("q", message("v", T0), T0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(MessageProperties.DEDUP_ID)
        .hasMessageContaining("q");
    Message emptyId =
        Message.builder()
            .topic("t")
            .value(new byte[] {1})
            .property(MessageProperties.DEDUP_ID, "")
            .createdAt(T0)
            .build();
    assertThatThrownBy(() -> queues().appendDeduplicated("q", emptyId, T0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(MessageProperties.DEDUP_ID);
    assertThat(queues().tail("q")).isZero();
    assertThatThrownBy(() -> appendDedup("nope", "v", "id", T0))
        .isInstanceOf(QueueNotFoundException.class)
        .hasMessageContaining("nope");
  }

  @Test
  void readOnlyOpenRefusesDeduplicatedAppends() throws Exception {
    queues().createQueue(QueueConfig.durable("q").build());
    assertThat(appendDedup("q", "a", "id", T0)).isEqualTo(AppendResult.stored(0));
    Storage ro = readOnly();
    assertThatThrownBy(() -> ro.queues().appendDeduplicated("q", dedup("b", "id2", T0), T0))
        .isInstanceOf(ReadOnlyStoreException.class);
    assertThatThrownBy(() -> ro.queues().appendDeduplicatedAndSync("q", dedup("b", "id2", T0), T0))
        .isInstanceOf(ReadOnlyStoreException.class);
    assertThat(queues().tail("q")).isEqualTo(1);
  }

  // ===========================================================================================
  // Helpers
  // ===========================================================================================

  /** A message with a topic and a UTF-8 value. */
  protected static Message message(String value) {
    return Message.builder().topic("t").value(value.getBytes(UTF_8)).build();
  }

  /** A message with a topic, a UTF-8 value and a creation time. */
  protected static Message message(String value, Instant createdAt) {
    return Message.builder().topic("t").value(value.getBytes(UTF_8)).createdAt(createdAt).build();
  }

  /** The message's value as UTF-8 text. */
  protected static String utf8(Message m) {
    return new String(m.valueUnsafe(), UTF_8);
  }

  /** A new queue-mode group with auto-commit, created at {@link #T0}. */
  protected static ConsumerGroupState group(String queue, String id) {
    return ConsumerGroupState.create(queue, id, "", GroupMode.QUEUE, true, T0);
  }

  /**
   * A first delivery of {@code offset} to {@code consumer} at {@link #T0}, visible again 30 s on.
   */
  protected static PendingEntry pending(long offset, String consumer) {
    return new PendingEntry(offset, consumer, T0, 1, T0, T0.plusSeconds(30));
  }

  /** A member registered and last seen at {@code at}. */
  protected static ConsumerInfo consumer(String id, Instant at) {
    return new ConsumerInfo(id, id, at, at);
  }

  /** Appends {@code n} messages valued {@code v<offset>}. */
  protected void appendValues(String queue, int n) {
    long tail = queues().tail(queue);
    List<Message> batch = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      batch.add(message("v" + (tail + i)));
    }
    queues().appendBatch(queue, batch);
  }

  private void assumePersistent() {
    assumeThat(persistent()).as("the store is persistent").isTrue();
  }

  private boolean awaitUnchecked(String queue, long offset, Duration timeout) {
    try {
      return queues().awaitAppend(queue, offset, timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Waits until the thread stored in {@code thread} is blocked in a wait. */
  private static void awaitParked(AtomicReference<Thread> thread) {
    await("waiter parked")
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                thread.get() != null
                    && (thread.get().getState() == Thread.State.WAITING
                        || thread.get().getState() == Thread.State.TIMED_WAITING));
  }

  private void assertGroupOperationsFail(String queue, String id, Class<?>... kinds) {
    Map<String, ThrowingCallable> calls = new LinkedHashMap<>();
    calls.put("getGroup", () -> groups().getGroup(queue, id));
    calls.put("updateGroup", () -> groups().updateGroup(group(queue, id)));
    calls.put("addPending", () -> groups().addPending(queue, id, pending(0, "c")));
    calls.put("removePending", () -> groups().removePending(queue, id, "c", 0));
    calls.put("updatePending", () -> groups().updatePending(queue, id, pending(0, "c")));
    calls.put(
        "transferPending",
        () -> groups().transferPending(queue, id, 0, "c", "d", T0, Duration.ofSeconds(1)));
    calls.put("findPending", () -> groups().findPending(queue, id, 0));
    calls.put(
        "claimPending", () -> groups().claimPending(queue, id, List.of(pending(0, "c")), 1, T0));
    calls.put("acknowledgePending", () -> groups().acknowledgePending(queue, id, "c", 0, 1, T0));
    calls.put("getPending", () -> groups().getPending(queue, id, "c"));
    calls.put("getAllPending", () -> groups().getAllPending(queue, id));
    calls.put("setPaused", () -> groups().setPaused(queue, id, true, T0));
    calls.put("updateCursor", () -> groups().updateCursor(queue, id, 1, T0));
    calls.put("updateCommitted", () -> groups().updateCommitted(queue, id, 1, T0));
    calls.put("registerConsumer", () -> groups().registerConsumer(queue, id, consumer("c", T0)));
    calls.put("unregisterConsumer", () -> groups().unregisterConsumer(queue, id, "c"));
    calls.put("listConsumers", () -> groups().listConsumers(queue, id));
    calls.forEach((name, call) -> assertThatThrownBy(call).as(name).isInstanceOfAny(kinds));
    if (queues().listQueues().stream().anyMatch(c -> c.name().equals(queue))) {
      assertThat(groups().findGroup(queue, id)).as("nothing created").isEmpty();
    }
  }

  /** The lowest entry carrying {@code key}, through {@code firstPendingByKey}. */
  private static Optional<PendingEntry> firstWithKey(
      ConsumerGroupStore groups, String queue, String group, String key) {
    return Optional.ofNullable(groups.firstPendingByKey(queue, group, List.of(key)).get(key));
  }
}
