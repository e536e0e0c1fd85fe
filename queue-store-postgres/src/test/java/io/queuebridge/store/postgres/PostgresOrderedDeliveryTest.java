package io.queuebridge.store.postgres;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.CompetingKeyConsumers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Per-key order on the postgres store across processes (BEHAVIOUR Q-ORDER): two storages (two
 * pools, as two Connect workers would have) compete for one ordered queue-mode group; a key's next
 * message is blocked in {@code pending} while one is out in either process, and released to either
 * when it is settled. Skipped, visibly, without the PostgreSQL test server.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PostgresOrderedDeliveryTest {
  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();

  private static PublishRequest keyed(String key, String value) {
    return PublishRequest.builder("jobs")
        .key(key.getBytes(UTF_8))
        .value(value.getBytes(UTF_8))
        .build();
  }

  private static String text(GroupDelivery d) {
    return new String(d.message().valueUnsafe(), UTF_8);
  }

  private static List<String> texts(List<GroupDelivery> ds) {
    return ds.stream().map(PostgresOrderedDeliveryTest::text).toList();
  }

  private static GroupDelivery find(List<GroupDelivery> ds, String value) {
    return ds.stream().filter(d -> text(d).equals(value)).findFirst().orElseThrow();
  }

  @Test
  void aKeysNextMessageGoesToEitherProcessOnlyOnceTheOneOutIsSettled() throws Exception {
    MutableClock clock = MutableClock.at("2026-03-01T12:00:00Z");
    Map<String, String> config = database.config("handoff");
    try (Storage one = QueueStores.open("postgres", config);
        Storage two = QueueStores.open("postgres", config)) {
      QueueManager publisher =
          new QueueManager(one, QueueManagerConfig.builder().clock(clock).build());
      try {
        publisher.createQueue(
            QueueConfig.durable("jobs").ordering(OrderingKey.MESSAGE_KEY).build());
        GroupCoordinator first = GroupCoordinator.builder(one).clock(clock).build();
        GroupCoordinator second = GroupCoordinator.builder(two).clock(clock).build();
        first.join("jobs", "", "g", "m1", CursorOption.resume(GroupMode.QUEUE));
        second.join("jobs", "", "g", "m2", CursorOption.resume(GroupMode.QUEUE));
        String[] sent = {"k1", "a1", "k1", "a2", "k2", "b1", "k1", "a3", "k2", "b2", "k3", "c1"};
        for (int i = 0; i < sent.length; i += 2) {
          publisher.publishTo("jobs", keyed(sent[i], sent[i + 1]));
        }

        // the stored form of the keys of a1 (offset 0) and b1 (offset 2)
        String k1 = OrderingKey.MESSAGE_KEY.keyOf(two.queues().read("jobs", 0));
        String k2 = OrderingKey.MESSAGE_KEY.keyOf(two.queues().read("jobs", 2));
        assertThat(k1).isNotEmpty().isNotEqualTo(k2);
        List<GroupDelivery> out = first.claimBatch("jobs", "g", "m1", 10);
        assertThat(texts(out)).containsExactly("a1", "b1", "c1");
        assertThat(two.groups().getAllPending("jobs", "g"))
            .as("the other process sees the blocked entries, with their keys")
            .filteredOn(PendingEntry::isBlocked)
            .extracting(PendingEntry::offset, PendingEntry::orderKey)
            .containsExactly(tuple(1L, k1), tuple(3L, k1), tuple(4L, k2));
        assertThat(second.claimBatch("jobs", "g", "m2", 10)).as("every key is out").isEmpty();

        find(out, "a1").ack();
        List<GroupDelivery> next = second.claimBatch("jobs", "g", "m2", 10);
        assertThat(texts(next)).as("k1's next, in the other process").containsExactly("a2");
        next.get(0).nack(Duration.ofSeconds(5));
        find(out, "b1").ack();
        assertThat(texts(first.claimBatch("jobs", "g", "m1", 10)))
            .as("k2 goes on; k1 waits for a2's retry")
            .containsExactly("b2");
        clock.advance(Duration.ofSeconds(5));
        List<GroupDelivery> retry = first.claimBatch("jobs", "g", "m1", 10);
        assertThat(texts(retry)).containsExactly("a2");
        assertThat(retry.get(0).deliveryCount()).isEqualTo(2);
        assertThat(second.claimBatch("jobs", "g", "m2", 10)).as("a3 after a2 only").isEmpty();
        retry.get(0).ack();
        assertThat(texts(second.claimBatch("jobs", "g", "m2", 10))).containsExactly("a3");
      } finally {
        publisher.stop();
      }
    }
  }

  /**
   * 4 consumers, two in each of two storages, compete for 1,000 messages over 50 keys, acking most
   * and nacking some: at no time do two consumers hold messages of one key, and every key's
   * messages are acknowledged in publish order.
   */
  @Test
  void fourConsumersInTwoProcessesAckEveryKeysMessagesInPublishOrder() throws Exception {
    int keys = 50;
    int messages = 1000;
    Map<String, String> config = database.config("competing");
    try (Storage one = QueueStores.open("postgres", config);
        Storage two = QueueStores.open("postgres", config)) {
      QueueManager publisher = new QueueManager(one, QueueManagerConfig.builder().build());
      try {
        publisher.createQueue(
            QueueConfig.durable("jobs")
                .ordering(OrderingKey.MESSAGE_KEY)
                .retryPolicy(
                    new RetryPolicy(1000, Duration.ZERO, Duration.ZERO, 1.0, Duration.ZERO))
                .build());
        Map<String, List<Integer>> published = new HashMap<>();
        Random random = new Random(11);
        for (int i = 0; i < messages; i++) {
          String key = "key-" + random.nextInt(keys);
          published.computeIfAbsent(key, k -> new ArrayList<>()).add(i);
          publisher.publishTo("jobs", keyed(key, Integer.toString(i)));
        }
        List<GroupCoordinator> coordinators =
            List.of(GroupCoordinator.builder(one).build(), GroupCoordinator.builder(two).build());
        List<Function<Integer, List<GroupDelivery>>> claimers = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
          String me = "c" + w;
          GroupCoordinator g = coordinators.get(w % 2);
          g.join("jobs", "", "g", me, CursorOption.resume(GroupMode.QUEUE));
          claimers.add(n -> g.claimBatch("jobs", "g", me, n));
        }
        CompetingKeyConsumers.drainAndCheck(claimers, published, Duration.ofMinutes(2));
        assertThat(one.groups().overview("jobs", "g").pending()).isZero();
      } finally {
        publisher.stop();
      }
    }
  }
}
