package io.queuebridge.connect.sink;

import static io.queuebridge.connect.sink.SinkFixture.records;
import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.SharedStores;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.connect.sink.SinkRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sink task's exactly-once mechanics against a real file store, with Connect's task context
 * (the framework boundary) replaced by a recording fake.
 */
class QueueSinkTaskTest {
  private static final TopicPartition TP0 = new TopicPartition("in", 0);
  private static final TopicPartition TP1 = new TopicPartition("in", 1);

  @TempDir Path dir;
  private final MutableClock clock = MutableClock.at("2026-01-01T00:00:00Z");
  private final Metrics metrics = new Metrics();
  private final List<QueueSinkTask> tasks = new ArrayList<>();

  @AfterEach
  void stopTasks() {
    if (FlakyStoreProvider.hold != null) {
      FlakyStoreProvider.hold.countDown(); // never leave a writer waiting
    }
    if (FlakyStoreProvider.holdWriterGetQueue != null) {
      FlakyStoreProvider.holdWriterGetQueue.countDown();
    }
    tasks.forEach(QueueSinkTask::stop);
    metrics.close();
    FlakyStoreProvider.FAIL_AFTER_APPEND.set(0);
    FlakyStoreProvider.FAIL_BEFORE_APPEND.set(0);
    FlakyStoreProvider.FAIL_GET_QUEUE.set(0);
    FlakyStoreProvider.FAIL_CHECKPOINTS.set(0);
    FlakyStoreProvider.BATCHES.set(0);
    FlakyStoreProvider.hold = null;
    FlakyStoreProvider.holdWriterGetQueue = null;
  }

  private Map<String, String> props(String storeType) {
    Map<String, String> p = new HashMap<>();
    p.put(QueueSinkConfig.QUEUE_NAME_CONFIG, "s");
    p.put(QueueSinkConfig.STORE_TYPE_CONFIG, storeType);
    p.put(QueueSinkConfig.STORE_PATH_CONFIG, dir.toString());
    return p;
  }

  private QueueSinkTask start(FakeContext context, String storeType) {
    return start(context, props(storeType));
  }

  private QueueSinkTask start(FakeContext context, Map<String, String> props) {
    QueueSinkTask task = new QueueSinkTask(clock);
    task.initialize(context);
    task.start(props);
    tasks.add(task);
    return task;
  }

  /** A started task that Connect has given the context's partitions. */
  private QueueSinkTask opened(FakeContext context, String storeType) {
    QueueSinkTask task = start(context, storeType);
    task.open(context.assignment);
    return task;
  }

  /** What Connect does before committing: the task reports (and so waits for) what is durable. */
  private static Map<TopicPartition, OffsetAndMetadata> durable(
      QueueSinkTask task, TopicPartition... partitions) {
    Map<TopicPartition, OffsetAndMetadata> current = new HashMap<>();
    for (TopicPartition tp : partitions) {
      current.put(tp, new OffsetAndMetadata(Long.MAX_VALUE));
    }
    return task.preCommit(current);
  }

  private List<Message> stream() {
    try (SharedStores.Lease lease = SharedStores.acquire("file", Map.of("path", dir.toString()))) {
      var q = lease.storage().queues();
      return q.readBatch("s", q.head("s"), 10_000);
    }
  }

  private static Set<String> coordinates(List<Message> messages) {
    Set<String> out = new HashSet<>();
    for (Message m : messages) {
      assertThat(
              out.add(
                  m.properties().get(KafkaCoordinates.PARTITION)
                      + "@"
                      + m.properties().get(KafkaCoordinates.OFFSET)))
          .as("duplicate %s", m)
          .isTrue();
    }
    return out;
  }

  @Test
  void openRewindsEachPartitionToTheStoredWatermark() {
    FakeContext first = new FakeContext(TP0, TP1);
    QueueSinkTask task = start(first, "file");
    task.open(List.of(TP0, TP1));
    assertThat(first.rewinds).isEmpty();
    task.put(records(TP0, 0, 10));
    task.put(records(TP1, 0, 3));
    task.close(List.of(TP0, TP1)); // as Connect does before stop: what was put gets written
    task.stop();
    tasks.remove(task);

    FakeContext second = new FakeContext(TP0, TP1);
    start(second, "file").open(List.of(TP0, TP1));
    assertThat(second.rewinds).containsExactlyInAnyOrderEntriesOf(Map.of(TP0, 10L, TP1, 3L));
  }

