package io.queuebridge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.config.AckDurability;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.internal.capture.CaptureDispatcher;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Topic capture through the manager (BEHAVIOUR Q-CAP, L-LIMITS, Q-METRICS, F-CAPTURE). */
class CaptureTest {
  private final RecordingStore store = new RecordingStore();
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private QueueManager manager;

  private QueueManager start(UnaryOperator<QueueManagerConfig.Builder> config) {
    manager = new QueueManager(store, config.apply(QueueManagerConfig.builder()).build());
    manager.start();
    return manager;
  }

  private QueueManager start() {
    return start(b -> b);
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    store.unblockAll();
    if (manager != null) {
      manager.stop();
    }
    executor.shutdownNow();
    assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    store.close();
  }

  private static PublishRequest request(String topic, String value) {
    return PublishRequest.of(topic, value.getBytes(StandardCharsets.UTF_8));
  }

  private static String value(Message m) {
    return new String(m.valueUnsafe(), StandardCharsets.UTF_8);
  }

  @Test
  void noMatchingQueueCapturesNothingAndCreatesNoQueue() {
    QueueManager m = start();
    m.createQueue(QueueConfig.durable("a").topics("orders/#").build());
    m.publishToMatchingQueues(request("sensors/1", "v"));
    m.stop();
    assertThat(store.calls("createQueue")).containsExactly("createQueue:a");
    assertThat(store.appends()).isEmpty();
    assertThat(m.metrics())
        .extracting(QueueManagerMetrics::captureFailures, QueueManagerMetrics::captureDropped)
        .containsExactly(0L, 0L);
  }

  @Test
  void captureWritesEveryMatchingQueueNormalisedLikePublish() {
    QueueManager m = start();
    m.createQueue(QueueConfig.durable("a").topics("orders/#").build());
    m.createQueue(QueueConfig.durable("b").topics("#").build());
    m.publishToMatchingQueues(
        PublishRequest.builder("orders/1")
            .value("v".getBytes(StandardCharsets.UTF_8))
            .property(MessageProperties.QUEUE, "forged")
            .property("user", "u")
            .clientId("c1")
            .build());
    m.stop();
    for (String q : List.of("a", "b")) {
      assertThat(store.messages(q))
          .singleElement()
          .satisfies(
              msg -> {
                assertThat(msg.topic()).isEqualTo("orders/1");
                assertThat(msg.properties())
                    .containsOnly(
                        Map.entry("user", "u"), Map.entry(MessageProperties.CLIENT_ID, "c1"));
              });
    }
    assertThat(m.metrics())
        .extracting(QueueManagerMetrics::captureFailures, QueueManagerMetrics::captureDropped)
        .containsExactly(0L, 0L);
  }

  @Test
  void captureTakesOwnershipOfPayloadAndPropertiesBeforeReturning() {
    QueueManager m = start();
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    byte[] value = "abc".getBytes(StandardCharsets.UTF_8);
    Map<String, String> props = new LinkedHashMap<>(Map.of("k", "v"));
    RecordingStore.Gate gate = store.blockAppends("a");
    m.publishToMatchingQueues(PublishRequest.builder("t").value(value).properties(props).build());
    value[0] = 'X'; // the caller reuses its buffers while the capture waits in its lane
    props.put("k", "changed");
    gate.open();
    m.stop();
    Message stored = store.messages("a").get(0);
    assertThat(value(stored)).isEqualTo("abc");
    assertThat(stored.properties()).containsExactly(Map.entry("k", "v"));
  }

  @Test
  void unreadableMatchedConfigCountsOneFailureAndTheOtherQueuesAreWritten() {
    QueueManager m = start();
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    m.createQueue(QueueConfig.durable("b").topics("t").build());
    store.failGetQueue("a", () -> new QueueStoreException("a", "unreadable", null));
    m.publishToMatchingQueues(request("t", "v"));
    m.stop();
    assertThat(m.metrics())
        .extracting(QueueManagerMetrics::captureFailures, QueueManagerMetrics::captureDropped)
        .containsExactly(1L, 0L);
    assertThat(store.messages("b")).hasSize(1);
  }

