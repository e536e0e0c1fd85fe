package io.queuebridge.core;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.config.AckDurability;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueFullException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.support.QueueConfigCodec;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Deduplicated publish through the manager (BEHAVIOUR Q-DEDUP): the manager's clock drives the
 * window, every single-message publish path answers the first offset for a duplicate and counts it,
 * bad ids and windows are refused naming the field and the limit, and 100 concurrent publishers
 * retrying the same 10,000 ids store exactly 10,000 messages on the memory and the file store.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DedupPublishTest {
  private static final Duration WINDOW = Duration.ofMinutes(5);

  @TempDir Path dir;

  private final MutableClock clock = MutableClock.at("2026-03-01T12:00:00Z");
  private final RecordingScheduler scheduler = new RecordingScheduler();
  private final List<QueueManager> managers = new ArrayList<>();
  private final List<Storage> stores = new ArrayList<>();

  @AfterEach
  void tearDown() {
    managers.forEach(QueueManager::stop);
    stores.forEach(Storage::close);
  }

  private Storage store(String kind) {
    Storage s = kind.equals("file") ? QueueStores.file(dir.resolve("store")) : QueueStores.memory();
    stores.add(s);
    return s;
  }

  private QueueManager manager(Storage storage, AckDurability ack) {
    QueueManager m =
        new QueueManager(
            storage, QueueManagerConfig.builder().clock(clock).ackDurability(ack).build());
    m.deliveryScheduler(scheduler);
    managers.add(m);
    return m;
  }

  private static PublishRequest withId(String topic, String value, String id) {
    return PublishRequest.builder(topic).value(value.getBytes(UTF_8)).deduplicationId(id).build();
  }

  private static List<String> values(Storage s, String queue) {
    List<String> out = new ArrayList<>();
    for (Message m : s.queues().readBatch(queue, 0, 100_000)) {
      out.add(new String(m.valueUnsafe(), UTF_8));
    }
    return out;
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aRetryInsideTheWindowAnswersTheFirstOffsetStoresNothingAndIsCounted(String kind)
      throws Exception {
    Storage s = store(kind);
    QueueManager m = manager(s, AckDurability.FSYNC);
    m.createQueue(QueueConfig.durable("orders").dedupWindow(WINDOW).build());
    m.publishTo("orders", PublishRequest.of("orders", "plain".getBytes(UTF_8)));
    assertThat(m.publishTo("orders", withId("orders", "first", "order-17"))).isEqualTo(1);
    clock.advance(WINDOW);
    assertThat(m.publishTo("orders", withId("orders", "retry", "order-17"))).isEqualTo(1);
    assertThat(m.metrics().duplicatesRefused()).isEqualTo(1);
    assertThat(values(s, "orders")).containsExactly("plain", "first");
    Message stored = s.queues().read("orders", 1);
    assertThat(stored.properties()).containsEntry(MessageProperties.DEDUP_ID, "order-17");

    clock.advance(Duration.ofNanos(1)); // the first one is now older than the window
    assertThat(m.publishTo("orders", withId("orders", "again", "order-17"))).isEqualTo(2);
    assertThat(m.publishTo("orders", withId("orders", "again2", "order-17"))).isEqualTo(2);
    assertThat(m.metrics().duplicatesRefused()).isEqualTo(2);
    assertThat(values(s, "orders")).containsExactly("plain", "first", "again");
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aRetryAtMaxDepthAnswersTheFirstOffsetWhileANewMessageIsRefusedAsFull(String kind)
      throws Exception {
    Storage s = store(kind);
    QueueManager m = manager(s, AckDurability.FSYNC);
    m.createQueue(QueueConfig.durable("orders").dedupWindow(WINDOW).maxDepth(2).build());
    assertThat(m.publishTo("orders", withId("orders", "first", "order-1"))).isZero();
    assertThat(m.publishTo("orders", PublishRequest.of("orders", "plain".getBytes(UTF_8))))
        .isEqualTo(1);
    // full: a retry of a stored publish is a duplicate, not a new message
    assertThat(m.publishTo("orders", withId("orders", "retry", "order-1"))).isZero();
    assertThat(m.metrics().duplicatesRefused()).isEqualTo(1);
    assertThatThrownBy(() -> m.publishTo("orders", withId("orders", "new", "order-2")))
        .isInstanceOf(QueueFullException.class)
        .hasMessageContaining("orders");
    assertThatThrownBy(
            () -> m.publishTo("orders", PublishRequest.of("orders", "x".getBytes(UTF_8))))
        .isInstanceOf(QueueFullException.class);
    clock.advance(WINDOW.plusNanos(1)); // the first one is now older than the window
    assertThatThrownBy(() -> m.publishTo("orders", withId("orders", "late", "order-1")))
        .as("outside the window the retry is a new message, and there is no room")
        .isInstanceOf(QueueFullException.class);
    assertThat(m.metrics().duplicatesRefused()).isEqualTo(1);
    assertThat(values(s, "orders")).containsExactly("first", "plain");
  }

  @Test
  void aPurgedOriginalStillBlocksItsIdAfterTheFileStoreIsReopened() throws Exception {
    Storage first = QueueStores.file(dir.resolve("store"));
    QueueManager m = manager(first, AckDurability.FSYNC);
    m.createQueue(QueueConfig.durable("jobs").build());
    m.updateQueue(m.getQueue("jobs").toBuilder().dedupWindow(WINDOW).build());
    assertThat(m.publishTo("jobs", withId("jobs", "run", "job-1"))).isZero();
    assertThat(m.publishTo("jobs", withId("jobs", "run", "job-2"))).isEqualTo(1);
    assertThat(m.purgeQueue("jobs")).isEqualTo(2); // consumed and gone
    m.stop();
    managers.remove(m);
    first.close();

    clock.advance(Duration.ofMinutes(1));
    Storage second = store("file");
    QueueManager again = manager(second, AckDurability.FSYNC);
    assertThat(again.publishTo("jobs", withId("jobs", "retry", "job-1"))).isZero();
    assertThat(again.publishTo("jobs", withId("jobs", "retry", "job-2"))).isEqualTo(1);
    assertThat(second.queues().tail("jobs")).isEqualTo(2);
    assertThat(again.metrics().duplicatesRefused()).isEqualTo(2);
    assertThat(again.publishTo("jobs", withId("jobs", "new", "job-3"))).isEqualTo(2);
  }

  @Test
  void topicPublishDeduplicatesOnTheQueuesWithAWindowAndStoresPlainlyOnTheOthers()
      throws Exception {
    Storage s = store("memory");
    QueueManager m = manager(s, AckDurability.BUFFERED);
    m.createQueue(QueueConfig.durable("dedup").topics("orders/#").dedupWindow(WINDOW).build());
    m.createQueue(QueueConfig.durable("plain").topics("orders/#").build());
    m.publish(withId("orders/1", "a", "id-1"));
    m.publish(withId("orders/1", "b", "id-1"));
    assertThat(values(s, "dedup")).containsExactly("a");
    assertThat(values(s, "plain")).containsExactly("a", "b");
    assertThat(s.queues().read("plain", 1).properties())
        .as("the id is kept where the window is off")
        .containsEntry(MessageProperties.DEDUP_ID, "id-1");
    assertThat(m.metrics().duplicatesRefused()).isEqualTo(1);
  }

  @Test
  void topicCaptureDeduplicatesOnItsWorkers() throws Exception {
    Storage s = store("memory");
    QueueManager m =
        new QueueManager(s, QueueManagerConfig.builder().clock(clock).captureWorkers(1).build());
    managers.add(m);
    m.start();
    m.createQueue(QueueConfig.durable("audit").topics("sensors/#").dedupWindow(WINDOW).build());
    m.publishToMatchingQueues(withId("sensors/1", "a", "reading-1"));
    m.publishToMatchingQueues(withId("sensors/1", "b", "reading-1"));
    m.publishToMatchingQueues(withId("sensors/1", "c", "reading-2"));
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(values(s, "audit")).containsExactly("a", "c"));
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(m.metrics().duplicatesRefused()).isEqualTo(1));
    assertThat(m.metrics().captureFailures()).isZero();
  }

  @Test
  void aPublishersRawDedupPropertyIsDroppedAndDeduplicatesNothing() throws Exception {
    Storage s = store("memory");
    QueueManager m = manager(s, AckDurability.BUFFERED);
    m.createQueue(QueueConfig.durable("q").dedupWindow(WINDOW).build());
    PublishRequest forged =
        PublishRequest.builder("q")
            .value("v".getBytes(UTF_8))
            .property(MessageProperties.DEDUP_ID, "forged")
            .property("k", "kept")
            .build();
    assertThat(m.publishTo("q", forged)).isZero();
    assertThat(m.publishTo("q", forged)).isEqualTo(1);
    assertThat(s.queues().read("q", 1).properties())
        .doesNotContainKey(MessageProperties.DEDUP_ID)
        .containsEntry("k", "kept");
    assertThat(m.metrics().duplicatesRefused()).isZero();
  }

  @Test
  void theDurableStreamPathDeduplicatesBehindItsBarrierAndBatchesWithAnIdAreRefused()
      throws Exception {
    Storage s = store("file");
    QueueConfig contract = QueueConfig.reservedStream("events").dedupWindow(WINDOW).build();
    QueueManager m =
        new QueueManager(
            s,
            QueueManagerConfig.builder()
                .clock(clock)
                .protectedQueueContracts(List.of(contract))
                .build());
    m.deliveryScheduler(scheduler);
    managers.add(m);
    m.createQueue(contract);
    assertThat(m.publishToDurableStream("events", withId("e", "a", "x"))).isZero();
    assertThat(m.publishToDurableStream("events", withId("e", "b", "x"))).isZero();
    assertThat(m.publishToDurableStream("events", withId("e", "c", "y"))).isEqualTo(1);
    assertThat(values(s, "events")).containsExactly("a", "c");
    assertThat(m.metrics().duplicatesRefused()).isEqualTo(1);
    assertThatThrownBy(
            () ->
                m.publishBatchToDurableStream(
                    "events",
                    List.of(PublishRequest.of("e", new byte[1]), withId("e", "d", "z")),
                    Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("deduplicationId 'z'")
        .hasMessageContaining("request 1")
        .hasMessageContaining("events");
    assertThat(s.queues().tail("events")).isEqualTo(2);
  }

  @Test
  void anIdOverTheLimitOrEmptyIsRefusedNamingTheFieldAndTheLimit() {
    String max = "é".repeat(PublishRequest.MAX_DEDUPLICATION_ID_BYTES / 2); // 2 bytes each
    assertThat(PublishRequest.builder("t").deduplicationId(max).build().deduplicationId())
        .isEqualTo(max);
    assertThatThrownBy(() -> PublishRequest.builder("t").deduplicationId(max + "x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("deduplicationId")
        .hasMessageContaining("129 UTF-8 bytes")
        .hasMessageContaining("expected 1 to 128");
    assertThatThrownBy(() -> PublishRequest.builder("t").deduplicationId(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("deduplicationId '' is 0 UTF-8 bytes; expected 1 to 128");
    assertThat(PublishRequest.builder("t").deduplicationId(null).build().deduplicationId())
        .isEmpty();
  }

  @Test
  void theWindowIsValidatedNamingTheFieldAndTheBoundAndRoundTripsThroughTheCodec() {
    assertThatThrownBy(
            () -> QueueConfig.durable("q").dedupWindow(Duration.ofSeconds(-1)).build().validate())
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("dedupWindow")
        .hasMessageContaining("PT-1S")
        .hasMessageContaining("MAX_DEDUP_WINDOW (PT168H)");
    assertThatThrownBy(
            () ->
                QueueConfig.durable("q")
                    .dedupWindow(QueueConfig.MAX_DEDUP_WINDOW.plusSeconds(1))
                    .build()
                    .validate())
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("dedupWindow");
    QueueConfig on =
        QueueConfig.durable("q").dedupWindow(QueueConfig.MAX_DEDUP_WINDOW).build().validate();
    assertThat(QueueConfigCodec.fromJson(QueueConfigCodec.toJson(on))).isEqualTo(on);
    QueueConfig off = QueueConfig.durable("q").build();
    assertThat(off.dedupWindow()).isZero();
    assertThat(new String(QueueConfigCodec.toJson(off), UTF_8))
        .as("a queue without deduplication is stored as before")
        .doesNotContain("dedupWindow");
    assertThat(QueueConfigCodec.fromJson(QueueConfigCodec.toJson(off)).dedupWindow()).isZero();
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void hundredPublishersRetryingTheSameTenThousandIdsStoreExactlyTenThousandMessages(String kind)
      throws Exception {
    Storage s = store(kind);
    QueueManager m = manager(s, AckDurability.BUFFERED);
    m.createQueue(QueueConfig.durable("q").dedupWindow(WINDOW).maxDepth(1_000_000).build());
    int publishers = 100;
    int ids = 10_000;
    ExecutorService pool = Executors.newFixedThreadPool(publishers);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<long[]>> answers = new ArrayList<>();
      for (int p = 0; p < publishers; p++) {
        int self = p;
        answers.add(
            pool.submit(
                () -> {
                  long[] offsets = new long[ids];
                  go.await();
                  for (int k = 0; k < ids; k++) {
                    int i = (k * 7919 + self * 101) % ids; // every publisher its own order
                    offsets[i] = m.publishTo("q", withId("q", "p" + self, "id-" + i));
                  }
                  return offsets;
                }));
      }
      go.countDown();
      List<long[]> all = new ArrayList<>();
      for (Future<long[]> f : answers) {
        all.add(f.get(150, TimeUnit.SECONDS));
      }
      assertThat(s.queues().tail("q")).isEqualTo(ids);
      Map<String, Long> stored = new HashMap<>();
      for (Message msg : s.queues().readBatch("q", 0, ids + 1)) {
        assertThat(stored.put(msg.properties().get(MessageProperties.DEDUP_ID), msg.offset()))
            .isNull();
      }
      assertThat(stored).hasSize(ids);
      for (long[] offsets : all) {
        for (int i = 0; i < ids; i++) {
          assertThat(offsets[i])
              .as("offset answered for id-%d", i)
              .isEqualTo(stored.get("id-" + i));
        }
      }
      assertThat(m.metrics().duplicatesRefused()).isEqualTo((long) publishers * ids - ids);
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
  }
}
