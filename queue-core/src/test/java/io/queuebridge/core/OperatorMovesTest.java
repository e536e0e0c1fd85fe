package io.queuebridge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.GroupHasMembersException;
import io.queuebridge.core.errors.ProtectedQueueMutationException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.RedriveRefusedException;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.group.OffsetReset;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.message.TimestampType;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The operator's moves through the manager, on the memory and the file store: the dead-letter
 * redrive (BEHAVIOUR M-REDRIVE), the purge and the offset reset (BEHAVIOUR M-OPS). The manager is
 * never started, as in the command line.
 */
class OperatorMovesTest {
  @TempDir Path dir;
  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private Storage storage;
  private QueueManager manager;

  private void open(String kind) {
    open(kind, s -> s);
  }

  private void open(String kind, java.util.function.UnaryOperator<Storage> wrap) {
    storage = wrap.apply(kind.equals("file") ? QueueStores.file(dir) : QueueStores.memory());
    manager = new QueueManager(storage, QueueManagerConfig.builder().clock(clock).build());
  }

  @AfterEach
  void close() {
    if (storage != null) {
      storage.close();
    }
  }

  private ConsumerGroups groups() {
    return manager.consumerGroups();
  }

  private static PublishRequest request(int i) {
    return PublishRequest.builder("jobs")
        .key(("k" + i).getBytes(StandardCharsets.UTF_8))
        .value(new byte[] {(byte) i, 0, (byte) 0xff, (byte) 0x80})
        .header("h", new byte[] {1, (byte) i})
        .property("p", "v" + i)
        .timestamp(1_000L + i, TimestampType.CREATE_TIME)
        .build();
  }

  /** Publishes {@code n} messages to {@code jobs} and rejects them all into {@code $dlq/jobs}. */
  private List<Message> deadLetter(int n) throws InterruptedException {
    manager.createQueue(QueueConfig.durable("jobs").topics("jobs").build());
    for (int i = 0; i < n; i++) {
      manager.publishTo("jobs", request(i));
    }
    groups().join("jobs", "", "workers", "w1", CursorOption.earliest(GroupMode.QUEUE));
    List<GroupDelivery> got = groups().claimBatch("jobs", "workers", "w1", n);
    assertThat(got).hasSize(n);
    for (GroupDelivery d : got) {
      d.reject("poison");
    }
    groups().leave("jobs", "", "workers", "w1");
    List<Message> dead = storage.queues().readBatch("$dlq/jobs", 0, n + 1);
    assertThat(dead).hasSize(n);
    return dead;
  }

  private List<Message> redriven(long from) {
    return storage.queues().readBatch("jobs", from, 10_000).stream()
        .filter(m -> m.properties().containsKey(MessageProperties.REDRIVE_DLQ))
        .toList();
  }