  @Test
  void resolutionErrorCountsOneFailureAndIsThrown() {
    QueueManager m = start();
    store.failFindMatching(() -> new IllegalStateException("index broken"));
    assertThatThrownBy(() -> m.publishToMatchingQueues(request("t", "v")))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("find queues matching topic t")
        .hasRootCauseMessage("index broken");
    assertThat(m.metrics())
        .extracting(QueueManagerMetrics::captureFailures, QueueManagerMetrics::captureDropped)
        .containsExactly(1L, 0L);
  }

  @Test
  void failedCaptureAppendCountsOneFailurePerLostQueue() {
    QueueManager m = start();
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    m.createQueue(QueueConfig.durable("b").topics("t").build());
    m.createQueue(QueueConfig.durable("c").topics("t").build());
    store.failAppends("a", () -> new QueueStoreException("a", "disk full", null));
    store.failAppends("c", () -> new IllegalStateException("bug"));
    m.publishToMatchingQueues(request("t", "v"));
    m.stop();
    assertThat(m.metrics())
        .extracting(QueueManagerMetrics::captureFailures, QueueManagerMetrics::captureDropped)
        .containsExactly(2L, 0L);
    assertThat(store.messages("b")).hasSize(1);
  }

  @Test
  void oversizedCaptureIsRefusedBeforeAppendAndCountedAsAFailure() {
    QueueManager m = start();
    m.createQueue(QueueConfig.durable("small").topics("t").maxMessageSize(2).build());
    m.createQueue(QueueConfig.durable("big").topics("t").build());
    m.publishToMatchingQueues(request("t", "abc"));
    m.stop();
    assertThat(store.appends()).containsExactly("append:big");
    assertThat(m.metrics())
        .extracting(QueueManagerMetrics::captureFailures, QueueManagerMetrics::captureDropped)
        .containsExactly(1L, 0L);
  }

  @Test
  void captureIntoAFullClassicQueueIsCountedAsDropped() throws Exception {
    QueueManager m = start();
    m.createQueue(QueueConfig.durable("full").topics("t").maxDepth(1).build());
    m.publish(request("t", "first"));
    m.publishToMatchingQueues(request("t", "second"));
    m.stop();
    assertThat(store.messages("full")).extracting(CaptureTest::value).containsExactly("first");
    assertThat(m.metrics())
        .extracting(QueueManagerMetrics::captureFailures, QueueManagerMetrics::captureDropped)
        .containsExactly(0L, 1L);
  }

  @Test
  void fsyncQueueIsCapturedWithABarrierOnASyncingStore() {
    store.durableSync(true);
    QueueManager m = start();
    m.createQueue(QueueConfig.durable("a").topics("t").ackDurability(AckDurability.FSYNC).build());
    m.publishToMatchingQueues(request("t", "v"));
    m.stop();
    assertThat(store.appends()).containsExactly("appendAndSync:a");
  }

  @Test
  void stalledStoreBlocksOnlyItsLaneAndNeverThePublisher() throws Exception {
    QueueManager m = start(b -> b.captureWorkers(2).captureQueueDepth(4));
    String slow = "slow";
    String fast = otherLaneThan(slow, 2);
    m.createQueue(QueueConfig.durable(slow).topics("slow/#").build());
    m.createQueue(QueueConfig.durable(fast).topics("fast/#").build());
    RecordingStore.Gate stuck = store.blockAppends(slow);

    m.publishToMatchingQueues(request("slow/x", "0"));
    await().atMost(Duration.ofSeconds(10)).until(() -> stuck.arrived.get() == 1);
    // The publisher is never held up by the stuck append: 99 more captures all return.
    CompletableFuture.runAsync(
            () -> {
              for (int i = 1; i < 100; i++) {
                m.publishToMatchingQueues(request("slow/x", Integer.toString(i)));
              }
            },
            executor)
        .get(10, TimeUnit.SECONDS);
    // ...and the other lane keeps writing meanwhile.
    for (int i = 0; i < 3; i++) {
      m.publishToMatchingQueues(request("fast/x", Integer.toString(i)));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> store.messages(fast).size() == 3);
    // One in flight, four in the lane, the newest 95 dropped.
    assertThat(m.metrics().captureDropped()).isEqualTo(95);

    stuck.open();
    m.stop();
    assertThat(store.messages(slow))
        .extracting(CaptureTest::value)
        .containsExactly("0", "1", "2", "3", "4"); // a gap-free prefix
    assertThat(m.metrics())
        .extracting(QueueManagerMetrics::captureFailures, QueueManagerMetrics::captureDropped)
        .containsExactly(0L, 95L);
  }

