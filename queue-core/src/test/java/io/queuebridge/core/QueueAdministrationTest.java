package io.queuebridge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.errors.QueueStoreException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Queue administration through the manager (BEHAVIOUR M-ADMIN). */
class QueueAdministrationTest {
  private final RecordingStore store = new RecordingStore();
  private final RecordingScheduler scheduler = new RecordingScheduler();
  private final QueueManager manager = new QueueManager(store, QueueManagerConfig.defaults());

  {
    manager.deliveryScheduler(scheduler);
  }

  @AfterEach
  void tearDown() {
    manager.stop();
    store.close();
  }

  @Test
  void createQueueAppliesFullValidationBeforeTheStore() {
    assertThatThrownBy(() -> manager.createQueue(QueueConfig.durable("q").maxDepth(0).build()))
        .isInstanceOfSatisfying(
            InvalidConfigException.class, e -> assertThat(e.field()).isEqualTo("maxDepth"));
    assertThatThrownBy(() -> manager.createQueue(QueueConfig.durable("q").topics("a/#/b").build()))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("a/#/b");
    assertThatThrownBy(
            () ->
                manager.createQueue(
                    QueueConfig.durable("q").durable(false).expiresAfter(Duration.ZERO).build()))
        .isInstanceOfSatisfying(
            InvalidConfigException.class, e -> assertThat(e.field()).isEqualTo("expiresAfter"));
    assertThat(store.calls("createQueue")).isEmpty();
  }

  @Test
  void createQueueStoresTheConfigAndSchedulesDelivery() {
    QueueConfig q = QueueConfig.durable("orders").topics("orders/#").build();
    manager.createQueue(q);
    assertThat(manager.getQueue("orders")).isEqualTo(q);
    assertThat(manager.listQueues()).containsExactly(q);
    assertThat(scheduler.calls()).containsExactly("schedule:orders");
    assertThatThrownBy(() -> manager.createQueue(q))
        .isInstanceOf(QueueAlreadyExistsException.class)
        .hasMessageContaining("orders");
  }

  @Test
  void updateQueueRequiresAnExistingQueue() {
    assertThatThrownBy(() -> manager.updateQueue(QueueConfig.durable("missing").build()))
        .isInstanceOf(QueueNotFoundException.class)
        .hasMessageContaining("missing");
    assertThat(store.calls("updateQueue")).isEmpty();
  }

  @Test
  void updateQueueValidatesLikeCreate() {
    manager.createQueue(QueueConfig.durable("q").build());
    assertThatThrownBy(() -> manager.updateQueue(QueueConfig.durable("q").batchSize(-1).build()))
        .isInstanceOfSatisfying(
            InvalidConfigException.class, e -> assertThat(e.field()).isEqualTo("batchSize"));
    assertThat(store.calls("updateQueue")).isEmpty();
  }

  @Test
  void updateQueueReplacesTheConfigAndItsTopicRouting() {
    manager.createQueue(QueueConfig.durable("q").topics("a/#").build());
    QueueConfig updated = QueueConfig.durable("q").topics("b/#").maxDepth(7).build();
    manager.updateQueue(updated);
    assertThat(manager.getQueue("q")).isEqualTo(updated);
    assertThat(store.findMatchingQueues("b/x")).containsExactly("q");
    assertThat(store.findMatchingQueues("a/x")).isEmpty();
  }

  @Test
  void deleteQueueRemovesItAndUnschedulesDelivery() {
    manager.createQueue(QueueConfig.durable("q").build());
    manager.deleteQueue("q");
    assertThatThrownBy(() -> manager.getQueue("q")).isInstanceOf(QueueNotFoundException.class);
    assertThat(scheduler.calls()).containsExactly("schedule:q", "unschedule:q");
  }

  @Test
  void deleteUnknownQueueIsQueueNotFound() {
    assertThatThrownBy(() -> manager.deleteQueue("nope"))
        .isInstanceOf(QueueNotFoundException.class)
        .hasMessageContaining("nope");
    assertThat(store.calls("deleteQueue")).isEmpty();
  }

  @Test
  void getOrCreateQueueCreatesAnEphemeralDefaultMatchingEverything() {
    QueueConfig q = manager.getOrCreateQueue("jobs");
    assertThat(q.durable()).isFalse();
    assertThat(q.expiresAfter()).isEqualTo(QueueConfig.DEFAULT_EPHEMERAL_EXPIRY);
    assertThat(q.topics()).containsExactly("#");
    assertThat(manager.getOrCreateQueue("jobs2", "$queue/jobs2/#").topics())
        .containsExactly("$queue/jobs2/#");
  }

  @Test
  void getOrCreateQueueReturnsTheStoredConfigUnchanged() {
    QueueConfig existing = QueueConfig.durable("jobs").topics("x").build();
    manager.createQueue(existing);
    store.clearCalls();
    assertThat(manager.getOrCreateQueue("jobs", "other")).isEqualTo(existing);
    assertThat(store.calls("createQueue")).isEmpty();
  }

  @Test
  void getOrCreateQueueToleratesALostCreationRaceAndReReads() {
    QueueConfig winner = QueueConfig.durable("jobs").topics("won").build();
    store.beforeCreate("jobs", () -> store.delegate().createQueue(winner));
    assertThat(manager.getOrCreateQueue("jobs")).isEqualTo(winner);
  }

  @Test
  void getOrCreateQueuePropagatesOtherReadErrors() {
    store.failGetQueue("jobs", () -> new QueueStoreException("jobs", "disk busy", null));
    assertThatThrownBy(() -> manager.getOrCreateQueue("jobs"))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("disk busy");
    assertThat(store.calls("createQueue")).isEmpty();
  }

  @Test
  void foreignStoreExceptionsAreWrappedNamingTheQueueAndKeepingTheCause() {
    IllegalStateException bug = new IllegalStateException("store bug");
    store.failGetQueue("q", () -> bug);
    assertThatThrownBy(() -> manager.getQueue("q"))
        .isInstanceOfSatisfying(
            QueueStoreException.class, e -> assertThat(e.queue()).isEqualTo("q"))
        .hasMessageContaining("get queue q")
        .hasCause(bug);
  }

  @Test
  void listQueuesIsEmptyWithoutQueues() {
    assertThat(manager.listQueues()).isEqualTo(List.of());
  }
}
