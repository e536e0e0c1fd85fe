package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.SharedStores;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The task's contract with Connect, on a real store (a shared memory store, or the fault-injecting
 * one) with Connect's side faked at its boundary: bounded polls, waking on stop and on appends,
 * acknowledgement only in commitRecord, start positions, and failures surfacing from poll.
 */
class QueueSourceTaskTest {
  private static final AtomicInteger STORES = new AtomicInteger();
  private static final String CONNECTOR = "c";
  private static final String GROUP = "connect-" + CONNECTOR;

  private final List<QueueSourceTask> tasks = new ArrayList<>();
  private String storeName;
  private String storeType = "memory";
  private SharedStores.Lease lease;

  @BeforeEach
  void setUp() {
    storeName = "task-test-" + STORES.incrementAndGet();
  }

  private SharedStores.Lease store() {
    if (lease == null) {
      lease = SharedStores.acquire(storeType, Map.of("name", storeName));
    }
    return lease;
  }

  @AfterEach
  void tearDown() {
    tasks.forEach(QueueSourceTask::stop);
    FaultyStoreProvider.GROUP_WRITE_FAILURE.set(null);
    FaultyStoreProvider.READ_FAILURE.set(null);
    if (lease != null) {
      lease.close();
    }
  }

  private Map<String, String> props(String... queues) {
    Map<String, String> props = new HashMap<>();
    props.put("name", CONNECTOR);
    props.put(QueueSourceConfig.STORE_TYPE_CONFIG, storeType);
    props.put(QueueSourceConfig.STORE_PREFIX + "name", storeName);
    props.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, String.join(",", queues));
    props.put(QueueSourceConfig.TASK_QUEUES_CONFIG, String.join(",", queues));
    props.put(QueueSourceConfig.TOPIC_CONFIG, "out");
    props.put(QueueSourceConfig.POLL_TIMEOUT_MS_CONFIG, "200");
    props.put(QueueSourceConfig.COMMIT_INTERVAL_MS_CONFIG, "10");
    props.put(QueueSourceConfig.RETRY_BACKOFF_MS_CONFIG, "50");
    return props;
  }

  private QueueSourceTask start(Map<String, String> props, FakeTaskContext context) {
    QueueSourceTask task = new QueueSourceTask();
    task.initialize(context);
    tasks.add(task);
    task.start(props);
    return task;
  }

  private QueueSourceTask start(Map<String, String> props) {
    return start(props, new FakeTaskContext(props));
  }

  private void stream(String name) {
    store().manager().createQueue(QueueConfig.durable(name).type(QueueType.STREAM).build());
  }

  private void classic(String name) {
    store().manager().createQueue(QueueConfig.durable(name).build());
  }

  private void append(String queue, String... values) {
    for (String v : values) {
      store().storage().queues().append(queue, message(v).build());
    }
  }

  private static Message.Builder message(String value) {
    return Message.builder()
        .topic("t")
        .value(value.getBytes(StandardCharsets.UTF_8))
        .createdAt(Instant.now());
  }

  private static List<String> values(List<SourceRecord> records) {
    return records == null
        ? List.of()
        : records.stream()
            .map(r -> new String((byte[]) r.value(), StandardCharsets.UTF_8))
            .toList();
  }

  private static RecordMetadata accepted(SourceRecord r) {
    return new RecordMetadata(new TopicPartition(r.topic(), 0), 0, 0, 0, 0, 0);
  }

  private ConsumerGroups groups() {
    return store().manager().consumerGroups();
  }

  private ConsumerGroupState group(String queue) {
    return groups().group(queue, GROUP).orElseThrow();
  }

  @Test
  void pollReturnsNullOnceThePollTimeoutPassesWithNothingToRead() throws Exception {
    stream("s");
    QueueSourceTask task = start(props("s"));
    long started = System.nanoTime();
    assertThat(task.poll()).isNull();
    assertThat(Duration.ofNanos(System.nanoTime() - started))
        .isGreaterThanOrEqualTo(Duration.ofMillis(150))
        .isLessThan(Duration.ofSeconds(5));
  }

  @Test
  void stopWakesAPollBlockedOnAnEmptyQueue() {
    stream("s");
    Map<String, String> props = props("s");
    props.put(QueueSourceConfig.POLL_TIMEOUT_MS_CONFIG, "60000");
    QueueSourceTask task = start(props);
    CompletableFuture<List<SourceRecord>> poll = CompletableFuture.supplyAsync(() -> poll(task));
    await("the poll waits").atMost(Duration.ofSeconds(10)).until(task::isWaiting);
    task.stop();
    await("the poll returned")
        .atMost(Duration.ofSeconds(5))
        .until(() -> poll.isDone() && poll.join() == null);
  }

  @Test
  void aMessageAppendedWhileAPollWaitsEndsTheWaitAtOnce() {
    stream("a");
    stream("b");
    Map<String, String> props = props("a", "b");
    props.put(QueueSourceConfig.POLL_TIMEOUT_MS_CONFIG, "60000");
    QueueSourceTask task = start(props);
    CompletableFuture<List<SourceRecord>> poll = CompletableFuture.supplyAsync(() -> poll(task));
    await("the poll waits").atMost(Duration.ofSeconds(10)).until(task::isWaiting);
    append("b", "hello");
    await("the poll returned the message")
        .atMost(Duration.ofSeconds(5))
        .until(() -> poll.isDone() && values(poll.join()).equals(List.of("hello")));
  }

  private static List<SourceRecord> poll(QueueSourceTask task) {
    try {
      return task.poll();
    } catch (InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void classicDeliveriesAreAcknowledgedInCommitRecordAndNeverInCommit() throws Exception {
    classic("q");
    append("q", "m0", "m1", "m2");
    FakeTaskContext context = new FakeTaskContext(props("q"));
    QueueSourceTask task = start(props("q"), context);
    List<SourceRecord> records = task.poll();
    assertThat(values(records)).containsExactly("m0", "m1", "m2");
    assertThat(context.metric("in-flight")).isEqualTo(3L);

    task.commit();
    assertThat(group("q").pending()).as("commit() acknowledges nothing").hasSize(3);

    task.commitRecord(records.get(0), accepted(records.get(0)));
    task.commitRecord(records.get(2), null); // filtered or dropped: handled too
    await("two acknowledged")
        .atMost(Duration.ofSeconds(10))
        .until(() -> group("q").pending().size() == 1);
    assertThat(group("q").pending().get(0).offset()).isEqualTo(1);
    assertThat(context.metric("in-flight")).isEqualTo(1L);
    assertThat(context.metric("records-committed-total")).isEqualTo(2L);
  }

  @Test
  void anIdleTaskHeartbeatsWithinTheShortestHeartbeatTimeoutOfItsQueues() {
    store()
        .manager()
        .createQueue(QueueConfig.durable("fast").heartbeatTimeout(Duration.ofSeconds(2)).build());
    classic("plain"); // the manager's consumerTimeout: 2 min
    start(props("fast", "plain"));
    // nothing polls, so no claim counts as a heartbeat: only the task's own heartbeats keep it a
    // member while the manager's sweep removes members of "fast" silent for 2 s
    await("the member stays")
        .during(Duration.ofSeconds(5))
        .atMost(Duration.ofSeconds(15))
        .until(() -> group("fast").consumers().containsKey(CONNECTOR + "-0"));
  }

  @Test
  void aPausedGroupDeliversNothingUntilItIsResumedOnAStreamAndOnAQueue() throws Exception {
    stream("s");
    classic("q");
    append("s", "s0", "s1");
    append("q", "q0");
    groups().join("s", null, GROUP, "operator", CursorOption.earliest(GroupMode.STREAM));
    groups().join("q", null, GROUP, "operator", CursorOption.earliest(GroupMode.QUEUE));
    assertThat(groups().pause("s", GROUP)).isTrue();
    assertThat(groups().pause("q", GROUP)).isTrue();
    QueueSourceTask task = start(props("s", "q"));
    assertThat(values(task.poll())).as("a poll while both groups are paused").isEmpty();
    append("s", "s2");
    assertThat(values(task.poll())).as("an append while paused").isEmpty();
    assertThat(group("s").committed()).isZero();

    assertThat(groups().resume("s", GROUP)).isTrue();
    assertThat(groups().resume("q", GROUP)).isTrue();
    List<String> polled = new ArrayList<>();
    await("everything delivered after the resume")
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              polled.addAll(values(task.poll()));
              return polled.size() >= 4;
            });
    assertThat(polled).containsExactlyInAnyOrder("s0", "s1", "s2", "q0");
  }

  @Test
  void streamGroupOffsetFollowsTheContiguousPrefixKafkaAccepted() throws Exception {
    stream("s");
    append("s", "0", "1", "2", "3", "4");
    FakeTaskContext context = new FakeTaskContext(props("s"));
    QueueSourceTask task = start(props("s"), context);
    List<SourceRecord> records = task.poll();
    assertThat(records).hasSize(5);
    assertThat(records.get(4).sourceOffset()).isEqualTo(SourceOffsets.offset(5));
    task.commitRecord(records.get(0), accepted(records.get(0)));
    task.commitRecord(records.get(2), accepted(records.get(2)));
    await().atMost(Duration.ofSeconds(10)).until(() -> group("s").committed() == 1);
    task.commitRecord(records.get(1), accepted(records.get(1)));
    await().atMost(Duration.ofSeconds(10)).until(() -> group("s").committed() == 3);
    assertThat(context.metric("lag")).isEqualTo(2L);
    task.commitRecord(records.get(4), accepted(records.get(4)));
    task.commitRecord(records.get(3), null);
    await().atMost(Duration.ofSeconds(10)).until(() -> group("s").committed() == 5);
    assertThat(context.metric("records-polled-total")).isEqualTo(5.0);
  }

  @Test
  void connectsOffsetWinsThenTheGroupsCommittedOffsetThenTheStartPosition() throws Exception {
    for (String q : List.of("both", "group-only", "neither")) {
      stream(q);
      append(q, "0", "1", "2", "3", "4", "5", "6", "7", "8", "9");
    }
    for (String q : List.of("both", "group-only")) {
      groups().join(q, null, GROUP, "old", CursorOption.atOffset(GroupMode.STREAM, 6));
      groups().commitOffset(q, GROUP, 4);
      groups().leave(q, null, GROUP, "old");
    }
    Map<String, String> props = props("both", "group-only", "neither");
    props.put(QueueSourceConfig.START_POSITION_CONFIG, "latest");
    props.put(QueueSourceConfig.POLL_MAX_RECORDS_CONFIG, "100");
    FakeTaskContext context = new FakeTaskContext(props);
    context.storedOffsets.put(
        SourceOffsets.partition("both", GROUP), Map.of(SourceOffsets.OFFSET_KEY, 7L));
    QueueSourceTask task = start(props, context);
    List<SourceRecord> records = new ArrayList<>(task.poll());
    Map<String, List<String>> byQueue = new HashMap<>();
    for (SourceRecord r : records) {
      byQueue
          .computeIfAbsent(SourceOffsets.queueOf(r.sourcePartition()), k -> new ArrayList<>())
          .add(new String((byte[]) r.value(), StandardCharsets.UTF_8));
    }
    assertThat(byQueue.get("both")).as("from Connect's offset").containsExactly("7", "8", "9");
    assertThat(byQueue.get("group-only"))
        .as("from the group's committed offset")
        .containsExactly("4", "5", "6", "7", "8", "9");
    assertThat(byQueue).as("latest: nothing old").doesNotContainKey("neither");
    append("neither", "10");
    assertThat(values(task.poll())).containsExactly("10");
  }

  @Test
  void aStoredPositionBeyondTheTailFailsTheStartNamingTheWayOut() {
    stream("s");
    append("s", "0", "1");
    Map<String, String> props = props("s");
    FakeTaskContext context = new FakeTaskContext(props);
    context.storedOffsets.put(SourceOffsets.partition("s", GROUP), Map.of("offset", 50L));
    assertThatThrownBy(() -> start(props, context))
        .isInstanceOf(ConnectException.class)
        .hasMessageContaining("beyond the stream's tail 2")
        .hasMessageContaining("offsets REST API");
  }

  @Test
  void aPoisonStreamMessageFailsThePollUnlessErrorsAreTolerated() throws Exception {
    stream("s");
    append("s", "ok-0");
    store()
        .storage()
        .queues()
        .append("s", message("bad").property(KafkaCoordinates.PARTITION, "x").build());
    append("s", "ok-2");
    Map<String, String> props = props("s");
    props.put(QueueSourceConfig.RESTORE_MODE_CONFIG, "true");
    QueueSourceTask strict = start(props);
    assertThat(values(strict.poll()))
        .as("what was read before the poison message is handed over first")
        .containsExactly("ok-0");
    assertThatThrownBy(strict::poll)
        .isInstanceOf(ConnectException.class)
        .hasMessageContaining("offset 1 of stream 's'")
        .hasMessageContaining("kafka.dlq.topic");
    strict.stop();

    props.put(QueueSourceConfig.ERRORS_TOLERANCE_CONFIG, "all");
    props.put(QueueSourceConfig.QUEUE_GROUP_CONFIG, "tolerant");
    QueueSourceTask tolerant = start(props);
    List<SourceRecord> records = tolerant.poll();
    assertThat(values(records)).containsExactly("ok-0", "ok-2");
    records.forEach(r -> tolerant.commitRecord(r, accepted(r)));
    await("the skipped message counts as handled")
        .atMost(Duration.ofSeconds(10))
        .until(() -> groups().group("s", "tolerant").orElseThrow().committed() == 3);
  }

  @Test
  void aBackgroundFailureSurfacesOnTheNextPollAndHealsAfterIt() throws Exception {
    storeType = "faulty";
    stream("s");
    append("s", "0", "1");
    QueueSourceTask task = start(props("s"));
    List<SourceRecord> records = task.poll();
    // the failure is injected at the store SPI seam: every consumer-group write fails
    FaultyStoreProvider.GROUP_WRITE_FAILURE.set(
        new QueueStoreException("s", "disk briefly unavailable", null));
    records.forEach(r -> task.commitRecord(r, accepted(r)));
    await("the housekeeper's failure comes out of poll")
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThatThrownBy(task::poll)
                    .isInstanceOf(RetriableException.class)
                    .hasMessageContaining("committing stream progress failed")
                    .hasMessageContaining("disk briefly unavailable"));
    FaultyStoreProvider.GROUP_WRITE_FAILURE.set(null);
    append("s", "2");
    List<SourceRecord> later = new ArrayList<>();
    await("polling again after the backoff")
        .atMost(Duration.ofSeconds(10))
        .ignoreExceptions()
        .until(
            () -> {
              later.addAll(task.poll());
              return values(later).equals(List.of("2"));
            });
    await("the stream progress was written after all")
        .atMost(Duration.ofSeconds(10))
        .until(() -> group("s").committed() == 2);

    FaultyStoreProvider.GROUP_WRITE_FAILURE.set(
        new InvalidConfigException("group", "x", "a store that accepts it"));
    task.commitRecord(later.get(0), accepted(later.get(0)));
    await("a fatal background failure is not retriable")
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThatThrownBy(task::poll)
                    .isInstanceOf(ConnectException.class)
                    .isNotInstanceOf(RetriableException.class)
                    .hasMessageContaining("a store that accepts it"));
  }

  @Test
  void storeFailuresLongerThanTheRetryBudgetFailThePollNamingTheStoreAndARestartResumes()
      throws Exception {
    storeType = "faulty";
    stream("s");
    append("s", "0", "1");
    Map<String, String> props = props("s");
    props.put(QueueSourceConfig.RETRY_TIMEOUT_MS_CONFIG, "300");
    QueueSourceTask task = start(props);
    List<SourceRecord> records = task.poll();
    assertThat(values(records)).containsExactly("0", "1");
    records.forEach(r -> task.commitRecord(r, accepted(r)));
    await("the progress is in the group")
        .atMost(Duration.ofSeconds(10))
        .until(() -> group("s").committed() == 2);

    FaultyStoreProvider.READ_FAILURE.set(
        new QueueStoreException("s", "database unreachable [SQLSTATE 08001]", null));
    long failing = System.nanoTime();
    List<Throwable> thrown = new ArrayList<>();
    await("the retry budget is spent")
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              try {
                task.poll();
              } catch (ConnectException e) {
                thrown.add(e);
                return !(e instanceof RetriableException);
              }
              return false;
            });
    long failedAfterMs = (System.nanoTime() - failing) / 1_000_000;
    assertThat(failedAfterMs).isGreaterThanOrEqualTo(300);
    assertThat(thrown.subList(0, thrown.size() - 1))
        .as("failures within the budget")
        .isNotEmpty()
        .allSatisfy(e -> assertThat(e).isInstanceOf(RetriableException.class));
    assertThat(thrown.get(thrown.size() - 1))
        .hasMessageStartingWith("giving up on the store faulty:" + storeName + ": ")
        .hasMessageContaining("queue.retry.timeout.ms=300")
        .hasMessageEndingWith("Last error: database unreachable [SQLSTATE 08001]");
    task.stop();

    // the store is back; the restarted task goes on after what Kafka accepted
    FaultyStoreProvider.READ_FAILURE.set(null);
    append("s", "2");
    QueueSourceTask restarted = start(props);
    List<SourceRecord> later = new ArrayList<>();
    await("the restarted task reads on")
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              List<SourceRecord> got = restarted.poll();
              if (got != null) {
                later.addAll(got);
              }
              return !later.isEmpty();
            });
    assertThat(values(later)).containsExactly("2");
  }
}
