package io.queuebridge.core.delivery;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.ManualScheduler;
import io.queuebridge.core.MutableClock;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.errors.ConsumerNotFoundException;
import io.queuebridge.core.errors.DeliveryStillRunningException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The push delivery engine through {@link QueueManager#consume} (BEHAVIOUR Q-DEL, Q-RETRY,
 * Q-SETTLE). Time and the sweep move only when a test advances the manual scheduler.
 */
class PushDeliveryTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final RetryPolicy FIVE_SECONDS =
      new RetryPolicy(10, Duration.ofSeconds(5), Duration.ofSeconds(5), 1.0, Duration.ZERO);

  private final MutableClock clock = MutableClock.at("2026-05-01T08:00:00Z");
  private final ManualScheduler loops = new ManualScheduler(clock);
  private final Storage storage = QueueStores.memory();
  private final List<CountDownLatch> gates = new CopyOnWriteArrayList<>();
  private QueueManager manager;

  private QueueManager start(UnaryOperator<QueueManagerConfig.Builder> config) {
    manager =
        new QueueManager(
            storage,
            config.apply(QueueManagerConfig.builder().clock(clock).scheduler(loops)).build());
    manager.start();
    return manager;
  }

  private QueueManager start() {
    return start(b -> b);
  }

  @AfterEach
  void tearDown() {
    gates.forEach(CountDownLatch::countDown);
    if (manager != null) {
      await().atMost(WAIT).ignoreExceptions().until(() -> stopped(manager));
    }
    storage.close();
  }

  private static boolean stopped(QueueManager m) {
    m.stop();
    return m.shutdownComplete();
  }

  private void publish(String topic, int n) throws InterruptedException {
    for (int i = 0; i < n; i++) {
      manager.publish(PublishRequest.of(topic, ("m" + i).getBytes(UTF_8)));
    }
  }

  private static String text(GroupDelivery d) {
    return new String(d.message().value(), UTF_8);
  }

  private ConsumerGroupState group(String queue, String group) {
    return manager.consumerGroups().group(queue, group).orElseThrow();
  }

  @Test
  void appendedMessagesArePushedInOrderAndAckedCommitsThem() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    List<String> got = new CopyOnWriteArrayList<>();
    Subscription s =
        manager.consume(
            "q",
            "g",
            "c1",
            d -> {
              got.add(text(d));
              d.ack();
            },
            ConsumeOptions.defaults());
    publish("t", 5);
    await().atMost(WAIT).until(() -> group("q", "g").committed() == 5);
    assertThat(got).containsExactly("m0", "m1", "m2", "m3", "m4");
    assertThat(s.isActive()).isTrue();
    assertThat(s.group()).isEqualTo("g");
    assertThat(manager.metrics().delivery().delivered()).isEqualTo(5);
    assertThat(manager.metrics().groups().acks()).isEqualTo(5);
  }

  @Test
  void aPausedGroupIsPushedNothingAndAResumeDeliversAtOnce() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    List<String> got = new CopyOnWriteArrayList<>();
    manager.consume(
        "q",
        "g",
        "c1",
        d -> {
          got.add(text(d));
          d.ack();
        },
        ConsumeOptions.defaults());
    assertThat(manager.consumerGroups().pause("q", "g")).isTrue();
    publish("t", 3);
    await().atMost(WAIT).until(() -> manager.metrics().delivery().passes() >= 1);
    await("nothing pushed while paused")
        .during(Duration.ofMillis(300))
        .atMost(WAIT)
        .until(got::isEmpty);
    assertThat(manager.consumerGroups().resume("q", "g")).isTrue();
    // no sweep runs (the scheduler only moves by hand): the resume itself wakes the subscription
    await().atMost(WAIT).until(() -> got.size() == 3);
    assertThat(got).containsExactly("m0", "m1", "m2");
  }

  @Test
  void aSubscriptionMadeBeforeStartReceivesOnceTheManagerStarts() throws Exception {
    manager =
        new QueueManager(
            storage, QueueManagerConfig.builder().clock(clock).scheduler(loops).build());
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    List<String> got = new CopyOnWriteArrayList<>();
    manager.consume(
        "q",
        "g",
        "c1",
        d -> {
          got.add(text(d));
          d.ack();
        },
        ConsumeOptions.defaults());
    publish("t", 2);
    assertThat(manager.metrics().delivery().passes()).isZero();
    manager.start();
    await().atMost(WAIT).until(() -> got.size() == 2);
  }

  @Test
  void competingSubscriptionsOfOneGroupGetEachMessageOnce() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    Map<Long, AtomicInteger> seen = new ConcurrentHashMap<>();
    Map<String, AtomicInteger> perConsumer = new ConcurrentHashMap<>();
    for (int c = 0; c < 3; c++) {
      manager.consume(
          "q",
          "g",
          "c" + c,
          d -> {
            seen.computeIfAbsent(d.offset(), k -> new AtomicInteger()).incrementAndGet();
            perConsumer.computeIfAbsent(d.consumerId(), k -> new AtomicInteger()).incrementAndGet();
            d.ack();
          },
          ConsumeOptions.defaults().withBatchSize(5));
    }
    publish("t", 300);
    await().atMost(WAIT).until(() -> group("q", "g").committed() == 300);
    assertThat(seen).hasSize(300);
    assertThat(seen.values()).allMatch(n -> n.get() == 1);
  }

  @Test
  void aThrowingHandlerIsNackedAndTheSweepRedeliversAfterTheRetryBackoff() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").retryPolicy(FIVE_SECONDS).build());
    BlockingQueue<Integer> attempts = new LinkedBlockingQueue<>();
    manager.consume(
        "q",
        "g",
        "c1",
        d -> {
          attempts.add(d.deliveryCount());
          if (d.deliveryCount() == 1) {
            throw new IllegalStateException("first attempt fails");
          }
          d.ack();
        },
        ConsumeOptions.defaults());
    publish("t", 1);
    assertThat(attempts.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(1);
    await().atMost(WAIT).until(() -> manager.metrics().groups().nacks() == 1);

    loops.advance(Duration.ofSeconds(4));
    assertThat(attempts.poll(200, TimeUnit.MILLISECONDS)).as("still backing off").isNull();
    loops.advance(Duration.ofSeconds(1));
    assertThat(attempts.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(2);
    await().atMost(WAIT).until(() -> group("q", "g").committed() == 1);
    assertThat(manager.metrics().delivery().handlerFailures()).isEqualTo(1);
  }

  @Test
  void aDelayedMessageIsPushedAtItsDueTimeAndNotBefore() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    BlockingQueue<String> got = new LinkedBlockingQueue<>();
    manager.consume(
        "q",
        "g",
        "c1",
        d -> {
          got.add(text(d));
          d.ack();
        },
        ConsumeOptions.defaults());
    manager.publish(
        PublishRequest.builder("t")
            .value("later".getBytes(UTF_8))
            .delay(Duration.ofSeconds(3))
            .build());
    publish("t", 1);
    assertThat(got.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("m0");
    await().atMost(WAIT).until(() -> manager.metrics().groups().scheduled() == 1);
    loops.advance(Duration.ofSeconds(2));
    assertThat(got.poll(200, TimeUnit.MILLISECONDS)).as("not due yet").isNull();
    loops.advance(Duration.ofSeconds(1));
    assertThat(got.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("later");
    await().atMost(WAIT).until(() -> group("q", "g").committed() == 2);
  }

  @Test
  void aNackedMessageIsRedeliveredWhenItsDelayEndsNotAtTheNextSweep() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    BlockingQueue<Integer> attempts = new LinkedBlockingQueue<>();
    manager.consume(
        "q",
        "g",
        "c1",
        d -> {
          attempts.add(d.deliveryCount());
          if (d.deliveryCount() == 1) {
            d.nack(Duration.ofMillis(1500));
          } else {
            d.ack();
          }
        },
        ConsumeOptions.defaults());
    publish("t", 1);
    assertThat(attempts.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(1);
    await().atMost(WAIT).until(() -> manager.metrics().groups().nacks() == 1);

    loops.advance(Duration.ofMillis(1400)); // the sweep at +1 s finds it still backing off
    assertThat(attempts.poll(200, TimeUnit.MILLISECONDS)).as("still backing off").isNull();
    loops.advance(Duration.ofMillis(100)); // +1.5 s: the redelivery timer, half a sweep early
    assertThat(attempts.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(2);
    await().atMost(WAIT).until(() -> group("q", "g").committed() == 1);
  }

  @Test
  void anExpiredClaimIsRedeliveredToAnotherMemberWhenItsVisibilityTimeoutEnds() throws Exception {
    start();
    manager.createQueue(
        QueueConfig.durable("q").topics("t").deliveryTimeout(Duration.ofMillis(2500)).build());
    CountDownLatch stuck = new CountDownLatch(1);
    gates.add(stuck);
    BlockingQueue<String> first = new LinkedBlockingQueue<>();
    BlockingQueue<String> second = new LinkedBlockingQueue<>();
    DeliveryHandler handler =
        d -> {
          if (d.deliveryCount() == 1) {
            first.add(d.consumerId());
            stuck.await(); // holds the claim past its visibility timeout
          } else {
            second.add(d.consumerId());
            d.ack();
          }
        };
    manager.consume("q", "g", "c1", handler, ConsumeOptions.defaults());
    manager.consume("q", "g", "c2", handler, ConsumeOptions.defaults());
    publish("t", 1);
    String holder = first.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(holder).isNotNull();

    loops.advance(Duration.ofMillis(2400)); // sweeps at +1 s and +2 s: still invisible
    assertThat(second.poll(200, TimeUnit.MILLISECONDS)).as("still claimed").isNull();
    loops.advance(Duration.ofMillis(100)); // +2.5 s: the visibility timer, before the +3 s sweep
    String other = second.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
    assertThat(other).isNotNull().isNotEqualTo(holder);
    await().atMost(WAIT).until(() -> group("q", "g").committed() == 1);
  }

  @Test
  void aHandlerReturningWithoutSettlingIsNackedToo() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").retryPolicy(FIVE_SECONDS).build());
    BlockingQueue<Integer> attempts = new LinkedBlockingQueue<>();
    manager.consume(
        "q",
        "g",
        "c1",
        d -> {
          attempts.add(d.deliveryCount());
          if (d.deliveryCount() > 1) {
            d.ack();
          }
        },
        ConsumeOptions.defaults());
    publish("t", 1);
    assertThat(attempts.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(1);
    await().atMost(WAIT).until(() -> manager.metrics().delivery().unsettled() == 1);
    loops.advance(Duration.ofSeconds(5));
    assertThat(attempts.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(2);
    await().atMost(WAIT).until(() -> group("q", "g").committed() == 1);
    assertThat(manager.metrics().groups().nacks()).isEqualTo(1);
  }

  @Test
  void aStreamCursorIsCommittedOnlyPastTheDeliveredPrefix() throws Exception {
    start(b -> b.autoCommitInterval(Duration.ZERO));
    manager.createQueue(QueueConfig.durable("s").type(QueueType.STREAM).topics("t").build());
    publish("t", 5);
    List<Long> handled = new CopyOnWriteArrayList<>();
    AtomicInteger failuresLeft = new AtomicInteger(1);
    Subscription s =
        manager.consume(
            "s",
            "readers",
            "r1",
            d -> {
              handled.add(d.offset());
              if (d.offset() == 2 && failuresLeft.getAndDecrement() > 0) {
                throw new IllegalStateException("offset 2 fails once");
              }
              d.ack();
            },
            ConsumeOptions.defaults().withCursor(CursorOption.earliest(GroupMode.STREAM)));
    assertThat(s.mode()).isEqualTo(GroupMode.STREAM);
    await().atMost(WAIT).until(() -> handled.size() == 3);
    await().atMost(WAIT).until(() -> manager.metrics().delivery().handlerFailures() == 1);
    assertThat(group("s", "readers").cursor())
        .as("up to, not past, the failed message")
        .isEqualTo(2);

    loops.advance(Duration.ofSeconds(1)); // the sweep offers it again
    await().atMost(WAIT).until(() -> group("s", "readers").cursor() == 5);
    assertThat(handled).containsExactly(0L, 1L, 2L, 2L, 3L, 4L);
    assertThat(group("s", "readers").committed()).isEqualTo(5);
  }

  @Test
  void aStreamHandlerReturningUnsettledCountsAsDelivered() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("s").type(QueueType.STREAM).topics("t").build());
    publish("t", 3);
    List<Long> handled = new CopyOnWriteArrayList<>();
    manager.consume(
        "s",
        "readers",
        "r1",
        d -> handled.add(d.offset()),
        ConsumeOptions.defaults().withCursor(CursorOption.earliest(GroupMode.STREAM)));
    await().atMost(WAIT).until(() -> group("s", "readers").cursor() == 3);
    assertThat(handled).containsExactly(0L, 1L, 2L);
    assertThat(manager.metrics().delivery().unsettled()).isEqualTo(3);
  }

  @Test
  void theGroupFilterDecidesWhatIsPushed() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("orders").topics("$queue/orders/#").build());
    List<String> topics = new CopyOnWriteArrayList<>();
    manager.consume(
        "orders",
        "eu",
        "c1",
        d -> {
          topics.add(d.message().topic());
          d.ack();
        },
        ConsumeOptions.defaults().withPattern("eu/#"));
    manager.publish(PublishRequest.of("$queue/orders/us/1", new byte[] {1}));
    manager.publish(PublishRequest.of("$queue/orders/eu/1", new byte[] {2}));
    manager.publish(PublishRequest.of("$queue/orders/eu", new byte[] {3}));
    await().atMost(WAIT).until(() -> group("orders", "eu@eu/#").cursor() == 3);
    await().atMost(WAIT).until(() -> topics.size() == 2);
    assertThat(topics).containsExactly("$queue/orders/eu/1", "$queue/orders/eu");
  }

  @Test
  void closingOneSubscriptionLeavesTheGroupAndTheOthersGetEverything() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    List<String> first = new CopyOnWriteArrayList<>();
    List<String> second = new CopyOnWriteArrayList<>();
    Subscription a =
        manager.consume(
            "q",
            "g",
            "a",
            d -> {
              first.add(text(d));
              d.ack();
            },
            ConsumeOptions.defaults());
    manager.consume(
        "q",
        "g",
        "b",
        d -> {
          second.add(text(d));
          d.ack();
        },
        ConsumeOptions.defaults());
    a.close();
    assertThat(a.isActive()).isFalse();
    assertThat(a.endCause()).isEmpty();
    assertThat(group("q", "g").consumers()).containsOnlyKeys("b");
    a.close(); // idempotent

    publish("t", 20);
    await().atMost(WAIT).until(() -> group("q", "g").committed() == 20);
    assertThat(first).isEmpty();
    assertThat(second).hasSize(20);
  }

  @Test
  void closingFromTheHandlerReleasesTheRestOfTheClaimedBatch() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    publish("t", 10);
    List<Subscription> self = new CopyOnWriteArrayList<>();
    List<Long> firstHandled = new CopyOnWriteArrayList<>();
    CountDownLatch registered = new CountDownLatch(1);
    gates.add(registered);
    self.add(
        manager.consume(
            "q",
            "g",
            "a",
            d -> {
              registered.await();
              firstHandled.add(d.offset());
              d.ack();
              self.get(0).close();
            },
            ConsumeOptions.defaults().withBatchSize(10)));
    registered.countDown();
    await().atMost(WAIT).until(() -> manager.metrics().delivery().released() == 9);
    assertThat(firstHandled).containsExactly(0L);
    assertThat(self.get(0).isActive()).isFalse();
    await().atMost(WAIT).until(() -> !group("q", "g").consumers().containsKey("a"));

    List<Integer> counts = new CopyOnWriteArrayList<>();
    manager.consume(
        "q",
        "g",
        "b",
        d -> {
          counts.add(d.deliveryCount());
          d.ack();
        },
        ConsumeOptions.defaults());
    await().atMost(WAIT).until(() -> group("q", "g").committed() == 10);
    assertThat(counts).hasSize(9).allMatch(n -> n == 2);
  }

  @Test
  void unsubscribingThePushMemberEndsItsSubscription() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    Subscription s = manager.consume("q", "g", "c1", GroupDelivery::ack, ConsumeOptions.defaults());
    manager.unsubscribe("q", "", "c1", "g");
    loops.advance(Duration.ofSeconds(1));
    await().atMost(WAIT).until(() -> !s.isActive());
    assertThat(s.endCause()).containsInstanceOf(ConsumerNotFoundException.class);
    assertThat(manager.metrics().delivery().subscriptions()).isZero();
  }

  @Test
  void deletingTheQueueEndsItsSubscriptions() {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    Subscription s = manager.consume("q", "g", "c1", GroupDelivery::ack, ConsumeOptions.defaults());
    manager.deleteQueue("q");
    loops.advance(Duration.ofSeconds(1));
    await().atMost(WAIT).until(() -> !s.isActive());
    assertThat(s.endCause()).containsInstanceOf(QueueNotFoundException.class);
  }

  @Test
  void aMemberCanHoldOnlyOneLiveSubscriptionPerGroup() {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    Subscription s = manager.consume("q", "g", "c1", GroupDelivery::ack, ConsumeOptions.defaults());
    assertThatThrownBy(
            () -> manager.consume("q", "g", "c1", GroupDelivery::ack, ConsumeOptions.defaults()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'c1'")
        .hasMessageContaining("already has a live subscription");
    assertThat(s.isActive()).as("the refused one did not disturb the live one").isTrue();
    assertThat(group("q", "g").consumers()).containsOnlyKeys("c1");
    s.close();
    manager.consume("q", "g", "c1", GroupDelivery::ack, ConsumeOptions.defaults()).close();
  }

  @Test
  void consumeExistingRefusesAMissingQueue() {
    start();
    assertThatThrownBy(
            () ->
                manager.consume(
                    "nope",
                    "g",
                    "c1",
                    GroupDelivery::ack,
                    ConsumeOptions.defaults().withCreateQueue(false)))
        .isInstanceOf(QueueNotFoundException.class);
    assertThat(manager.metrics().delivery().subscriptions()).isZero();
    manager.consume("auto", "g", "c1", GroupDelivery::ack, ConsumeOptions.defaults());
    assertThat(manager.getQueue("auto").topics()).containsExactly("$queue/auto/#");
  }

  @Test
  void aMemberBusyInALongHandlerKeepsItsMembershipThroughTheSweepsHeartbeats() throws Exception {
    start(b -> b.consumerTimeout(Duration.ofMinutes(2)));
    manager.createQueue(
        QueueConfig.durable("q").topics("t").deliveryTimeout(Duration.ofHours(1)).build());
    CountDownLatch release = new CountDownLatch(1);
    gates.add(release);
    CountDownLatch inHandler = new CountDownLatch(1);
    Subscription s =
        manager.consume(
            "q",
            "g",
            "c1",
            d -> {
              inHandler.countDown();
              release.await();
              d.ack();
            },
            ConsumeOptions.defaults());
    publish("t", 1);
    assertThat(inHandler.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    loops.advance(Duration.ofMinutes(10)); // five cleanup runs
    assertThat(group("q", "g").consumers()).containsOnlyKeys("c1");
    release.countDown();
    await().atMost(WAIT).until(() -> group("q", "g").committed() == 1);
    assertThat(s.isActive()).isTrue();
  }

  @Test
  void anIdleSubscriptionOnAQueueWithAShortHeartbeatTimeoutStaysAMember() throws Exception {
    start(b -> b.consumerTimeout(Duration.ofMinutes(2)));
    manager.createQueue(
        QueueConfig.durable("q").topics("t").heartbeatTimeout(Duration.ofSeconds(2)).build());
    Subscription s = manager.consume("q", "g", "c1", GroupDelivery::ack, ConsumeOptions.defaults());
    loops.advance(Duration.ofSeconds(30)); // the sweep heartbeats every second, within 2 s
    assertThat(group("q", "g").consumers()).containsOnlyKeys("c1");
    assertThat(s.isActive()).isTrue();
    publish("t", 1);
    await().atMost(WAIT).until(() -> group("q", "g").committed() == 1);
  }

  @Test
  void aPassClaimsTheQueuesBatchSizeUnlessTheSubscriptionSetsOne() throws Exception {
    start();
    manager.createQueue(QueueConfig.durable("own").topics("own").batchSize(3).build());
    manager.createQueue(QueueConfig.durable("plain").topics("plain").build());
    publish("own", 10);
    publish("plain", 10);
    Map<String, List<Integer>> pendingAtFirst = new ConcurrentHashMap<>();
    for (String[] sub : new String[][] {{"own", "g"}, {"own", "explicit"}, {"plain", "g"}}) {
      String queue = sub[0];
      String g = sub[1];
      manager.consume(
          queue,
          g,
          "c1",
          d -> {
            // the claimed batch is pending until each of its messages is acked
            pendingAtFirst
                .computeIfAbsent(queue + "/" + g, k -> new CopyOnWriteArrayList<>())
                .add(group(queue, g).pending().size());
            d.ack();
          },
          g.equals("explicit")
              ? ConsumeOptions.defaults().withBatchSize(5)
              : ConsumeOptions.defaults());
    }
    await()
        .atMost(WAIT)
        .until(
            () ->
                group("own", "g").committed() == 10
                    && group("own", "explicit").committed() == 10
                    && group("plain", "g").committed() == 10);
    assertThat(pendingAtFirst.get("own/g")).as("batches of 3").startsWith(3, 2, 1, 3, 2, 1);
    assertThat(pendingAtFirst.get("own/explicit")).as("its own 5").startsWith(5, 4, 3, 2, 1, 5);
    assertThat(pendingAtFirst.get("plain/g"))
        .as("the manager's deliveryBatchSize (100): all ten at once")
        .startsWith(10, 9, 8);
  }

  @Test
  void stopEndsSubscriptionsWaitsForRunningHandlersAndNeverInterruptsThem() throws Exception {
    start(b -> b.deliveryDrainTimeout(Duration.ofMillis(200)));
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    publish("t", 5); // before subscribing: the first claim takes all five
    CountDownLatch release = new CountDownLatch(1);
    gates.add(release);
    CountDownLatch inHandler = new CountDownLatch(1);
    List<Boolean> interrupted = new CopyOnWriteArrayList<>();
    Subscription s =
        manager.consume(
            "q",
            "g",
            "c1",
            d -> {
              inHandler.countDown();
              while (true) {
                try {
                  release.await();
                  break;
                } catch (InterruptedException e) {
                  interrupted.add(true);
                }
              }
              d.ack();
            },
            ConsumeOptions.defaults().withBatchSize(5));
    assertThat(inHandler.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();

    assertThatThrownBy(manager::stop).isInstanceOf(DeliveryStillRunningException.class);
    assertThat(manager.shutdownComplete()).isFalse();
    assertThat(s.isActive()).isFalse();

    release.countDown();
    await().atMost(WAIT).until(() -> stopped(manager));
    assertThat(interrupted).isEmpty();
    assertThat(manager.metrics().delivery().released()).as("the rest of the batch").isEqualTo(4);
    ConsumerGroupState g =
        storage.groups().getGroup("q", "g"); // the manager is stopped; read the store
    assertThat(g.consumers()).as("left the group").isEmpty();
    assertThat(g.committed()).isEqualTo(1);
    assertThat(g.pending()).hasSize(4);
  }

  @Test
  void stopAfterEverythingIsIdleCompletesAndLeavesTheGroups() {
    start();
    manager.createQueue(QueueConfig.durable("q").topics("t").build());
    List<Subscription> subs = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      subs.add(manager.consume("q", "g", "c" + i, GroupDelivery::ack, ConsumeOptions.defaults()));
    }
    manager.stop();
    assertThat(manager.shutdownComplete()).isTrue();
    assertThat(subs).noneMatch(Subscription::isActive);
    assertThat(storage.groups().getGroup("q", "g").consumers()).isEmpty();
    assertThatThrownBy(
            () -> manager.consume("q", "g", "c9", GroupDelivery::ack, ConsumeOptions.defaults()))
        .isInstanceOf(IllegalStateException.class);
  }
}
