package io.queuebridge.core.store.memory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.StoreClosedException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Memory-store specifics beyond the contract kit (BEHAVIOUR S-QUEUE, S-MEM). */
class MemoryStoreTest {
  private final Storage storage = QueueStores.memory();
  private final DurableQueueStore queues = storage.queues();
  private final ExecutorService executor = Executors.newCachedThreadPool();

  @AfterEach
  void tearDown() throws InterruptedException {
    storage.close();
    executor.shutdownNow();
    assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  // --- provider ---------------------------------------------------------------------------

  @Test
  void providerIsFoundByNameThroughServiceLoader() {
    assertThat(QueueStores.provider("memory")).isInstanceOf(MemoryStoreProvider.class);
    try (Storage opened = QueueStores.open("memory", Map.of())) {
      opened.queues().createQueue(QueueConfig.durable("q").build());
      assertThat(opened.queues().tail("q")).isZero();
    }
  }

  @Test
  void unknownStoreTypeErrorNamesTheTypeAndTheKnownOnes() {
    assertThatThrownBy(() -> QueueStores.provider("nosuchstore"))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("nosuchstore")
        .hasMessageContaining("memory");
  }

  @Test
  void unknownConfigKeyIsRejectedNamingIt() {
    MemoryStoreProvider provider = new MemoryStoreProvider();
    assertThatThrownBy(() -> provider.validate(Map.of("path", "/tmp/x")))
        .isInstanceOfSatisfying(
            InvalidConfigException.class, e -> assertThat(e.field()).isEqualTo("path"))
        .hasMessageContaining("path")
        .hasMessageContaining("/tmp/x");
    assertThatThrownBy(() -> provider.open(Map.of("path", "/tmp/x")))
        .isInstanceOf(InvalidConfigException.class);
    assertThatThrownBy(() -> provider.identity(Map.of("path", "/tmp/x")))
        .isInstanceOf(InvalidConfigException.class);
  }

  @Test
  void unsafeStoreNameIsRejected() {
    MemoryStoreProvider provider = new MemoryStoreProvider();
    for (String bad : List.of("", " x", "a/b", "-a", "x".repeat(65))) {
      assertThatThrownBy(() -> provider.validate(Map.of("name", bad)))
          .as("name %s", bad)
          .isInstanceOfSatisfying(
              InvalidConfigException.class, e -> assertThat(e.field()).isEqualTo("name"));
    }
    provider.validate(Map.of("name", "orders.v1_A-2"));
  }

  @Test
  void identityIsMemoryColonNameSoSameNamedConfigsShareAnInstance() {
    MemoryStoreProvider provider = new MemoryStoreProvider();
    assertThat(provider.identity(Map.of())).isEqualTo("memory:default");
    assertThat(provider.identity(Map.of("name", "default"))).isEqualTo("memory:default");
    assertThat(provider.identity(Map.of("name", "a"))).isEqualTo("memory:a");
    assertThat(provider.identity(Map.of("name", "b"))).isNotEqualTo(provider.identity(Map.of()));
    try (Storage s = provider.open(Map.of("name", "a"))) {
      assertThat(s.description()).isEqualTo("memory:a");
    }
  }

  @Test
  void everyOpenReturnsANewEmptyIndependentStore() {
    queues.createQueue(QueueConfig.durable("q").build());
    try (Storage other = QueueStores.memory()) {
      assertThat(other.queues().listQueues()).isEmpty();
      assertThat(other.queues()).isNotSameAs(queues);
    }
    assertThat(queues.listQueues()).hasSize(1);
  }

  // --- validation -------------------------------------------------------------------------

  @Test
  void createQueueAppliesTheFullValidation() {
    assertThatThrownBy(() -> queues.createQueue(QueueConfig.durable("q").maxDepth(0).build()))
        .isInstanceOfSatisfying(
            InvalidConfigException.class, e -> assertThat(e.field()).isEqualTo("maxDepth"));
    assertThatThrownBy(
            () -> queues.createQueue(QueueConfig.reservedStream("r").durable(false).build()))
        .isInstanceOf(InvalidConfigException.class);
    assertThatThrownBy(
            () ->
                queues.createQueue(QueueConfig.ephemeral("e").expiresAfter(Duration.ZERO).build()))
        .isInstanceOfSatisfying(
            InvalidConfigException.class, e -> assertThat(e.field()).isEqualTo("expiresAfter"));
    assertThat(queues.listQueues()).isEmpty();
  }

  @Test
  void updateQueueValidatesOnlyTopicFiltersSoADriftedConfigCanBeStored() {
    queues.createQueue(QueueConfig.durable("q").build());
    QueueConfig drifted = QueueConfig.durable("q").maxDepth(0).batchSize(-1).build();
    queues.updateQueue(drifted);
    assertThat(queues.getQueue("q")).isEqualTo(drifted);
  }

  @Test
  void supportsDurableSyncIsFalse() {
    assertThat(queues.supportsDurableSync()).isFalse();
  }

  // --- exact capabilities -----------------------------------------------------------------

  @Test
  void sizeOffsetKeepsTheLongestRunOfNewestMessagesWhoseEstimateFits() {
    queues.createQueue(QueueConfig.durable("q").build());
    // estimate = 200 + topic(1) + id(0) + value
    for (int size : new int[] {100, 50, 10, 39}) {
      queues.append("q", Message.builder().topic("t").value(new byte[size]).build());
    }
    long e3 = 200 + 1 + 39;
    long e2 = 200 + 1 + 10;
    long e1 = 200 + 1 + 50;
    assertThat(queues.sizeOffset("q", e3 - 1)).hasValue(4);
    assertThat(queues.sizeOffset("q", e3)).hasValue(3);
    assertThat(queues.sizeOffset("q", e3 + e2)).hasValue(2);
    assertThat(queues.sizeOffset("q", e3 + e2 + e1 - 1)).hasValue(2);
    assertThat(queues.sizeOffset("q", e3 + e2 + e1)).hasValue(1);
    assertThat(queues.sizeOffset("q", Long.MAX_VALUE)).hasValue(0);
    queues.truncate("q", 2);
    assertThat(queues.sizeOffset("q", Long.MAX_VALUE)).hasValue(2);
    assertThat(queues.sizeOffset("q", e3)).hasValue(3);
  }

  @Test
  void sizeEstimateCountsValueKeyTopicIdHeadersPropertiesAndOverhead() {
    Message m =
        Message.builder()
            .id("id7")
            .topic("orders")
            .key(new byte[3])
            .value(new byte[10])
            .header("h", new byte[4])
            .header("hh", (byte[]) null)
            .property("p", "vv")
            .build();
    assertThat(MemoryLog.estimate(m)).isEqualTo(200 + 3 + 6 + 3 + 10 + (1 + 4) + (2 + 0) + (1 + 2));
  }

  @Test
  void timeOffsetIsTheFirstMessageCreatedAtOrAfterSkippingMessagesWithoutCreatedAt() {
    queues.createQueue(QueueConfig.durable("q").build());
    Instant t0 = Instant.parse("2024-01-01T00:00:00Z");
    assertThat(queues.timeOffset("q", t0)).hasValue(0);
    queues.append("q", Message.builder().createdAt(t0).build());
    queues.append("q", Message.builder().build());
    queues.append("q", Message.builder().createdAt(t0.plusSeconds(20)).build());
    queues.append("q", Message.builder().createdAt(t0.plusSeconds(10)).build());
    assertThat(queues.timeOffset("q", t0.minusSeconds(1))).hasValue(0);
    assertThat(queues.timeOffset("q", t0)).hasValue(0);
    assertThat(queues.timeOffset("q", t0.plusNanos(1))).hasValue(2);
    assertThat(queues.timeOffset("q", t0.plusSeconds(15))).hasValue(2);
    assertThat(queues.timeOffset("q", t0.plusSeconds(21))).hasValue(4);
    queues.truncate("q", 3);
    assertThat(queues.timeOffset("q", t0)).hasValue(3);
  }

  // --- groups ---------------------------------------------------------------------------

  @Test
  void groupConveniencesAreAtomicPerGroupSoRacingCallersLoseNoUpdate() throws Exception {
    queues.createQueue(QueueConfig.durable("q").build());
    ConsumerGroupStore groups = storage.groups();
    Instant t0 = Instant.parse("2024-01-01T00:00:00Z");
    groups.createGroup(ConsumerGroupState.create("q", "g", "", GroupMode.QUEUE, true, t0));
    int threads = 4;
    int perThread = 250;
    CountDownLatch start = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int thread = t;
      done.add(
          executor.submit(
              () -> {
                start.await();
                String consumer = "c" + thread;
                groups.registerConsumer("q", "g", new ConsumerInfo(consumer, consumer, t0, t0));
                for (int i = 0; i < perThread; i++) {
                  long offset = (long) thread * perThread + i;
                  groups.addPending(
                      "q", "g", new PendingEntry(offset, consumer, t0, 1, t0, t0.plusSeconds(30)));
                  if (i % 5 == 0) {
                    groups.removePending("q", "g", consumer, offset);
                  }
                }
                return null;
              }));
    }
    start.countDown();
    for (Future<?> f : done) {
      f.get(1, TimeUnit.MINUTES);
    }
    ConsumerGroupState g = groups.getGroup("q", "g");
    assertThat(g.consumers()).hasSize(threads);
    assertThat(g.pending()).hasSize(threads * (perThread - perThread / 5));
    for (int t = 0; t < threads; t++) {
      assertThat(g.pendingOf("c" + t)).hasSize(perThread - perThread / 5);
    }
  }

