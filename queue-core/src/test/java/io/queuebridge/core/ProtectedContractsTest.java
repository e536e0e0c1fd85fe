package io.queuebridge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.config.AckDurability;
import io.queuebridge.core.config.DlqConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.config.RetentionPolicy;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.errors.DurableSyncUnsupportedException;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException.FieldMismatch;
import io.queuebridge.core.errors.ProtectedQueueMutationException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.PublishRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Protected queue contracts (BEHAVIOUR Q-PROT, F-DRIFT). */
class ProtectedContractsTest {
  private static final QueueConfig EVENTS =
      QueueConfig.reservedStream("events")
          .topics("orders/#", "payments/#")
          .maxMessageSize(1000)
          .messageTtl(Duration.ZERO)
          .retention(new RetentionPolicy(Duration.ofDays(7), 1 << 20, 5000))
          .build();
  private static final QueueConfig AUDIT =
      QueueConfig.reservedStream("audit").maxMessageSize(500).build();

  private final RecordingStore store = new RecordingStore().durableSync(true);
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private QueueManager manager = manager(List.of());

  private QueueManager manager(List<QueueConfig> contracts) {
    return new QueueManager(
        store, QueueManagerConfig.builder().protectedQueueContracts(contracts).build());
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    store.unblockAll();
    manager.stop();
    executor.shutdownNow();
    assertThat(executor.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    store.close();
  }

  // --- the comparison -----------------------------------------------------------------------

  @Test
  void driftNamesEveryComparedFieldInConfigFileVocabularyWithStoredAndWantedValues() {
    QueueConfig persisted =
        QueueConfig.durable("events")
            .topics("payments/#", "orders/#")
            .type(QueueType.CLASSIC)
            .durable(false)
            .reserved(false)
            .retention(new RetentionPolicy(Duration.ofDays(1), 2, 3))
            .maxMessageSize(999)
            .messageTtl(Duration.ofHours(2))
            .maxDelay(Duration.ofDays(30))
            .build();
    assertThatThrownBy(() -> QueueManager.validateProtectedQueueContract(EVENTS, persisted))
        .isInstanceOfSatisfying(
            ProtectedQueueContractDriftException.class,
            e -> {
              assertThat(e.queue()).isEqualTo("events");
              assertThat(e.mismatches())
                  .containsExactly(
                      new FieldMismatch(
                          "topics", "[payments/#, orders/#]", "[orders/#, payments/#]"),
                      new FieldMismatch("type", "classic", "stream"),
                      new FieldMismatch("durable", "false", "true"),
                      new FieldMismatch("reserved", "false", "true"),
                      new FieldMismatch("retention.max_age", "PT24H", "PT168H"),
                      new FieldMismatch("retention.max_length_bytes", "2", "1048576"),
                      new FieldMismatch("retention.max_length_messages", "3", "5000"),
                      new FieldMismatch("limits.max_message_size", "999", "1000"),
                      new FieldMismatch("limits.message_ttl", "PT2H", "PT0S"),
                      new FieldMismatch("limits.max_delay", "PT720H", "PT168H"));
            })
        .hasMessageContaining("limits.max_message_size: stored 999, configured 1000");
    assertThatThrownBy(
            () ->
                QueueManager.validateProtectedQueueContract(
                    EVENTS, EVENTS.toBuilder().name("other").build()))
        .isInstanceOfSatisfying(
            ProtectedQueueContractDriftException.class,
            e ->
                assertThat(e.mismatches())
                    .containsExactly(new FieldMismatch("name", "other", "events")));
  }

  @Test
  void excludedFieldsMaxDepthAboveAllAreNotCompared() {
    QueueConfig persisted =
        EVENTS.toBuilder()
            .maxDepth(7)
            .primaryGroup("g")
            .ackDurability(AckDurability.FSYNC)
            .dlq(DlqConfig.DISABLED)
            .retryPolicy(new RetryPolicy(1, Duration.ZERO, Duration.ZERO, 1.0, Duration.ZERO))
            .deliveryTimeout(Duration.ofSeconds(1))
            .batchSize(1)
            .heartbeatTimeout(Duration.ofSeconds(1))
            .expiresAfter(Duration.ofMinutes(1))
            .build();
    assertThatCode(() -> QueueManager.validateProtectedQueueContract(EVENTS, persisted))
        .doesNotThrowAnyException();
  }

  @Test
  void contractMustBeAReservedDurableStreamWithAPositiveMaxMessageSize() {
    assertInvalidContract(EVENTS.toBuilder().type(QueueType.CLASSIC).build(), "type");
    assertInvalidContract(EVENTS.toBuilder().durable(false).build(), "durable");
    assertInvalidContract(EVENTS.toBuilder().reserved(false).build(), "reserved");
    assertInvalidContract(EVENTS.toBuilder().maxMessageSize(0).build(), "limits.max_message_size");
    assertInvalidContract(EVENTS.toBuilder().name("").build(), "name");
  }

  private void assertInvalidContract(QueueConfig contract, String field) {
    assertThatThrownBy(() -> QueueManager.validateProtectedQueueContract(contract, EVENTS))
        .isInstanceOfSatisfying(
            InvalidConfigException.class, e -> assertThat(e.field()).endsWith(field));
    assertThatThrownBy(() -> manager.replaceProtectedQueueContracts(List.of(contract)))
        .isInstanceOf(InvalidConfigException.class);
  }

  // --- validation against storage -----------------------------------------------------------

  @Test
  void invalidConfiguredContractsDoNotFailConstructionButFailValidationAndStart() {
    QueueConfig invalid = EVENTS.toBuilder().type(QueueType.CLASSIC).build();
    manager = manager(List.of(invalid, EVENTS));
    assertThat(manager.protectedQueueContracts()).isEmpty();
    assertThatThrownBy(manager::validateProtectedQueueContracts)
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("events");
    assertThatThrownBy(manager::start).isInstanceOf(InvalidConfigException.class);
    assertThatThrownBy(() -> manager(List.of(AUDIT, AUDIT)).validateProtectedQueueContracts())
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("one contract per queue name");
  }

  @Test
  void replaceClearsTheRememberedBuildError() {
    manager = manager(List.of(EVENTS.toBuilder().durable(false).build()));
    store.delegate().createQueue(EVENTS);
    manager.replaceProtectedQueueContracts(List.of(EVENTS));
    assertThatCode(manager::validateProtectedQueueContracts).doesNotThrowAnyException();
  }

  @Test
  void validationNeedsRealDurableSyncOnlyWhenContractsExist() {
    store.durableSync(false);
    assertThatCode(manager::validateProtectedQueueContracts).doesNotThrowAnyException();
    store.delegate().createQueue(EVENTS);
    manager = manager(List.of(EVENTS));
    assertThatThrownBy(manager::validateProtectedQueueContracts)
        .isInstanceOf(DurableSyncUnsupportedException.class);
  }

  @Test
  void missingProtectedQueueIsDriftNamingIt() {
    manager = manager(List.of(EVENTS));
    assertThatThrownBy(manager::validateProtectedQueueContracts)
        .isInstanceOfSatisfying(
            ProtectedQueueContractDriftException.class,
            e ->
                assertThat(e.mismatches())
                    .containsExactly(new FieldMismatch("name", "(missing)", "events")));
  }

  @Test
  void contractsAreValidatedInNameOrder() {
    manager = manager(List.of(EVENTS, AUDIT)); // both missing: "audit" sorts first
    assertThatThrownBy(manager::validateProtectedQueueContracts)
        .isInstanceOfSatisfying(
            ProtectedQueueContractDriftException.class,
            e -> assertThat(e.queue()).isEqualTo("audit"));
  }

  @Test
  void unreadableStoredConfigIsDriftKeepingTheCause() {
    store.delegate().createQueue(EVENTS);
    manager = manager(List.of(EVENTS));
    QueueStoreException cause = new QueueStoreException("events", "io", null);
    store.failGetQueue("events", () -> cause);
    assertThatThrownBy(manager::validateProtectedQueueContracts)
        .isInstanceOf(ProtectedQueueContractDriftException.class)
        .hasCause(cause);
  }

  @Test
  void replaceValidatesTheNewSetAgainstStorageThenSwaps() {
    store.delegate().createQueue(EVENTS);
    manager.replaceProtectedQueueContracts(List.of(EVENTS));
    assertThat(manager.protectedQueueContracts()).containsExactly(EVENTS);

    // A failing replace (audit missing) leaves the registry as it was.
    assertThatThrownBy(() -> manager.replaceProtectedQueueContracts(List.of(EVENTS, AUDIT)))
        .isInstanceOf(ProtectedQueueContractDriftException.class);
    assertThat(manager.protectedQueueContracts()).containsExactly(EVENTS);

    manager.replaceProtectedQueueContracts(List.of());
    assertThat(manager.protectedQueueContracts()).isEmpty();
  }

  @Test
  void replaceBuildErrorsComeBeforeAnyStorageRead() {
    assertThatThrownBy(() -> manager.replaceProtectedQueueContracts(List.of(EVENTS, EVENTS)))
        .isInstanceOf(InvalidConfigException.class);
    assertThat(store.calls()).isEmpty();
  }

  @Test
  void narrowProtectedQueueContractsDoesNoStorageIo() {
    store.delegate().createQueue(EVENTS);
    store.delegate().createQueue(AUDIT);
    manager.replaceProtectedQueueContracts(List.of(EVENTS, AUDIT));
    store.clearCalls();
    Supplier<RuntimeException> down = () -> new QueueStoreException(null, "store down", null);
    store.failGetQueue("events", down);
    store.failGetQueue("audit", down);

    manager.narrowProtectedQueueContracts(List.of(AUDIT));

    assertThat(manager.protectedQueueContracts()).containsExactly(AUDIT);
    assertThat(store.calls()).isEmpty();
  }

  @Test
  void narrowRefusesAContractNotInstalledOrDifferentAndChangesNothing() {
    store.delegate().createQueue(EVENTS);
    manager.replaceProtectedQueueContracts(List.of(EVENTS));
    assertThatThrownBy(() -> manager.narrowProtectedQueueContracts(List.of(AUDIT)))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("audit")
        .hasMessageContaining("already installed");
    assertThatThrownBy(
            () ->
                manager.narrowProtectedQueueContracts(
                    List.of(EVENTS.toBuilder().maxMessageSize(1).build())))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("limits.max_message_size");
    assertThat(manager.protectedQueueContracts()).containsExactly(EVENTS);
    // Narrowing to an identical contract whose excluded fields differ is fine.
    manager.narrowProtectedQueueContracts(List.of(EVENTS.toBuilder().maxDepth(1).build()));
    assertThat(manager.protectedQueueContracts()).hasSize(1);
  }

  @Test
  void protectedQueueContractsIsAnUnmodifiableSnapshot() {
    store.delegate().createQueue(EVENTS);
    manager.replaceProtectedQueueContracts(List.of(EVENTS));
    List<QueueConfig> snapshot = manager.protectedQueueContracts();
    manager.replaceProtectedQueueContracts(List.of());
    assertThat(snapshot).containsExactly(EVENTS);
    assertThatThrownBy(() -> snapshot.add(AUDIT)).isInstanceOf(UnsupportedOperationException.class);
  }

  // --- declare / check (the sink's stream declaration) --------------------------------------

  @Test
  void declareCreatesAnAbsentStreamAndRegistersItsContractIdempotently() throws Exception {
    manager.declareProtectedStream(EVENTS);
    manager.declareProtectedStream(EVENTS);
    assertThat(manager.getQueue("events")).isEqualTo(EVENTS);
    assertThat(manager.protectedQueueContracts()).containsExactly(EVENTS);
    assertThat(store.calls("createQueue")).containsExactly("createQueue:events");
    assertThat(manager.publishToDurableStream("events", PublishRequest.of("orders/1", new byte[1])))
        .isZero();
  }

  @Test
  void declareKeepsTheContractsOfOtherStreams() {
    manager.declareProtectedStream(AUDIT);
    manager.declareProtectedStream(EVENTS);
    assertThat(manager.protectedQueueContracts()).containsExactlyInAnyOrder(AUDIT, EVENTS);
    assertThatCode(manager::validateProtectedQueueContracts).doesNotThrowAnyException();
  }

  @Test
  void declareNeverChangesADriftedStream() {
    QueueConfig drifted = EVENTS.toBuilder().maxMessageSize(10).build();
    store.delegate().createQueue(drifted);
    assertThatThrownBy(() -> manager.declareProtectedStream(EVENTS))
        .isInstanceOfSatisfying(
            ProtectedQueueContractDriftException.class,
            e ->
                assertThat(e.mismatches())
                    .containsExactly(new FieldMismatch("limits.max_message_size", "10", "1000")));
    assertThat(manager.getQueue("events")).isEqualTo(drifted);
    assertThat(manager.protectedQueueContracts()).isEmpty();
    assertThat(store.calls("createQueue", "updateQueue")).isEmpty();
  }

  @Test
  void declareRefusesADifferentContractForARegisteredName() {
    manager.declareProtectedStream(EVENTS);
    assertThatThrownBy(
            () -> manager.declareProtectedStream(EVENTS.toBuilder().topics("other/#").build()))
        .isInstanceOf(ProtectedQueueMutationException.class)
        .hasMessageContaining("topics");
    assertThat(manager.protectedQueueContracts()).containsExactly(EVENTS);
  }

  @Test
  void declareNeedsAStoreWithDurableSync() {
    store.durableSync(false);
    assertThatThrownBy(() -> manager.declareProtectedStream(EVENTS))
        .isInstanceOf(DurableSyncUnsupportedException.class);
    assertThat(store.calls("createQueue")).isEmpty();
    assertThat(manager.protectedQueueContracts()).isEmpty();
  }

  @Test
  void checkProtectedStreamReportsDriftWithoutChangingAnything() {
    assertThatCode(() -> manager.checkProtectedStream(EVENTS)).doesNotThrowAnyException();
    store.delegate().createQueue(EVENTS.toBuilder().topics("x").build());
    assertThatThrownBy(() -> manager.checkProtectedStream(EVENTS))
        .isInstanceOfSatisfying(
            ProtectedQueueContractDriftException.class,
            e ->
                assertThat(e.mismatches())
                    .extracting(FieldMismatch::field)
                    .containsExactly("topics"));
    assertThatThrownBy(
            () -> manager.checkProtectedStream(EVENTS.toBuilder().type(QueueType.CLASSIC).build()))
        .isInstanceOf(InvalidConfigException.class);
    assertThat(store.calls("createQueue", "updateQueue")).isEmpty();
    assertThat(manager.protectedQueueContracts()).isEmpty();
  }

  // --- mutation blocking --------------------------------------------------------------------

  @Test
  void createOfAProtectedQueueMustEqualItsContractOnComparedFields() {
    manager = manager(List.of(EVENTS));
    assertThatThrownBy(() -> manager.createQueue(EVENTS.toBuilder().topics("other/#").build()))
        .isInstanceOfSatisfying(
            ProtectedQueueMutationException.class, e -> assertThat(e.queue()).isEqualTo("events"))
        .hasMessageContaining("topics");
    assertThat(store.calls("createQueue")).isEmpty();
    manager.createQueue(EVENTS.toBuilder().maxDepth(10).build()); // excluded field may differ
    assertThat(manager.getQueue("events").maxDepth()).isEqualTo(10);
  }

  @Test
  void updateOfAProtectedQueueMayChangeOnlyExcludedFields() {
    manager = manager(List.of(EVENTS));
    manager.createQueue(EVENTS);
    manager.updateQueue(EVENTS.toBuilder().maxDepth(42).build());
    assertThat(manager.getQueue("events").maxDepth()).isEqualTo(42);
    store.clearCalls();
    assertThatThrownBy(
            () ->
                manager.updateQueue(
                    EVENTS.toBuilder().retention(RetentionPolicy.NONE).maxDepth(1).build()))
        .isInstanceOf(ProtectedQueueMutationException.class)
        .hasMessageContaining("retention.max_age");
    assertThat(store.calls("updateQueue")).isEmpty();
    assertThat(manager.getQueue("events").retention()).isEqualTo(EVENTS.retention());
  }

  @Test
  void deleteOfAProtectedQueueIsAlwaysRefused() {
    manager = manager(List.of(EVENTS));
    manager.createQueue(EVENTS);
    assertThatThrownBy(() -> manager.deleteQueue("events"))
        .isInstanceOf(ProtectedQueueMutationException.class)
        .hasMessageContaining("cannot be deleted");
    assertThatThrownBy(() -> manager.deleteQueue("events-never-created"))
        .isInstanceOf(QueueNotFoundException.class);
    assertThat(store.calls("deleteQueue")).isEmpty();
  }

  @Test
  void reservedQueuesWithoutAContractStayMutable() {
    manager.createQueue(AUDIT);
    manager.updateQueue(AUDIT.toBuilder().topics("x/#").maxMessageSize(1).build());
    assertThat(manager.getQueue("audit").topics()).containsExactly("x/#");
  }

  // --- the registry lock --------------------------------------------------------------------

  @Test
  void contractReplacementRacingMutationsNeverLetsOneInBetweenValidationAndSwap() throws Exception {
    store.delegate().createQueue(EVENTS);
    RecordingStore.Gate validating = store.blockGetQueue("events");
    CompletableFuture<Void> replace =
        CompletableFuture.runAsync(
            () -> manager.replaceProtectedQueueContracts(List.of(EVENTS)), executor);
    await().atMost(Duration.ofSeconds(10)).until(() -> validating.arrived.get() == 1);

    // Validation is under way with the write lock held. Under the old (empty) registry each of
    // these would pass; they must all wait and then see the new registry.
    AtomicReference<Thread> updater = new AtomicReference<>();
    AtomicReference<Thread> deleter = new AtomicReference<>();
    AtomicReference<Thread> creator = new AtomicReference<>();
    AtomicReference<Thread> publisher = new AtomicReference<>();
    CompletableFuture<Void> update =
        run(updater, () -> manager.updateQueue(EVENTS.toBuilder().topics("changed").build()));
    CompletableFuture<Void> delete = run(deleter, () -> manager.deleteQueue("events"));
    CompletableFuture<Void> create =
        run(creator, () -> manager.createQueue(QueueConfig.durable("other").build()));
    CompletableFuture<Long> publish =
        CompletableFuture.supplyAsync(
            () -> {
              publisher.set(Thread.currentThread());
              try {
                return manager.publishToDurableStream(
                    "events", PublishRequest.of("orders/1", new byte[] {1}));
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            },
            executor);
    for (AtomicReference<Thread> t : List.of(updater, deleter, creator, publisher)) {
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> t.get() != null && manager.waitsForContractLock(t.get()));
    }
    assertThat(store.calls("createQueue", "updateQueue", "deleteQueue", "appendAndSync"))
        .as("no mutation reached the store during validation")
        .isEmpty();

    validating.open();
    replace.get(10, TimeUnit.SECONDS);

    assertThatThrownBy(() -> update.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(ProtectedQueueMutationException.class);
    assertThatThrownBy(() -> delete.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(ProtectedQueueMutationException.class);
    create.get(10, TimeUnit.SECONDS);
    assertThat(publish.get(10, TimeUnit.SECONDS)).isZero(); // not QueueNotProtected
    assertThat(manager.getQueue("events").topics()).isEqualTo(EVENTS.topics());
    assertThat(store.calls("updateQueue", "deleteQueue")).isEmpty();
  }

  @Test
  void exactPublishNeverHoldsTheRegistryLockAcrossItsAppend() throws Exception {
    store.delegate().createQueue(EVENTS);
    manager.replaceProtectedQueueContracts(List.of(EVENTS));
    RecordingStore.Gate appending = store.blockAppends("events");
    CompletableFuture<Long> publish =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return manager.publishToDurableStream(
                    "events", PublishRequest.of("orders/1", new byte[] {1}));
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            },
            executor);
    await().atMost(Duration.ofSeconds(10)).until(() -> appending.arrived.get() == 1);

    // The append is stuck in the store; a reload and an admin mutation still go through.
    CompletableFuture.runAsync(
            () -> manager.replaceProtectedQueueContracts(List.of(EVENTS)), executor)
        .get(10, TimeUnit.SECONDS);
    manager.createQueue(QueueConfig.durable("other").build());

    appending.open();
    assertThat(publish.get(10, TimeUnit.SECONDS)).isZero();
  }

  private CompletableFuture<Void> run(AtomicReference<Thread> thread, Runnable action) {
    return CompletableFuture.runAsync(
        () -> {
          thread.set(Thread.currentThread());
          action.run();
        },
        executor);
  }
}