  @Test
  void recordsBelowTheWatermarkAreSkippedSoARedeliveryWritesNothingTwice() {
    FakeContext context = new FakeContext(TP0);
    QueueSinkTask task = opened(context, "file");
    task.put(records(TP0, 0, 10));
    task.put(records(TP0, 5, 15)); // Kafka redelivers 5..9 (e.g. offsets not yet committed)
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(15)));
    assertThat(coordinates(stream())).hasSize(15);

    QueueSinkTask restarted = start(new FakeContext(TP0), "file");
    restarted.open(List.of(TP0));
    restarted.put(records(TP0, 0, 20)); // an old committed offset: everything again
    assertThat(durable(restarted, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(20)));
    assertThat(coordinates(stream())).hasSize(20);
  }

  @Test
  void preCommitReportsOnlyWhatIsDurable() {
    FakeContext context = new FakeContext(TP0, TP1);
    QueueSinkTask task = opened(context, "file");
    Map<TopicPartition, OffsetAndMetadata> current = new LinkedHashMap<>();
    current.put(TP0, new OffsetAndMetadata(50));
    current.put(TP1, new OffsetAndMetadata(50));
    assertThat(task.preCommit(current)).isEmpty();
    task.put(records(TP0, 0, 7));
    assertThat(task.preCommit(current)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(7)));
  }

  @Test
  void putsWhileTwoBatchesAreInFlightAreCollectedIntoOneBatchAndReportedOnlyOnceDurable() {
    FakeContext context = new FakeContext(TP0);
    QueueSinkTask task = opened(context, "flaky");
    FlakyStoreProvider.hold = new CountDownLatch(1);
    task.put(records(TP0, 0, 5)); // handed to the writer, which waits before appending
    task.put(records(TP0, 5, 7)); // handed over too: prepared behind the first
    task.put(records(TP0, 7, 9)); // two in flight: collected, put returns
    task.put(records(TP0, 9, 12));
    assertThat(FlakyStoreProvider.BATCHES).as("the writer is still held").hasValue(0);

    FlakyStoreProvider.hold.countDown();
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(12)));
    assertThat(FlakyStoreProvider.BATCHES)
        .as("one barrier for each put handed over, one for the two collected meanwhile")
        .hasValue(3);
    task.stop();
    tasks.remove(task);
    assertThat(coordinates(stream())).hasSize(12);
  }

  @Test
  void withPipeliningOffEachPutIsDurableWhenItReturns() {
    Map<String, String> props = props("file");
    props.put(QueueSinkConfig.WRITE_PIPELINED_CONFIG, "false");
    QueueSinkTask task = start(new FakeContext(TP0), props);
    task.open(List.of(TP0));
    task.put(records(TP0, 0, 5));
    assertThat(coordinates(stream())).hasSize(5);
    task.put(records(TP0, 5, 7));
    assertThat(coordinates(stream())).hasSize(7);
  }

  @Test
  void aFailedBarrierThatAppendedIsRewoundPausedAndNotDuplicated() {
    FakeContext context = new FakeContext(TP0, TP1);
    QueueSinkTask task = opened(context, "flaky");
    task.put(records(TP0, 0, 5));
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(5)));
    FlakyStoreProvider.FAIL_AFTER_APPEND.set(1);
    task.put(records(TP0, 5, 10)); // returns; its barrier fails on the writer thread

    // Connect commits: only what passed a barrier is reported.
    assertThat(durable(task, TP0, TP1)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(5)));
    assertThat(context.paused).containsExactlyInAnyOrder(TP0, TP1);
    assertThat(context.timeoutMs).isEqualTo(QueueSinkConfig.RETRY_BACKOFF_MS_DEFAULT);

    // Records Connect fetched before the pause took effect are not written but rewound.
    task.put(records(TP0, 10, 12));
    task.put(records(TP1, 0, 3));
    assertThat(context.rewinds).containsExactlyInAnyOrderEntriesOf(Map.of(TP0, 5L, TP1, 0L));
    task.put(List.of());
    assertThat(context.paused).as("backoff not over").containsExactlyInAnyOrder(TP0, TP1);

    clock.advance(Duration.ofMillis(QueueSinkConfig.RETRY_BACKOFF_MS_DEFAULT));
    task.put(List.of());
    assertThat(context.paused).isEmpty();
    task.put(records(TP0, 5, 12)); // fetched again from the rewound positions
    task.put(records(TP1, 0, 3));
    assertThat(durable(task, TP0, TP1))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(TP0, new OffsetAndMetadata(12), TP1, new OffsetAndMetadata(3)));
    task.stop();
    tasks.remove(task);
    assertThat(coordinates(stream())).hasSize(15); // 5..9 were appended once, then skipped
  }

  @Test
  void aBatchInFlightBehindAFailedOneIsRewoundWithItAndWrittenOnceAfterTheBackoff() {
    FakeContext context = new FakeContext(TP0, TP1);
    QueueSinkTask task = opened(context, "flaky");
    FlakyStoreProvider.hold = new CountDownLatch(1);
    FlakyStoreProvider.FAIL_BEFORE_APPEND.set(1);
    task.put(records(TP0, 0, 5)); // handed over; its append fails once the writer is released
    task.put(records(TP1, 0, 4)); // handed over behind it, prepared meanwhile
    FlakyStoreProvider.hold.countDown();

    assertThat(durable(task, TP0, TP1)).as("neither is durable").isEmpty();
    assertThat(FlakyStoreProvider.BATCHES).as("the second never reached the store").hasValue(0);
    assertThat(context.paused).containsExactlyInAnyOrder(TP0, TP1);
    task.put(List.of());
    assertThat(context.rewinds).containsExactlyInAnyOrderEntriesOf(Map.of(TP0, 0L, TP1, 0L));

    clock.advance(Duration.ofMillis(QueueSinkConfig.RETRY_BACKOFF_MS_DEFAULT));
    task.put(List.of());
    assertThat(context.paused).isEmpty();
    task.put(records(TP0, 0, 5)); // fetched again from the rewound positions
    task.put(records(TP1, 0, 4));
    assertThat(durable(task, TP0, TP1))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(TP0, new OffsetAndMetadata(5), TP1, new OffsetAndMetadata(4)));
    task.stop();
    tasks.remove(task);
    assertThat(coordinates(stream())).hasSize(9);
  }

  @Test
  void aStoreReadThatFailsInPutIsRewoundAndPausedInsteadOfFailingTheTask() {
    FakeContext context = new FakeContext(TP0, TP1);
    QueueSinkTask task = opened(context, "flaky");
    task.put(records(TP0, 0, 5));
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(5)));
    context.rewinds.clear();

    // A new batch reads the stream's configuration on the task thread: the store fails it.
    FlakyStoreProvider.FAIL_GET_QUEUE.set(1);
    task.put(records(TP0, 5, 10)); // does not throw: Connect would fail the task
    assertThat(FlakyStoreProvider.FAIL_GET_QUEUE).as("the read was made").hasValue(0);
    task.put(List.of()); // the rewind is handed to Connect on the next put
    assertThat(context.rewinds).containsExactlyEntriesOf(Map.of(TP0, 5L));
    assertThat(context.paused).containsExactlyInAnyOrder(TP0, TP1);
    assertThat(durable(task, TP0, TP1)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(5)));

    clock.advance(Duration.ofMillis(QueueSinkConfig.RETRY_BACKOFF_MS_DEFAULT));
    task.put(List.of());
    assertThat(context.paused).isEmpty();
    task.put(records(TP0, 5, 10)); // fetched again from the rewound position
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(10)));
    task.stop();
    tasks.remove(task);
    assertThat(coordinates(stream())).hasSize(10);
  }

  @Test
  void partitionsAssignedWhileTheStoreIsUnreachableWaitPausedForTheirWatermarks() {
    FakeContext first = new FakeContext(TP0, TP1);
    QueueSinkTask task = opened(first, "flaky");
    task.put(records(TP0, 0, 5));
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(5)));
    task.stop();
    tasks.remove(task);

    // a rebalance while the store is unreachable: open cannot read the watermarks
    FlakyStoreProvider.FAIL_CHECKPOINTS.set(1);
    FakeContext context = new FakeContext(TP0, TP1);
    QueueSinkTask next = start(context, "flaky");
    next.open(context.assignment); // does not throw: Connect would fail the task
    assertThat(FlakyStoreProvider.FAIL_CHECKPOINTS).as("the read was made").hasValue(0);
    assertThat(context.paused).containsExactlyInAnyOrder(TP0, TP1);
    assertThat(context.rewinds).isEmpty();
    assertThat(durable(next, TP0, TP1)).as("nothing is known durable yet").isEmpty();
    next.put(List.of());
    assertThat(context.paused).as("backoff not over").containsExactlyInAnyOrder(TP0, TP1);

    clock.advance(Duration.ofMillis(QueueSinkConfig.RETRY_BACKOFF_MS_DEFAULT));
    next.put(List.of()); // reads the watermarks now, rewinds, resumes
    assertThat(context.rewinds).containsExactlyEntriesOf(Map.of(TP0, 5L));
    assertThat(context.paused).isEmpty();
    next.put(records(TP0, 5, 10));
    next.put(records(TP1, 0, 2));
    assertThat(durable(next, TP0, TP1))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(TP0, new OffsetAndMetadata(10), TP1, new OffsetAndMetadata(2)));
    next.stop();
    tasks.remove(next);
    assertThat(coordinates(stream())).hasSize(12);
  }

  @Test
  void storeFailuresLongerThanTheRetryBudgetFailTheTaskNamingTheStoreAndARestartResumes() {
    FakeContext context = new FakeContext(TP0);
    Map<String, String> props = props("flaky");
    props.put(QueueSinkConfig.RETRY_TIMEOUT_MS_CONFIG, "3000");
    QueueSinkTask task = start(context, props);
    task.open(context.assignment);
    task.put(records(TP0, 0, 5));
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(5)));

    FlakyStoreProvider.FAIL_BEFORE_APPEND.set(Integer.MAX_VALUE); // the store stays unreachable
    long failedAfterMs = -1;
    for (long elapsed = 0; elapsed <= 10_000; elapsed += QueueSinkConfig.RETRY_BACKOFF_MS_DEFAULT) {
      try {
        task.put(List.of()); // resumes after the backoff
        task.put(records(TP0, 5, 10));
        durable(task, TP0); // settles the batch: failed, rewound, paused
      } catch (org.apache.kafka.connect.errors.ConnectException e) {
        failedAfterMs = elapsed;
        assertThat(e)
            .hasMessageContaining("giving up on the store flaky file:")
            .hasMessageContaining("queue.retry.timeout.ms=3000")
            .hasMessageContaining("Last error: injected: the store is unreachable");
        break;
      }
      clock.advance(Duration.ofMillis(QueueSinkConfig.RETRY_BACKOFF_MS_DEFAULT));
    }
    assertThat(failedAfterMs).as("ms of failures before the task failed").isEqualTo(3000);
    // a failure that surfaced in preCommit (whose exceptions Connect only logs) fails every put
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> task.put(records(TP0, 5, 10)))
        .hasMessageContaining("giving up on the store");
    task.stop();
    tasks.remove(task);

    // the store is back and the task is restarted: it resumes at the stored watermark
    FlakyStoreProvider.FAIL_BEFORE_APPEND.set(0);
    FakeContext again = new FakeContext(TP0);
    QueueSinkTask restarted = start(again, props);
    restarted.open(again.assignment);
    assertThat(again.rewinds).containsExactlyEntriesOf(Map.of(TP0, 5L));
    restarted.put(records(TP0, 5, 10));
    assertThat(durable(restarted, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(10)));
    restarted.stop();
    tasks.remove(restarted);
    assertThat(coordinates(stream())).hasSize(10);
  }

  /** A task routing by matching into the classic queue {@code work} (topic "in", maxDepth 10). */
  private QueueSinkTask openedIntoWorkQueue(FakeContext context) {
    try (SharedStores.Lease lease = SharedStores.acquire("file", Map.of("path", dir.toString()))) {
      lease.manager().createQueue(QueueConfig.durable("work").topics("in").maxDepth(10).build());
    }
    Map<String, String> props = props("file");
    props.put(QueueSinkConfig.QUEUE_ROUTING_CONFIG, "matching");
    QueueSinkTask task = start(context, props);
    task.open(context.assignment);
    return task;
  }

  @Test
  void aFullQueuePausesThePartitionsUntilItHasRoomAndLosesNothing() {
    FakeContext context = new FakeContext(TP0);
    QueueSinkTask task = openedIntoWorkQueue(context);
    task.put(records(TP0, 0, 8));
    task.put(records(TP0, 8, 13)); // 8 + 5 > maxDepth 10: refused on the writer thread

    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(8)));
    assertThat(context.paused).containsExactly(TP0);
    task.put(List.of());
    assertThat(context.rewinds).containsExactly(Map.entry(TP0, 8L));

    clock.advance(Duration.ofMillis(QueueSinkConfig.RETRY_BACKOFF_MS_DEFAULT));
    task.put(List.of());
    assertThat(context.paused).as("still 8 of 10: no room for 5").containsExactly(TP0);

    try (SharedStores.Lease lease = SharedStores.acquire("file", Map.of("path", dir.toString()))) {
      var q = lease.storage().queues();
      q.truncate("work", q.tail("work")); // consumed and removed
    }
    clock.advance(Duration.ofMillis(QueueSinkConfig.RETRY_BACKOFF_MS_DEFAULT));
    task.put(List.of());
    assertThat(context.paused).isEmpty();
    task.put(records(TP0, 8, 13)); // fetched again from the rewound position
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(13)));
    try (SharedStores.Lease lease = SharedStores.acquire("file", Map.of("path", dir.toString()))) {
      var q = lease.storage().queues();
      assertThat(q.readBatch("work", q.head("work"), 100))
          .extracting(m -> m.properties().get(KafkaCoordinates.OFFSET))
          .containsExactly("8", "9", "10", "11", "12");
    }
  }

  @Test
  void aPutLargerThanAClassicQueuesMaxDepthIsWrittenInPiecesInsteadOfRefusedForever() {
    FakeContext context = new FakeContext(TP0);
    QueueSinkTask task = openedIntoWorkQueue(context);

    // 25 records could never enter a queue of maxDepth 10 as one batch, not even an empty one.
    task.put(records(TP0, 0, 25));
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(10)));
    assertThat(context.paused).as("nothing was refused").isEmpty();
    task.put(records(TP0, 25, 30)); // fetched before the rewind took effect: not written
    assertThat(context.rewinds).containsExactly(Map.entry(TP0, 10L));
    assertThat(consumeAll("work")).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);

    task.put(records(TP0, 10, 30)); // fetched again from the rewound position
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(20)));
    task.put(List.of());
    assertThat(context.rewinds).containsExactly(Map.entry(TP0, 20L));
    assertThat(consumeAll("work"))
        .containsExactly(10L, 11L, 12L, 13L, 14L, 15L, 16L, 17L, 18L, 19L);

    task.put(records(TP0, 20, 30));
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(30)));
    assertThat(consumeAll("work"))
        .containsExactly(20L, 21L, 22L, 23L, 24L, 25L, 26L, 27L, 28L, 29L);
  }

  private static void delayHeader(SinkRecord record, String value) {
    record.headers().addBytes("delay-ms", value.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aDelayedRecordIsStoredWithItsDueTimeFromTheWriteAndTheOthersWithout() {
    Map<String, String> props = props("file");
    props.put(QueueSinkConfig.DELAY_HEADER_CONFIG, "delay-ms");
    FakeContext context = new FakeContext(TP0);
    QueueSinkTask task = start(context, props);
    task.open(context.assignment);
    List<SinkRecord> put = records(TP0, 0, 3);
    delayHeader(put.get(1), "90000");
    Instant before = Instant.now();
    task.put(put);
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(3)));
    Instant after = Instant.now();
    List<Message> stored = stream();
    assertThat(stored).extracting(Message::deliverAt).first().isNull();
    assertThat(stored.get(2).deliverAt()).isNull();
    assertThat(stored.get(1).deliverAt())
        .as("90 s after the write, by the store's clock")
        .isBetween(before.plusSeconds(90), after.plusSeconds(90));
    assertThat(stored.get(1).properties())
        .containsEntry(MessageProperties.DELIVER_AT, stored.get(1).deliverAt().toString());
    assertThat(stored.get(1).headers())
        .as("the header is forwarded too")
        .containsExactly(io.queuebridge.core.message.Header.of("delay-ms", "90000"));
    assertThat(io.queuebridge.connect.common.TestMetrics.value(metrics, "records-delayed-total"))
        .as("one of the three appended asked for a due time")
        .isEqualTo(1.0);
  }

  @Test
  void queueMaxDelayMsIsTheStreamsMaxDelaySoALongerDelayIsStored() {
    Map<String, String> props = props("file");
    props.put(QueueSinkConfig.DELAY_HEADER_CONFIG, "delay-ms");
    props.put(
        QueueSinkConfig.QUEUE_MAX_DELAY_MS_CONFIG, Long.toString(Duration.ofDays(30).toMillis()));
    FakeContext context = new FakeContext(TP0);
    QueueSinkTask task = start(context, props);
    task.open(context.assignment);
    List<SinkRecord> put = records(TP0, 0, 1);
    // beyond the default maxDelay of 7 days, inside the configured 30
    delayHeader(put.get(0), Long.toString(Duration.ofDays(10).toMillis()));
    Instant before = Instant.now();
    task.put(put);
    assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(1)));
    assertThat(stream().get(0).deliverAt()).isAfterOrEqualTo(before.plus(Duration.ofDays(10)));
    try (SharedStores.Lease lease = SharedStores.acquire("file", Map.of("path", dir.toString()))) {
      assertThat(lease.manager().getQueue("s").maxDelay()).isEqualTo(Duration.ofDays(30));
    }
  }

  @Test
  void aDelayTheQueueRefusesOnlyWhenTheBatchIsWrittenIsRewoundAndMappedAgainNotFatal() {
    Map<String, String> props = props("flaky");
    props.put(QueueSinkConfig.QUEUE_ROUTING_CONFIG, "matching");
    props.put(QueueSinkConfig.DELAY_HEADER_CONFIG, "delay-ms");
    props.put(QueueSinkConfig.ERRORS_TOLERANCE_CONFIG, "all");
    FakeContext context = new FakeContext(TP0);
    List<Throwable> reported = new ArrayList<>();
    context.reporter =
        (record, error) -> {
          reported.add(error);
          return java.util.concurrent.CompletableFuture.completedFuture(null);
        };
    try (SharedStores.Lease lease = SharedStores.acquire("flaky", Map.of("path", dir.toString()))) {
      lease.manager().createQueue(QueueConfig.durable("work").topics("in").build());
      QueueSinkTask task = start(context, props);
      task.open(context.assignment);

      // The record is mapped against a maxDelay of 7 days; before the writer reads the queue's
      // configuration, an operator lowers it to 30 s.
      FlakyStoreProvider.holdWriterGetQueue = new CountDownLatch(1);
      List<SinkRecord> put = records(TP0, 0, 3);
      delayHeader(put.get(1), "60000");
      task.put(put);
      QueueConfig work = lease.manager().getQueue("work");
      lease.manager().updateQueue(work.toBuilder().maxDelay(Duration.ofSeconds(30)).build());
      FlakyStoreProvider.holdWriterGetQueue.countDown();

      assertThat(durable(task, TP0)).as("refused whole: nothing durable").isEmpty();
      assertThat(context.paused).containsExactly(TP0);
      task.put(List.of()); // the rewind is handed to Connect on the next put
      assertThat(context.rewinds).containsExactly(Map.entry(TP0, 0L));
      assertThat(lease.storage().queues().tail("work")).isZero();
      assertThat(reported).isEmpty();

      clock.advance(Duration.ofMillis(QueueSinkConfig.RETRY_BACKOFF_MS_DEFAULT));
      task.put(List.of());
      assertThat(context.paused).isEmpty();
      List<SinkRecord> again = records(TP0, 0, 3); // fetched again from the rewound position
      delayHeader(again.get(1), "60000");
      task.put(again);
      assertThat(durable(task, TP0)).containsExactly(Map.entry(TP0, new OffsetAndMetadata(3)));
      assertThat(reported)
          .singleElement()
          .asString()
          .contains("record in-0@1: header 'delay-ms' (queue.delay.header) = '60000'")
          .contains("beyond the maxDelay of queue 'work'; expected at most PT30S (30000 ms)");
      var q = lease.storage().queues();
      assertThat(q.readBatch("work", q.head("work"), 10))
          .extracting(m -> m.properties().get(KafkaCoordinates.OFFSET))
          .containsExactly("0", "2");
    }
  }

  /** The Kafka offsets of everything in {@code queue}, which is then emptied (consumed). */
  private List<Long> consumeAll(String queue) {
    try (SharedStores.Lease lease = SharedStores.acquire("file", Map.of("path", dir.toString()))) {
      var q = lease.storage().queues();
      List<Long> offsets = new ArrayList<>();
      for (Message m : q.readBatch(queue, q.head(queue), 10_000)) {
        offsets.add(Long.parseLong(m.properties().get(KafkaCoordinates.OFFSET)));
      }
      q.truncate(queue, q.tail(queue));
      return offsets;
    }
  }

  /** Connect's task context with this test's plugin metrics, one set of tags per task. */
  private final class FakeContext extends FakeSinkTaskContext {
    FakeContext(TopicPartition... assigned) {
      super(
          new PluginMetricsImpl(metrics, new LinkedHashMap<>(Map.of("task", "t" + tasks.size()))),
          assigned);
    }
  }
}
