package io.queuebridge.connect.sink;

import static io.queuebridge.connect.sink.SinkFixture.records;
import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueFullException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.PublishRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.sink.SinkRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RewinderTest {
  private static final TopicPartition TP0 = new TopicPartition("in", 0);
  private static final TopicPartition TP1 = new TopicPartition("in", 1);
  private static final TopicPartition TP2 = new TopicPartition("in", 2);
  private static final long BACKOFF_MS = 1_000;

  @TempDir Path dir;
  private final MutableClock clock = MutableClock.at("2026-01-01T00:00:00Z");
  private SinkFixture fixture;
  private FakeSinkTaskContext context;
  private Rewinder rewinder;

  @BeforeEach
  void open() {
    fixture = new SinkFixture(dir);
    context = new FakeSinkTaskContext(fixture.pluginMetrics, TP0, TP1);
    rewinder = fixture.rewinder(context, clock);
  }

  @AfterEach
  void close() {
    fixture.close();
  }

  private static QueueStoreException transientFailure() {
    return new QueueStoreException("s", "injected");
  }

  @Test
  void rewindsGoToTheLowestOffsetAndOnlyAssignedPartitionsAreHandedToConnect() {
    assertThat(rewinder.applyRewinds()).isEmpty();
    rewinder.rewind(TP0, 5);
    rewinder.rewind(Map.of(TP0, 3L, TP2, 1L));
    rewinder.rewind(TP0, 4);
    assertThat(rewinder.applyRewinds()).containsExactly(Map.entry(TP0, 3L));
    assertThat(context.rewinds).containsExactly(Map.entry(TP0, 3L));
    assertThat(rewinder.applyRewinds()).as("handed over once").isEmpty();
  }

  @Test
  void recordsFetchedDuringAPauseAreRewoundToTheFirstOfEachPartition() {
    List<SinkRecord> fetched = new ArrayList<>(records(TP0, 7, 9));
    fetched.addAll(records(TP1, 2, 4));
    rewinder.rewindFetched(fetched);
    assertThat(rewinder.applyRewinds())
        .containsExactlyInAnyOrderEntriesOf(Map.of(TP0, 7L, TP1, 2L));
  }

  @Test
  void aTransientFailurePausesEveryAssignedPartitionForTheBackoff() {
    rewinder.maybeResume();
    assertThat(context.timeoutMs).as("nothing paused: nothing to do").isEqualTo(-1);
    rewinder.pauseForBackoff("s", 1, transientFailure());
    assertThat(rewinder.paused()).isTrue();
    assertThat(context.paused).containsExactlyInAnyOrder(TP0, TP1);
    assertThat(context.timeoutMs).isEqualTo(BACKOFF_MS);

    clock.advance(Duration.ofMillis(400));
    rewinder.maybeResume();
    assertThat(context.paused).as("backoff not over").containsExactlyInAnyOrder(TP0, TP1);
    assertThat(context.timeoutMs).isEqualTo(600);

    clock.advance(Duration.ofMillis(600));
    rewinder.maybeResume();
    assertThat(rewinder.paused()).isFalse();
    assertThat(context.paused).isEmpty();
  }

  @Test
  void aQueueRefusingABatchAsFullKeepsThePartitionsPausedUntilItHasRoom() throws Exception {
    fixture.manager().createQueue(QueueConfig.durable("work").maxDepth(10).build());
    List<PublishRequest> eight = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      eight.add(PublishRequest.builder("work").value(new byte[] {1}).build());
    }
    fixture.manager().publishBatchDurably("work", eight, Map.of());

    rewinder.pauseUntilRoom("work", 5, new QueueFullException("work", 8, 10));
    clock.advance(Duration.ofMillis(BACKOFF_MS));
    rewinder.maybeResume();
    assertThat(context.paused).as("8 of 10: no room for 5").containsExactlyInAnyOrder(TP0, TP1);
    assertThat(context.timeoutMs).isEqualTo(BACKOFF_MS);

    fixture.queues().truncate("work", fixture.queues().tail("work")); // consumed, removed
    rewinder.maybeResume();
    assertThat(context.paused).as("the backoff starts again").containsExactlyInAnyOrder(TP0, TP1);
    clock.advance(Duration.ofMillis(BACKOFF_MS));
    rewinder.maybeResume();
    assertThat(context.paused).isEmpty();
  }

  @Test
  void partitionsAssignedDuringAPauseArePausedToo() {
    rewinder.opened(List.of(TP2));
    assertThat(context.paused).as("nothing paused").isEmpty();
    rewinder.pauseForBackoff("s", 1, transientFailure());
    rewinder.opened(List.of(TP2));
    assertThat(context.paused).containsExactlyInAnyOrder(TP0, TP1, TP2);
  }

  @Test
  void closedPartitionsAreResumedAndTheirRewindsForgotten() throws Exception {
    fixture.manager().createQueue(QueueConfig.durable("work").maxDepth(1).build());
    fixture
        .manager()
        .publishBatchDurably(
            "work",
            List.of(PublishRequest.builder("work").value(new byte[] {1}).build()),
            Map.of());
    rewinder.rewind(Map.of(TP0, 3L, TP1, 4L));
    rewinder.pauseUntilRoom("work", 1, new QueueFullException("work", 1, 1));

    rewinder.closed(List.of(TP0));
    assertThat(context.paused).containsExactly(TP1);
    assertThat(rewinder.applyRewinds()).containsExactly(Map.entry(TP1, 4L));

    rewinder.closed(List.of(TP1)); // nothing paused any more: the full queue is forgotten too
    assertThat(rewinder.paused()).isFalse();
    rewinder.pauseForBackoff("s", 1, transientFailure());
    clock.advance(Duration.ofMillis(BACKOFF_MS));
    rewinder.maybeResume();
    assertThat(context.paused).as("'work' is still full, but no longer waited for").isEmpty();
  }
}
