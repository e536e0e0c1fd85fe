package io.queuebridge.store.postgres;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Delayed delivery on the postgres store (BEHAVIOUR Q-DELAY), on an injected clock: a message
 * published with a delay through one storage is read early by a group member in another (two pools,
 * as two Connect workers would have), kept as a scheduled entry in {@code pending}, and claimed by
 * the other member at its due time and not before — from the {@code pending_due} index, earliest
 * due first. Skipped, visibly, without the PostgreSQL test server.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PostgresDelayTest {
  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();

  private static List<String> claim(GroupCoordinator g, String member, int n) {
    List<String> out = new ArrayList<>();
    for (GroupDelivery d : g.claimBatch("jobs", "g", member, n)) {
      out.add(new String(d.message().valueUnsafe(), UTF_8));
      d.ack();
    }
    return out;
  }

  @Test
  void aDelayedMessageReadByOneProcessIsClaimedByAnotherAtItsDueTimeAndNotBefore()
      throws Exception {
    MutableClock clock = MutableClock.at("2026-03-01T12:00:00Z");
    Map<String, String> config = database.config("delays");
    try (Storage one = QueueStores.open("postgres", config);
        Storage two = QueueStores.open("postgres", config)) {
      QueueManager publisher =
          new QueueManager(one, QueueManagerConfig.builder().clock(clock).build());
      try {
        publisher.createQueue(QueueConfig.durable("jobs").build());
        GroupCoordinator first = GroupCoordinator.builder(one).clock(clock).build();
        GroupCoordinator second = GroupCoordinator.builder(two).clock(clock).build();
        first.join("jobs", "", "g", "m1", CursorOption.resume(GroupMode.QUEUE));
        second.join("jobs", "", "g", "m2", CursorOption.resume(GroupMode.QUEUE));
        for (int seconds : new int[] {30, 2, 20}) {
          publisher.publishTo(
              "jobs",
              PublishRequest.builder("jobs")
                  .value(("in-" + seconds + "s").getBytes(UTF_8))
                  .delay(Duration.ofSeconds(seconds))
                  .build());
        }
        publisher.publishTo("jobs", PublishRequest.of("jobs", "now".getBytes(UTF_8)));

        assertThat(claim(first, "m1", 10)).containsExactly("now");
        assertThat(two.groups().getAllPending("jobs", "g"))
            .as("the other process sees the scheduled entries")
            .hasSize(3)
            .allSatisfy(e -> assertThat(e.isScheduled()).isTrue())
            .extracting(PendingEntry::visibleAt)
            .containsExactlyInAnyOrder(
                clock.instant().plusSeconds(30),
                clock.instant().plusSeconds(2),
                clock.instant().plusSeconds(20));
        clock.advance(Duration.ofSeconds(2).minusNanos(1000));
        assertThat(claim(second, "m2", 10)).isEmpty();
        clock.advance(Duration.ofNanos(1000));
        assertThat(claim(second, "m2", 10)).containsExactly("in-2s");
        clock.advance(Duration.ofSeconds(30));
        assertThat(claim(second, "m2", 1)).containsExactly("in-20s");
        assertThat(claim(first, "m1", 10)).containsExactly("in-30s");
        assertThat(one.groups().overview("jobs", "g").pending()).isZero();
        assertThat(one.groups().getGroup("jobs", "g").committed()).isEqualTo(4);
      } finally {
        publisher.stop();
      }
    }
  }
}