  @Test
  void capturesAcceptedBeforeStartAreWrittenOnceStarted() {
    manager = new QueueManager(store, QueueManagerConfig.defaults());
    manager.createQueue(QueueConfig.durable("a").topics("t").build());
    manager.publishToMatchingQueues(request("t", "early"));
    assertThat(store.appends()).isEmpty();
    manager.start();
    manager.stop();
    assertThat(store.messages("a")).extracting(CaptureTest::value).containsExactly("early");
  }

  @Test
  void everyCaptureIsWrittenFailedOrDroppedWhenPublishersRaceStop() throws Exception {
    QueueManager m = start(b -> b.captureWorkers(2).captureQueueDepth(16));
    List<String> queues = List.of("q0", "q1", "q2", "q3", "broken");
    for (String q : queues) {
      m.createQueue(QueueConfig.durable(q).topics("t/#").maxDepth(Long.MAX_VALUE).build());
    }
    store.failAppends("broken", () -> new QueueStoreException("broken", "io", null));
    int publishers = 3;
    AtomicLong published = new AtomicLong(); // captures handed over: one per matched queue
    AtomicLong refusedAfterStop = new AtomicLong();
    AtomicBoolean stopped = new AtomicBoolean();
    CountDownLatch running = new CountDownLatch(publishers);
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (int p = 0; p < publishers; p++) {
      futures.add(
          CompletableFuture.runAsync(
              () -> {
                running.countDown();
                while (true) {
                  try {
                    m.publishToMatchingQueues(request("t/x", "v"));
                    published.addAndGet(queues.size());
                  } catch (IllegalStateException e) {
                    assertThat(e).hasMessageContaining("stopped");
                    refusedAfterStop.incrementAndGet();
                    return;
                  }
                  if (stopped.get()) {
                    return; // at most one more capture after stop returned
                  }
                }
              },
              executor));
    }
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    await().atMost(Duration.ofSeconds(20)).until(() -> published.get() > 5_000);
    m.stop();
    stopped.set(true);
    long writtenAtStop = written(queues);
    CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

    QueueManagerMetrics metrics = m.metrics();
    assertThat(written(queues)).as("nothing written after stop returned").isEqualTo(writtenAtStop);
    assertThat(written(queues) + metrics.captureFailures() + metrics.captureDropped())
        .as("written + failed + dropped == published")
        .isEqualTo(published.get());
    assertThat(metrics.captureFailures()).isPositive();
    assertThat(m.captureDispatcher().enqueue("q0", () -> {})).isFalse();
    assertThatThrownBy(() -> m.publishToMatchingQueues(request("t/x", "v")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("stopped");
  }

  private long written(List<String> queues) {
    long n = 0;
    for (String q : queues) {
      n += store.delegate().count(q);
    }
    return n;
  }

  private static String otherLaneThan(String queue, int lanes) {
    int lane = CaptureDispatcher.lane(queue, lanes);
    for (int i = 0; ; i++) {
      String candidate = "fast-" + i;
      if (CaptureDispatcher.lane(candidate, lanes) != lane) {
        return candidate;
      }
    }
  }
}
