package io.queuebridge.core.internal.delivery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.ManualScheduler;
import io.queuebridge.core.MutableClock;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.delivery.DeliveryHandler;
import io.queuebridge.core.delivery.Subscription;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The engine's coalesced scheduling (BEHAVIOUR Q-DEL) without a manager. */
class DeliveryEngineTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final MutableClock clock = MutableClock.at("2026-05-01T08:00:00Z");
  private final ManualScheduler loops = new ManualScheduler(clock);
  private final Storage storage = QueueStores.memory();
  private final GroupCoordinator groups = GroupCoordinator.builder(storage).clock(clock).build();
  private DeliveryEngine engine;

  @AfterEach
  void tearDown() {
    if (engine != null) {
      engine.stop(WAIT);
    }
    storage.close();
  }

  private void queueWithOneMessage(String name) {
    storage.queues().createQueue(QueueConfig.durable(name).build());
    storage.queues().append(name, Message.builder().topic(name).value(new byte[] {1}).build());
  }

  private Subscription subscribe(String queue, DeliveryHandler handler) {
    return engine.register(
        queue,
        "g",
        "c1",
        () -> groups.join(queue, "", "g", "c1", CursorOption.resume(GroupMode.QUEUE)),
        handler,
        10);
  }

  @Test
  void aTriggerDroppedOnAFullQueueClearsItsFlagAndTheSweepCatchesUp() {
    engine = DeliveryEngine.builder(groups).clock(clock).triggerCapacity(1).build();
    Set<String> delivered = ConcurrentHashMap.newKeySet();
    for (String q : List.of("a", "b")) {
      queueWithOneMessage(q);
      subscribe(
          q,
          d -> {
            delivered.add(d.queue());
            d.ack();
          });
    }
    assertThat(engine.metrics().triggersDropped())
        .as("b's first trigger found the queue full (the dispatcher is not running yet)")
        .isEqualTo(1);

    engine.start(loops);
    // b's dedup flag was cleared with the drop, so a later schedule of b is not swallowed
    await()
        .atMost(WAIT)
        .until(
            () -> {
              loops.advance(Duration.ofSeconds(1));
              return delivered.size() == 2;
            });
    assertThat(delivered).containsExactlyInAnyOrder("a", "b");
    assertThat(engine.metrics().sweeps()).isPositive();
  }

  @Test
  void repeatedSchedulesOfAQueueCoalesceWhileItWaits() {
    engine = DeliveryEngine.builder(groups).clock(clock).triggerCapacity(1).build();
    queueWithOneMessage("a");
    subscribe("a", GroupDelivery::ack);
    for (int i = 0; i < 100; i++) {
      engine.schedule("a");
    }
    assertThat(engine.metrics().triggersDropped())
        .as("one trigger queued, the rest coalesced")
        .isZero();
  }

  @Test
  void schedulingAQueueWithoutSubscriptionsCostsNothing() {
    engine = DeliveryEngine.builder(groups).clock(clock).triggerCapacity(1).build();
    for (int i = 0; i < 10; i++) {
      engine.schedule("q" + i);
    }
    engine.schedule("");
    engine.schedule(null);
    assertThat(engine.metrics().triggersDropped()).isZero();
  }

  @Test
  void aSubscriptionNeverRunsTwoPassesAtOnce() throws Exception {
    engine = DeliveryEngine.builder(groups).clock(clock).workers(4).build();
    storage.queues().createQueue(QueueConfig.durable("q").build());
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    AtomicInteger handled = new AtomicInteger();
    subscribe(
        "q",
        d -> {
          maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
          Thread.yield();
          inside.decrementAndGet();
          handled.incrementAndGet();
          d.ack();
        });
    engine.start(loops);
    for (int i = 0; i < 500; i++) {
      storage.queues().append("q", Message.builder().topic("q").value(new byte[] {1}).build());
      engine.schedule("q");
    }
    await().atMost(WAIT).until(() -> handled.get() == 500);
    assertThat(maxInside).hasValue(1);
  }

  @Test
  void stopReturnsFalseWhileAHandlerRunsAndTrueOnceItReturned() throws Exception {
    engine = DeliveryEngine.builder(groups).clock(clock).build();
    queueWithOneMessage("q");
    CountDownLatch inHandler = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    subscribe(
        "q",
        d -> {
          inHandler.countDown();
          release.await();
          d.ack();
        });
    engine.start(loops);
    assertThat(inHandler.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(engine.stop(Duration.ofMillis(100))).isFalse();
    assertThat(engine.liveThreads()).isPositive();
    release.countDown();
    assertThat(engine.stop(WAIT)).isTrue();
    assertThat(loops.scheduled()).as("the sweep is cancelled").isEmpty();
    engine.schedule("q"); // ignored after stop
    assertThat(engine.metrics().triggersDropped()).isZero();
  }
}
