package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.connect.common.metrics.TaskMetrics;
import io.queuebridge.core.MutableClock;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.group.GroupSettings;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The classic-queue reader against the real group engine on a memory store, with a test clock for
 * claims and visibility (so nothing here waits for time to pass).
 */
class ClassicReaderTest {
  private static final Duration VISIBILITY = Duration.ofSeconds(10);
  private static final String QUEUE = "jobs";
  private static final String GROUP = "connect-c";

  private final MutableClock clock = new MutableClock(Instant.parse("2030-01-01T00:00:00Z"));
  private final List<ClassicReader.Pending> handedOver = new ArrayList<>();
  private Storage storage;
  private GroupCoordinator groups;
  private QueueManager manager;

  @BeforeEach
  void setUp() {
    storage = QueueStores.memory();
    manager = new QueueManager(storage, QueueManagerConfig.builder().clock(clock).build());
    groups =
        GroupCoordinator.builder(storage)
            .clock(clock)
            .settings(GroupSettings.DEFAULTS.withVisibilityTimeout(VISIBILITY))
            .build();
    manager.createQueue(QueueConfig.durable(QUEUE).build());
  }

  @AfterEach
  void tearDown() {
    storage.close();
  }

  private ClassicReader reader(int maxPending, int maxDeliveries) {
    Map<String, String> props = new HashMap<>();
    props.put("name", "c");
    props.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, QUEUE);
    props.put(QueueSourceConfig.TOPIC_CONFIG, "out");
    QueueSourceConfig config = new QueueSourceConfig(props);
    InFlight inFlight = new InFlight(maxPending, Long.MAX_VALUE);
    ReaderContext ctx =
        new ReaderContext(
            manager,
            storage.queues(),
            groups,
            GROUP,
            "c-0",
            new RecordFactory(TopicNamer.fixed("out"), false, ""),
            inFlight,
            new SourceMetrics(
                TaskMetrics.forTask(new FakeTaskContext(Map.of()), SourceTaskContext.class, "c", 0),
                () -> 0,
                inFlight::count,
                inFlight::bytes),
            maxDeliveries,
            false);
    return ClassicReader.open(ctx, QUEUE, null, config, (r, p) -> handedOver.add(p));
  }

  private void append(int n) {
    for (int i = 0; i < n; i++) {
      storage
          .queues()
          .append(
              QUEUE,
              Message.builder()
                  .value(("m" + i).getBytes(StandardCharsets.UTF_8))
                  .createdAt(clock.instant())
                  .build());
    }
  }

  private List<PendingEntry> pending() {
    return groups.group(QUEUE, GROUP).orElseThrow().pending();
  }

  private List<GroupDelivery> thiefClaims() {
    groups.join(QUEUE, null, GROUP, "thief", CursorOption.resume(GroupMode.QUEUE));
    return groups.claimBatch(QUEUE, GROUP, "thief", 10);
  }

  @Test
  void renewedClaimsOutliveTheVisibilityTimeoutAndLapseWithoutRenewal() {
    append(3);
    ClassicReader reader = reader(100, 3);
    List<SourceRecord> out = new ArrayList<>();
    assertThat(reader.read(out, 10, clock.instant())).isEqualTo(3);
    assertThat(out).hasSize(3);

    clock.advance(Duration.ofSeconds(6));
    reader.renew(System.nanoTime(), 0);
    clock.advance(Duration.ofSeconds(6)); // 12 s after the claim, 6 s after the renewal
    assertThat(thiefClaims()).as("renewed claims are not stealable").isEmpty();
    assertThat(pending()).allSatisfy(e -> assertThat(e.deliveryCount()).isEqualTo(1));

    clock.advance(Duration.ofSeconds(5)); // 11 s after the renewal, none since
    List<GroupDelivery> stolen = thiefClaims();
    assertThat(stolen).as("without renewal the claims lapse").hasSize(3);
    assertThat(stolen).allSatisfy(d -> assertThat(d.deliveryCount()).isEqualTo(2));
  }

  @Test
  void aDeliveryIsAcknowledgedOnlyWhenKafkaAcceptedItAndTheHousekeeperSettlesIt() {
    append(2);
    ClassicReader reader = reader(100, 3);
    List<SourceRecord> out = new ArrayList<>();
    reader.read(out, 10, clock.instant());
    assertThat(pending()).hasSize(2);

    reader.committed(out.get(1), 2, true);
    assertThat(handedOver).hasSize(1);
    assertThat(pending()).as("handed over, not yet acknowledged").hasSize(2);
    reader.settle(handedOver.get(0));
    assertThat(pending()).extracting(PendingEntry::offset).containsExactly(0L);

    reader.committed(out.get(0), 1, false); // dropped by Connect: handled too
    reader.settle(handedOver.get(1));
    assertThat(pending()).isEmpty();
    assertThat(groups.group(QUEUE, GROUP).orElseThrow().committed()).isEqualTo(2);
  }

  @Test
  void deliveriesKafkaAcceptedTogetherAreAcknowledgedInOneBatchAndALostClaimIsReported() {
    append(3);
    ClassicReader reader = reader(3, 3);
    List<SourceRecord> out = new ArrayList<>();
    assertThat(reader.read(out, 10, clock.instant())).isEqualTo(3);
    groups.join(QUEUE, null, GROUP, "thief", CursorOption.resume(GroupMode.QUEUE));
    clock.advance(VISIBILITY);
    List<GroupDelivery> stolen = groups.claimBatch(QUEUE, GROUP, "thief", 1);
    assertThat(stolen).as("offset 0 redelivered to another member").hasSize(1);
    assertThat(stolen.get(0).offset()).isZero();
    append(3);
    assertThat(reader.read(out, 10, clock.instant())).as("in-flight budget used up").isZero();
    for (int i = 0; i < 3; i++) {
      reader.committed(out.get(i), i + 1, true);
    }
    long acksBefore = groups.metrics().acks();
    reader.acknowledgeAll(handedOver);
    assertThat(groups.metrics().acks() - acksBefore).isEqualTo(2);
    assertThat(pending())
        .as("the stolen claim stays with its new holder; 1 and 2 are acked")
        .singleElement()
        .satisfies(e -> assertThat(e.consumerId()).isEqualTo("thief"));
    assertThat(handedOver.get(0).delivery.isSettled()).isFalse();
    assertThat(reader.read(out, 10, clock.instant()))
        .as("all three gave their in-flight room back, the lost one included")
        .isEqualTo(3);
  }

  @Test
  void theInFlightBudgetStopsClaimsUntilAcknowledgementsGiveRoomBack() {
    append(5);
    ClassicReader reader = reader(2, 3);
    List<SourceRecord> out = new ArrayList<>();
    assertThat(reader.read(out, 10, clock.instant())).isEqualTo(2);
    assertThat(reader.read(out, 10, clock.instant())).isZero();
    assertThat(reader.blockedOnRoom()).isTrue();
    reader.committed(out.get(0), 1, true);
    reader.settle(handedOver.get(0));
    assertThat(reader.read(out, 10, clock.instant())).isEqualTo(1);
    assertThat(pending()).hasSize(2);
  }

  @Test
  void aDeliveryBeyondMaxDeliveriesIsRejectedIntoTheQueueDlqWithItsReason() {
    append(1);
    groups.join(QUEUE, null, GROUP, "thief", CursorOption.earliest(GroupMode.QUEUE));
    groups.claimNext(QUEUE, GROUP, "thief").orElseThrow().nack(Duration.ZERO);
    ClassicReader reader = reader(100, 1);
    List<SourceRecord> out = new ArrayList<>();
    assertThat(reader.read(out, 10, clock.instant())).isEqualTo(1);
    assertThat(out).as("nothing for Kafka without a Kafka dead-letter topic").isEmpty();
    assertThat(pending()).isEmpty();
    String dlq = groups.deadLetterQueue(manager.getQueue(QUEUE));
    List<Message> dead = storage.queues().readBatch(dlq, 0, 10);
    assertThat(dead).hasSize(1);
    assertThat(dead.get(0).properties().get(MessageProperties.DLQ_REASON))
        .isEqualTo("rejected: delivered 2 times, more than max.deliveries=1");
  }
}