  private static void assertSameContent(Message moved, Message dead) {
    assertThat(moved.key()).isEqualTo(dead.key());
    assertThat(moved.value()).isEqualTo(dead.value());
    assertThat(moved.headers()).isEqualTo(dead.headers());
    assertThat(moved.timestamp()).isEqualTo(dead.timestamp());
    assertThat(moved.properties())
        .containsAllEntriesOf(dead.properties())
        .containsEntry(MessageProperties.REDRIVE_DLQ, "$dlq/jobs")
        .containsEntry(MessageProperties.REDRIVE_DLQ_OFFSET, Long.toString(dead.offset()))
        .containsEntry(MessageProperties.REDRIVEN_AT, "2026-01-01T00:00:00Z");
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aRedriveMovesEveryDeadLetterBackToItsOriginByteForByte(String kind) throws Exception {
    open(kind);
    List<Message> dead = deadLetter(25);
    long tail = storage.queues().tail("jobs");
    List<RedrivenMessage> events = new ArrayList<>();

    RedriveReport report =
        manager.redriveDeadLetters(
            RedriveRequest.builder("$dlq/jobs").batchSize(10).build(), events::add);

    assertThat(report.moved()).isEqualTo(25);
    assertThat(report.alreadyMoved()).isZero();
    assertThat(report.remaining()).isZero();
    assertThat(report.byTarget()).containsExactly(Map.entry("jobs", 25L));
    assertThat(storage.queues().count("$dlq/jobs")).isZero();
    List<Message> moved = redriven(tail);
    assertThat(moved).hasSize(25);
    for (int i = 0; i < 25; i++) {
      assertSameContent(moved.get(i), dead.get(i));
      assertThat(events.get(i))
          .isEqualTo(
              new RedrivenMessage(
                  dead.get(i).offset(), "jobs", tail + i, RedrivenMessage.Outcome.MOVED));
    }
    // and they are claimable again
    groups().join("jobs", "", "again", "w2", CursorOption.atOffset(GroupMode.QUEUE, tail));
    assertThat(groups().claimBatch("jobs", "again", "w2", 100)).hasSize(25);
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aDryRunReportsAndChangesNothing(String kind) throws Exception {
    open(kind);
    deadLetter(5);
    long tail = storage.queues().tail("jobs");
    List<RedrivenMessage> events = new ArrayList<>();
    RedriveReport report =
        manager.redriveDeadLetters(
            RedriveRequest.builder("$dlq/jobs").dryRun(true).maxMessages(3).build(), events::add);
    assertThat(report.dryRun()).isTrue();
    assertThat(report.moved()).isEqualTo(3);
    assertThat(report.remaining()).isEqualTo(5);
    assertThat(events)
        .extracting(RedrivenMessage::outcome)
        .containsOnly(RedrivenMessage.Outcome.WOULD_MOVE)
        .hasSize(3);
    assertThat(storage.queues().tail("jobs")).isEqualTo(tail);
    assertThat(storage.queues().checkpoints("jobs")).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aRedriveStoppedAfterItsAppendsMovesNothingTwiceOnTheRerun(String kind) throws Exception {
    AtomicBoolean failTruncate = new AtomicBoolean(true);
    open(kind, s -> new TruncateFailing(s, failTruncate));
    List<Message> dead = deadLetter(12);
    long tail = storage.queues().tail("jobs");

    assertThatThrownBy(
            () ->
                manager.redriveDeadLetters(
                    RedriveRequest.builder("$dlq/jobs").batchSize(5).build(), e -> {}))
        .isInstanceOf(QueueStoreException.class);
    // the first batch is in the target, and still in the dead-letter queue
    assertThat(redriven(tail)).hasSize(5);
    assertThat(storage.queues().count("$dlq/jobs")).isEqualTo(12);

    failTruncate.set(false);
    List<RedrivenMessage> events = new ArrayList<>();
    RedriveReport report =
        manager.redriveDeadLetters(
            RedriveRequest.builder("$dlq/jobs").batchSize(5).build(), events::add);

    assertThat(report.alreadyMoved()).isEqualTo(5);
    assertThat(report.moved()).isEqualTo(7);
    assertThat(events.subList(0, 5))
        .extracting(RedrivenMessage::outcome)
        .containsOnly(RedrivenMessage.Outcome.ALREADY_MOVED);
    List<Message> moved = redriven(tail);
    assertThat(moved).hasSize(12);
    for (int i = 0; i < 12; i++) {
      assertSameContent(moved.get(i), dead.get(i));
    }
    assertThat(storage.queues().count("$dlq/jobs")).isZero();
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aCheckpointLeftByAnEarlierDeadLetterQueueOfTheSameNameIsIgnored(String kind)
      throws Exception {
    open(kind);
    deadLetter(3);
    manager.redriveDeadLetters(RedriveRequest.builder("$dlq/jobs").build(), e -> {});
    assertThat(storage.queues().checkpoints("jobs")).containsKey("redrive:$dlq/jobs");
    // the dead-letter queue is deleted; the next dead letters make a new one, offsets from 0
    manager.deleteQueue("$dlq/jobs");
    groups().join("jobs", "", "workers", "w1", CursorOption.resume(GroupMode.QUEUE));
    for (GroupDelivery d : groups().claimBatch("jobs", "workers", "w1", 100)) {
      d.reject("again");
    }
    long dead = storage.queues().count("$dlq/jobs");
    assertThat(dead).isEqualTo(3);
    assertThat(storage.queues().head("$dlq/jobs")).isZero();

    RedriveReport report =
        manager.redriveDeadLetters(RedriveRequest.builder("$dlq/jobs").build(), e -> {});
    assertThat(report.alreadyMoved()).isZero();
    assertThat(report.moved()).isEqualTo(3);
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aRedriveRefusesAProtectedTargetAndMessagesWithoutOrigin(String kind) throws Exception {
    open(kind);
    deadLetter(2);
    manager.createQueue(QueueConfig.reservedStream("audit").build());
    assertThatThrownBy(
            () ->
                manager.redriveDeadLetters(
                    RedriveRequest.builder("$dlq/jobs").target("audit").build(), e -> {}))
        .isInstanceOf(ProtectedQueueMutationException.class)
        .hasMessageContaining("audit");
    assertThatThrownBy(
            () ->
                manager.redriveDeadLetters(
                    RedriveRequest.builder("$dlq/jobs").target("$dlq/jobs").build(), e -> {}))
        .isInstanceOf(RedriveRefusedException.class)
        .hasMessageContaining("dead-letter queue itself");
    assertThatThrownBy(
            () ->
                manager.redriveDeadLetters(RedriveRequest.builder("$dlq/missing").build(), e -> {}))
        .isInstanceOf(QueueNotFoundException.class)
        .hasMessageContaining("$dlq/missing");
    manager.createQueue(QueueConfig.durable("plain").topics("plain").build());
    manager.publishTo("plain", request(1));
    assertThatThrownBy(
            () -> manager.redriveDeadLetters(RedriveRequest.builder("plain").build(), e -> {}))
        .isInstanceOf(RedriveRefusedException.class)
        .hasMessageContaining("offset 0")
        .hasMessageContaining(MessageProperties.DLQ_ORIGINAL_QUEUE);
    assertThat(storage.queues().count("$dlq/jobs")).isEqualTo(2);
    assertThat(storage.queues().count("audit")).isZero();
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aRedriveToAnotherQueueKeepsTheProvenance(String kind) throws Exception {
    open(kind);
    List<Message> dead = deadLetter(4);
    manager.createQueue(QueueConfig.durable("retry").topics("retry").build());
    RedriveReport report =
        manager.redriveDeadLetters(
            RedriveRequest.builder("$dlq/jobs").target("retry").maxMessages(3).build(), e -> {});
    assertThat(report.moved()).isEqualTo(3);
    assertThat(report.remaining()).isEqualTo(1);
    List<Message> moved = storage.queues().readBatch("retry", 0, 10);
    assertThat(moved).hasSize(3);
    assertThat(moved.get(0).properties())
        .containsEntry(MessageProperties.DLQ_ORIGINAL_QUEUE, "jobs")
        .containsEntry(
            MessageProperties.DLQ_REASON,
            dead.get(0).properties().get(MessageProperties.DLQ_REASON));
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aPurgeRemovesTheMessagesAndMovesTheGroupsPastThem(String kind) throws Exception {
    open(kind);
    manager.createQueue(QueueConfig.durable("jobs").topics("jobs").build());
    for (int i = 0; i < 10; i++) {
      manager.publishTo("jobs", request(i));
    }
    groups().join("jobs", "", "g", "c", CursorOption.earliest(GroupMode.QUEUE));
    List<GroupDelivery> held = groups().claimBatch("jobs", "g", "c", 3);
    assertThat(held).hasSize(3);

    assertThat(manager.purgeQueue("jobs")).isEqualTo(10);

    assertThat(storage.queues().count("jobs")).isZero();
    ConsumerGroupState g = groups().group("jobs", "g").orElseThrow();
    assertThat(g.pending()).isEmpty();
    assertThat(g.cursor()).isEqualTo(10);
    assertThat(g.committed()).isEqualTo(10);
    assertThat(groups().lag("jobs", "g")).isZero();
    manager.publishTo("jobs", request(10));
    assertThat(groups().claimBatch("jobs", "g", "c", 10))
        .singleElement()
        .satisfies(d -> assertThat(d.offset()).isEqualTo(10));

    manager.createQueue(QueueConfig.reservedStream("audit").build());
    assertThatThrownBy(() -> manager.purgeQueue("audit"))
        .isInstanceOf(ProtectedQueueMutationException.class)
        .hasMessageContaining("audit");
    assertThatThrownBy(() -> manager.purgeQueue("missing"))
        .isInstanceOf(QueueNotFoundException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void anOffsetResetIsPlannedThenAppliedAndRefusedWithMembers(String kind) throws Exception {
    open(kind);
    manager.createQueue(QueueConfig.durable("jobs").topics("jobs").build());
    for (int i = 0; i < 10; i++) {
      manager.publishTo("jobs", request(i));
    }
    groups().join("jobs", "", "g", "c", CursorOption.earliest(GroupMode.QUEUE));
    List<GroupDelivery> got = groups().claimBatch("jobs", "g", "c", 6);
    for (GroupDelivery d : got.subList(0, 4)) {
      d.ack();
    }
    ConsumerGroupState before = groups().group("jobs", "g").orElseThrow();

    OffsetReset plan = groups().planOffsetReset("jobs", "g", 2);
    assertThat(plan.executed()).isFalse();
    assertThat(plan.previousCursor()).isEqualTo(6);
    assertThat(plan.previousCommitted()).isEqualTo(4);
    assertThat(plan.offset()).isEqualTo(2);
    assertThat(plan.droppedPending()).isEqualTo(2);
    assertThat(plan.members()).containsExactly("c");
    assertThat(groups().group("jobs", "g").orElseThrow()).isEqualTo(before);

    assertThatThrownBy(() -> groups().resetOffsets("jobs", "g", 2, false))
        .isInstanceOf(GroupHasMembersException.class)
        .hasMessageContaining("[c]");
    assertThat(groups().group("jobs", "g").orElseThrow()).isEqualTo(before);

    groups().leave("jobs", "", "g", "c");
    OffsetReset done = groups().resetOffsets("jobs", "g", 2, false);
    assertThat(done.executed()).isTrue();
    ConsumerGroupState after = groups().group("jobs", "g").orElseThrow();
    assertThat(after.cursor()).isEqualTo(2);
    assertThat(after.committed()).isEqualTo(2);
    assertThat(after.pending()).isEmpty();
    groups().join("jobs", "", "g", "c2", CursorOption.resume(GroupMode.QUEUE));
    assertThat(groups().claimBatch("jobs", "g", "c2", 100))
        .extracting(GroupDelivery::offset)
        .containsExactly(2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
    // the old member's deliveries can no longer be settled
    assertThatThrownBy(() -> got.get(4).ack()).isInstanceOf(RuntimeException.class);

    OffsetReset clamped = groups().resetOffsets("jobs", "g", 1_000, true);
    assertThat(clamped.clamped()).isTrue();
    assertThat(clamped.offset()).isEqualTo(10);
    assertThat(groups().lag("jobs", "g")).isZero();
  }

  /** A store whose queue half fails {@code truncate} while the flag is set: a kill after append. */
  private static final class TruncateFailing implements Storage {
    private final Storage delegate;
    private final DurableQueueStore queues;

    TruncateFailing(Storage delegate, AtomicBoolean fail) {
      this.delegate = delegate;
      DurableQueueStore real = delegate.queues();
      this.queues =
          (DurableQueueStore)
              java.lang.reflect.Proxy.newProxyInstance(
                  DurableQueueStore.class.getClassLoader(),
                  new Class<?>[] {DurableQueueStore.class},
                  (proxy, method, args) -> {
                    if (method.getName().equals("truncate") && fail.get()) {
                      throw new QueueStoreException((String) args[0], "killed before truncate");
                    }
                    try {
                      return method.invoke(real, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                      throw e.getCause();
                    }
                  });
    }

    @Override
    public DurableQueueStore queues() {
      return queues;
    }

    @Override
    public ConsumerGroupStore groups() {
      return delegate.groups();
    }

    @Override
    public String description() {
      return delegate.description();
    }

    @Override
    public void close() {
      delegate.close();
    }
  }
}
