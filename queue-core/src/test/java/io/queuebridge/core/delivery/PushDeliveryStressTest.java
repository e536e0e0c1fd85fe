package io.queuebridge.core.delivery;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.ManualScheduler;
import io.queuebridge.core.MutableClock;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.errors.MessageNotPendingException;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.group.GroupMetrics;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * Competing push subscriptions under contention, through the manager's public API: producers
 * publish while four subscriptions of one queue-mode group ack, nack, reject, throw and return
 * unsettled at random; the test thread drives time (and with it the sweep, retries and poison
 * detection) one second at a time until everything is settled.
 */
class PushDeliveryStressTest {
  private static final int PRODUCERS = 3;
  private static final int PER_PRODUCER = 1000;
  private static final int CONSUMERS = 4;
  private static final int TOTAL = PRODUCERS * PER_PRODUCER;

  @Test
  void everyMessageIsAckedOnceOrDeadLetteredOnceUnderCompetingPushSubscriptions() throws Exception {
    MutableClock clock = MutableClock.at("2026-05-01T08:00:00Z");
    ManualScheduler loops = new ManualScheduler(clock);
    try (Storage storage = QueueStores.memory()) {
      QueueManager manager =
          new QueueManager(
              storage,
              QueueManagerConfig.builder()
                  .clock(clock)
                  .scheduler(loops)
                  .maxDeliveryCount(4)
                  .deliveryWorkers(3)
                  .build());
      manager.createQueue(
          QueueConfig.durable("work")
              .topics("work/#")
              .messageTtl(Duration.ZERO)
              .deliveryTimeout(Duration.ofSeconds(30))
              .retryPolicy(
                  new RetryPolicy(
                      10, Duration.ofSeconds(1), Duration.ofSeconds(2), 2.0, Duration.ZERO))
              .build());
      manager.start();

      Set<Long> acked = ConcurrentHashMap.newKeySet();
      AtomicInteger duplicateAcks = new AtomicInteger();
      AtomicInteger concurrentCalls = new AtomicInteger();
      AtomicInteger staleSettlements = new AtomicInteger();
      Set<String> inHandler = ConcurrentHashMap.newKeySet();
      List<Throwable> errors = new CopyOnWriteArrayList<>();
      for (int c = 0; c < CONSUMERS; c++) {
        manager.consume(
            "work",
            "g",
            "c" + c,
            d -> {
              if (!inHandler.add(d.consumerId())) {
                concurrentCalls.incrementAndGet();
              }
              try {
                int dice = ThreadLocalRandom.current().nextInt(100);
                if (dice < 8) {
                  throw new IllegalStateException("handler failure");
                } else if (dice < 15) {
                  return; // unsettled
                } else if (dice < 18) {
                  d.reject("stress");
                } else if (dice < 30) {
                  d.nack(Duration.ofSeconds(ThreadLocalRandom.current().nextInt(3)));
                } else {
                  d.ack();
                  if (!acked.add(d.offset())) {
                    duplicateAcks.incrementAndGet();
                  }
                }
              } catch (MessageNotPendingException stale) {
                // its visibility timeout passed while it waited in a batch: fenced, stolen by
                // another
                staleSettlements.incrementAndGet();
              } finally {
                inHandler.remove(d.consumerId());
              }
            },
            ConsumeOptions.defaults().withBatchSize(1 + c * 3));
      }

      List<Thread> producers = new ArrayList<>();
      for (int p = 0; p < PRODUCERS; p++) {
        int id = p;
        Thread t =
            new Thread(
                () -> {
                  try {
                    for (int i = 0; i < PER_PRODUCER; i++) {
                      manager.publish(
                          PublishRequest.of("work/p" + id, ("p" + id + "-" + i).getBytes(UTF_8)));
                    }
                  } catch (Throwable e) {
                    errors.add(e);
                  }
                },
                "producer-" + p);
        producers.add(t);
        t.start();
      }
      for (Thread t : producers) {
        t.join(60_000);
      }
      await()
          .atMost(Duration.ofMinutes(1))
          .until(
              () -> {
                loops.advance(Duration.ofSeconds(1));
                return manager.consumerGroups().lag("work", "g") == 0;
              });
      manager.stop();
      assertThat(manager.shutdownComplete()).isTrue();
      assertThat(errors).isEmpty();
      assertThat(concurrentCalls).as("one handler call at a time per subscription").hasValue(0);
      assertThat(duplicateAcks).hasValue(0);

      ConsumerGroups groups = manager.consumerGroups();
      String dlq = groups.deadLetterQueue(storage.queues().getQueue("work"));
      List<Long> deadOffsets = new ArrayList<>();
      int poisoned = 0;
      for (Message m : storage.queues().readBatch(dlq, 0, TOTAL + 1)) {
        deadOffsets.add(Long.parseLong(m.properties().get(MessageProperties.DLQ_ORIGINAL_OFFSET)));
        if (!m.properties().get(MessageProperties.DLQ_REASON).startsWith("rejected")) {
          poisoned++;
        }
      }
      Set<Long> dead = new HashSet<>(deadOffsets);
      assertThat(dead).as("no message dead-lettered twice").hasSameSizeAs(deadOffsets);
      assertThat(dead)
          .as("acked and dead-lettered are disjoint")
          .doesNotContainAnyElementsOf(acked);
      Set<Long> settled = new HashSet<>(acked);
      settled.addAll(dead);
      assertThat(settled)
          .as("none lost")
          .containsExactlyInAnyOrderElementsOf(LongStream.range(0, TOTAL).boxed().toList());

      ConsumerGroupState g = storage.groups().getGroup("work", "g");
      assertThat(g.pending()).isEmpty();
      assertThat(g.committed()).isEqualTo(TOTAL);
      assertThat(g.consumers()).as("every subscription left at stop").isEmpty();

      GroupMetrics m = manager.metrics().groups();
      System.out.printf(
          "acked=%d dead=%d poisoned=%d stale=%d groups=%s delivery=%s%n",
          acked.size(),
          dead.size(),
          poisoned,
          staleSettlements.get(),
          m,
          manager.metrics().delivery());
      DeliveryMetrics dm = manager.metrics().delivery();
      assertThat(m.acks()).isEqualTo(acked.size());
      assertThat(m.dlqMoves()).isEqualTo(dead.size());
      assertThat(m.pelSize()).isZero();
      assertThat(dm.handlerFailures()).isPositive();
      assertThat(dm.unsettled()).isPositive();
      assertThat(dead.size() - poisoned).as("rejected").isPositive();
      assertThat(poisoned).as("poison: max deliveries reached").isPositive();
    }
  }
}
