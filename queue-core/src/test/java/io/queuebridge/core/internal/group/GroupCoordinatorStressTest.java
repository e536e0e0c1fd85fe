package io.queuebridge.core.internal.group;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.errors.MessageNotPendingException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.group.GroupMetrics;
import io.queuebridge.core.group.GroupSettings;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.ClaimsSwitch;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Competing consumers under contention: producers append while consumers of one queue-mode group
 * claim, ack, nack, reject and "crash" (abandon their claims, which others steal once the test
 * clock passes the visibility timeout). The run is bounded by the message count; the clock moves
 * only when a consumer finds nothing to claim.
 */
class GroupCoordinatorStressTest {
  private static final int PRODUCERS = 3;
  private static final int PER_PRODUCER = 1500;
  private static final int CONSUMERS = 4;
  private static final int TOTAL = PRODUCERS * PER_PRODUCER;
  private static final String QUEUE = "work";
  private static final String GROUP = "g";

  /** {@code concurrent}: on the engine's concurrent path ({@link ConcurrentClaimsTest}). */
  @ParameterizedTest(name = "concurrent claims: {0}")
  @ValueSource(booleans = {false, true})
  void everyMessageIsAckedExactlyOnceOrDeadLetteredUnderCompetingConsumersAndCrashes(
      boolean concurrent) throws Exception {
    MutableClock clock = new MutableClock(Instant.parse("2024-01-01T00:00:00Z"));
    try (Storage storage = QueueStores.memory()) {
      storage
          .queues()
          .createQueue(
              QueueConfig.durable(QUEUE)
                  .messageTtl(Duration.ZERO)
                  .deliveryTimeout(Duration.ofSeconds(30))
                  .retryPolicy(
                      new RetryPolicy(
                          10, Duration.ofSeconds(1), Duration.ofSeconds(8), 2.0, Duration.ZERO))
                  .build());
      GroupCoordinator groups =
          GroupCoordinator.builder(
                  storage.queues(), ClaimsSwitch.answering(storage.groups(), concurrent))
              .clock(clock)
              .settings(GroupSettings.DEFAULTS.withMaxDeliveryCount(5))
              .build();
      for (int c = 0; c < CONSUMERS; c++) {
        groups.join(QUEUE, "", GROUP, "c" + c, CursorOption.resume(GroupMode.QUEUE));
      }

      Set<Long> acked = ConcurrentHashMap.newKeySet();
      AtomicInteger duplicateAcks = new AtomicInteger();
      AtomicInteger staleSettlements = new AtomicInteger();
      AtomicInteger crashes = new AtomicInteger();
      AtomicInteger nacks = new AtomicInteger();
      AtomicBoolean producersDone = new AtomicBoolean();
      AtomicInteger producing = new AtomicInteger(PRODUCERS);
      List<Throwable> errors = new CopyOnWriteArrayList<>();
      CountDownLatch start = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();

      for (int p = 0; p < PRODUCERS; p++) {
        int id = p;
        threads.add(
            new Thread(
                () -> {
                  try {
                    start.await();
                    for (int i = 0; i < PER_PRODUCER; i++) {
                      storage
                          .queues()
                          .append(
                              QUEUE,
                              Message.builder()
                                  .topic("$queue/" + QUEUE)
                                  .value(("p" + id + "-" + i).getBytes(UTF_8))
                                  .createdAt(clock.instant())
                                  .build());
                    }
                  } catch (Throwable e) {
                    errors.add(e);
                  } finally {
                    if (producing.decrementAndGet() == 0) {
                      producersDone.set(true);
                    }
                  }
                },
                "producer-" + p));
      }
      for (int c = 0; c < CONSUMERS; c++) {
        String me = "c" + c;
        Random random = new Random(42 + c);
        threads.add(
            new Thread(
                () -> {
                  try {
                    start.await();
                    while (true) {
                      List<GroupDelivery> batch =
                          groups.claimBatch(QUEUE, GROUP, me, 1 + random.nextInt(10));
                      if (batch.isEmpty()) {
                        if (producersDone.get() && groups.lag(QUEUE, GROUP) == 0) {
                          return; // everything committed: done
                        }
                        clock.advance(Duration.ofSeconds(5));
                        continue;
                      }
                      for (GroupDelivery d : batch) {
                        int dice = random.nextInt(100);
                        if (dice < 5) {
                          crashes.incrementAndGet();
                          break; // abandon the rest of the batch: it is stolen later
                        }
                        try {
                          if (dice < 30) {
                            if (random.nextBoolean()) {
                              d.nack();
                            } else {
                              d.nack(Duration.ofSeconds(random.nextInt(4)));
                            }
                            nacks.incrementAndGet();
                          } else if (dice < 33) {
                            d.reject("stress");
                          } else {
                            d.ack();
                            if (!acked.add(d.offset())) {
                              duplicateAcks.incrementAndGet();
                            }
                          }
                        } catch (MessageNotPendingException stolen) {
                          staleSettlements.incrementAndGet(); // it was stolen meanwhile: fenced
                        }
                      }
                    }
                  } catch (Throwable e) {
                    errors.add(e);
                  }
                },
                "consumer-" + me));
      }
      threads.forEach(Thread::start);
      start.countDown();
      for (Thread t : threads) {
        t.join(60_000);
        assertThat(t.isAlive()).as("%s finished within a minute", t.getName()).isFalse();
      }
      assertThat(errors).isEmpty();

      // every offset is acked exactly once or dead-lettered exactly once, never both
      assertThat(duplicateAcks).hasValue(0);
      List<Long> deadOffsets = new ArrayList<>();
      int poisoned = 0;
      String dlq = groups.deadLetterQueue(storage.queues().getQueue(QUEUE));
      for (Message m : storage.queues().readBatch(dlq, 0, TOTAL + 1)) {
        deadOffsets.add(Long.parseLong(m.properties().get(MessageProperties.DLQ_ORIGINAL_OFFSET)));
        if (!m.properties().get(MessageProperties.DLQ_REASON).startsWith("rejected")) {
          poisoned++;
        }
      }
      Set<Long> dead = new HashSet<>(deadOffsets);
      assertThat(dead).as("no message dead-lettered twice").hasSameSizeAs(deadOffsets);
      assertThat(dead)
          .as("dead-lettered and acked are disjoint")
          .doesNotContainAnyElementsOf(acked);
      Set<Long> settled = new HashSet<>(acked);
      settled.addAll(dead);
      assertThat(settled)
          .as("none lost")
          .containsExactlyInAnyOrderElementsOf(LongStream.range(0, TOTAL).boxed().toList());

      ConsumerGroupState g = groups.group(QUEUE, GROUP).orElseThrow();
      assertThat(g.pending()).isEmpty();
      assertThat(g.cursor()).isEqualTo(TOTAL);
      assertThat(g.committed()).isEqualTo(TOTAL);

      GroupMetrics m = groups.metrics();
      System.out.printf(
          "acked=%d dead=%d poisoned=%d crashes=%d nacks=%d stale=%d metrics=%s%n",
          acked.size(),
          dead.size(),
          poisoned,
          crashes.get(),
          nacks.get(),
          staleSettlements.get(),
          m);
      assertThat(m.acks()).isEqualTo(acked.size());
      assertThat(m.dlqMoves()).isEqualTo(dead.size());
      assertThat(m.nacks()).isLessThanOrEqualTo(nacks.get());
      assertThat(m.pelSize()).isZero();
      // the run did exercise the paths it claims to
      assertThat(crashes.get()).isPositive();
      assertThat(m.stealSuccesses()).isPositive();
      assertThat(dead.size() - poisoned).as("rejected").isPositive();
      assertThat(poisoned).as("poison: retries or deliveries exhausted").isPositive();
    }
  }
}