  // --- waiters ----------------------------------------------------------------------------

  @Test
  void closingTheStoreWakesWaitersWithStoreClosed() {
    queues.createQueue(QueueConfig.durable("q").build());
    CompletableFuture<Boolean> waiter =
        CompletableFuture.supplyAsync(() -> await("q", 0, Duration.ofMinutes(5)), executor);
    Awaitility.await().until(() -> waiting(), Boolean.TRUE::equals);
    storage.close();
    assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(StoreClosedException.class);
  }

  @Test
  void deletingTheQueueWakesWaitersWithQueueNotFound() {
    queues.createQueue(QueueConfig.durable("q").build());
    CompletableFuture<Boolean> waiter =
        CompletableFuture.supplyAsync(() -> await("q", 0, Duration.ofMinutes(5)), executor);
    Awaitility.await().until(() -> waiting(), Boolean.TRUE::equals);
    queues.deleteQueue("q");
    assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(QueueNotFoundException.class);
  }

  // --- the ring buffer against a model ----------------------------------------------------

  @Test
  void ringBufferMatchesASimpleListModelUnderRandomAppendsAndTruncations() {
    MemoryLog log = new MemoryLog("q");
    List<Message> model = new ArrayList<>();
    long head = 0;
    Random random = new Random(42);
    Instant t0 = Instant.parse("2024-01-01T00:00:00Z");
    // the ring keeps room for the largest backlog of the current and the previous truncation
    // interval, and no more than 4 times that
    int peakBefore = 0;
    int peakSince = 0;
    for (int step = 0; step < 3000; step++) {
      int op = random.nextInt(10);
      if (op < 6) {
        int n = 1 + random.nextInt(op == 0 ? 200 : 3);
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          long offset = head + model.size() + i;
          batch.add(
              Message.builder()
                  .value(("m" + offset).getBytes(StandardCharsets.UTF_8))
                  .createdAt(random.nextInt(5) == 0 ? null : t0.plusSeconds(offset))
                  .build());
        }
        long first = n == 1 ? log.append(batch.get(0)) : log.append(batch, Map.of());
        assertThat(first).isEqualTo(head + model.size());
        for (int i = 0; i < n; i++) {
          model.add(batch.get(i).withOffset(first + i));
        }
        peakSince = Math.max(peakSince, model.size());
      } else if (op < 9) {
        long to = head + (model.isEmpty() ? 0 : random.nextInt(model.size() + 2));
        log.truncate(to);
        int removed = (int) Math.max(0, Math.min(to, head + model.size()) - head);
        model.subList(0, removed).clear();
        head += removed;
        if (removed > 0) {
          peakBefore = peakSince;
          peakSince = model.size();
        }
      } else {
        long budget = random.nextInt(3000);
        assertThat(log.sizeOffset(budget)).isEqualTo(modelSizeOffset(model, head, budget));
        Instant at = t0.plusSeconds(head + random.nextInt(model.size() + 3));
        assertThat(log.timeOffset(at)).isEqualTo(modelTimeOffset(model, head, at));
      }
      assertThat(log.head()).isEqualTo(head);
      assertThat(log.tail()).isEqualTo(head + model.size());
      assertThat(log.readBatch(0, Integer.MAX_VALUE)).isEqualTo(model);
      assertThat(log.capacity())
          .isLessThanOrEqualTo(Math.max(16, 4 * Math.max(peakBefore, peakSince)));
    }
  }

  @Test
  void ringKeepsRoomForARecurringBacklogAndShrinksOnceTheBacklogIsGone() {
    MemoryLog log = new MemoryLog("q");
    Message m = Message.builder().value(new byte[] {1}).build();
    for (int i = 0; i < 1000; i++) {
      log.append(m);
    }
    assertThat(log.capacity()).isEqualTo(1024);
    log.truncate(log.tail()); // drained: the backlog of 1000 may come back
    assertThat(log.capacity()).isEqualTo(1024);
    for (int i = 0; i < 1000; i++) {
      log.append(m);
    }
    log.truncate(log.tail());
    assertThat(log.capacity()).as("a recurring backlog keeps its ring").isEqualTo(1024);
    log.append(m);
    log.truncate(log.tail()); // the largest backlog since the previous truncation was 1
    assertThat(log.capacity()).as("the backlog is gone: the ring shrinks").isEqualTo(16);
  }

  private static long modelSizeOffset(List<Message> model, long head, long budget) {
    long sum = 0;
    for (int i = model.size() - 1; i >= 0; i--) {
      sum += MemoryLog.estimate(model.get(i));
      if (sum > budget) {
        return head + i + 1;
      }
    }
    return head;
  }

  private static long modelTimeOffset(List<Message> model, long head, Instant at) {
    for (int i = 0; i < model.size(); i++) {
      Instant c = model.get(i).createdAt();
      if (c != null && !c.isBefore(at)) {
        return head + i;
      }
    }
    return head + model.size();
  }

  private boolean await(String queue, long offset, Duration timeout) {
    try {
      return queues.awaitAppend(queue, offset, timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CompletionException(e);
    }
  }

  private boolean waiting() {
    return ((MemoryQueueStore) queues).waiters("q") > 0;
  }
}
