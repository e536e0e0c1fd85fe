package io.queuebridge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.AckDurability;
import io.queuebridge.core.config.PeriodicScheduler;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.group.ConsumerRemovedListener;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** {@link QueueManagerConfig}: defaults and validation (BEHAVIOUR M-CONFIG). */
class QueueManagerConfigTest {

  @Test
  void defaultsAreThoseOfTheSpecification() {
    QueueManagerConfig c = QueueManagerConfig.defaults();
    assertThat(c.visibilityTimeout())
        .as("defer to each queue's deliveryTimeout (BEHAVIOUR L-LIMITS)")
        .isZero();
    assertThat(c.maxDeliveryCount()).isEqualTo(5);
    assertThat(c.claimBatchSize()).isEqualTo(10);
    assertThat(c.autoCommitInterval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.deliveryBatchSize()).isEqualTo(100);
    assertThat(c.consumerTimeout()).isEqualTo(Duration.ofMinutes(2));
    assertThat(c.dlqTopicPrefix()).isEqualTo("$dlq/");
    assertThat(c.maxPelSize()).isEqualTo(100_000);
    assertThat(c.retentionCheckInterval()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.captureWorkers()).isEqualTo(4);
    assertThat(c.captureQueueDepth()).isEqualTo(1024);
    assertThat(c.captureDrainTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.ackDurability()).isEqualTo(AckDurability.BUFFERED);
    assertThat(c.queueConfigs()).isEmpty();
    assertThat(c.protectedQueueContracts()).isEmpty();
    assertThat(c.clock()).isNotNull();
    assertThat(c.deliveryWorkers()).isEqualTo(4);
    assertThat(c.deliveryDrainTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.scheduler()).as("the manager's own thread").isNull();
    assertThat(c.onConsumerRemoved()).isNull();
  }

  @Test
  void zeroVisibilityDefersToTheQueueAndAPositiveOneIsAManagerWideOverride() {
    assertThat(QueueManagerConfig.builder().visibilityTimeout(Duration.ZERO).build())
        .extracting(QueueManagerConfig::visibilityTimeout)
        .isEqualTo(Duration.ZERO);
    assertThat(QueueManagerConfig.builder().visibilityTimeout(Duration.ofSeconds(7)).build())
        .extracting(QueueManagerConfig::visibilityTimeout)
        .isEqualTo(Duration.ofSeconds(7));
  }

  @Test
  void nonPositiveDeliverySettingsMeanTheDefault() {
    QueueManagerConfig c =
        QueueManagerConfig.builder().deliveryWorkers(0).deliveryDrainTimeout(null).build();
    assertThat(c.deliveryWorkers()).isEqualTo(4);
    assertThat(c.deliveryDrainTimeout()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void nonPositiveCaptureSettingsMeanTheDefault() {
    QueueManagerConfig c =
        QueueManagerConfig.builder()
            .captureWorkers(0)
            .captureQueueDepth(-3)
            .captureDrainTimeout(Duration.ofSeconds(-1))
            .build();
    assertThat(c.captureWorkers()).isEqualTo(4);
    assertThat(c.captureQueueDepth()).isEqualTo(1024);
    assertThat(c.captureDrainTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(QueueManagerConfig.builder().captureDrainTimeout(Duration.ZERO).build())
        .extracting(QueueManagerConfig::captureDrainTimeout)
        .isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void emptyDlqPrefixMeansTheDefault() {
    assertThat(QueueManagerConfig.builder().dlqTopicPrefix("").build().dlqTopicPrefix())
        .isEqualTo("$dlq/");
    assertThat(QueueManagerConfig.builder().dlqTopicPrefix("dead/").build().dlqTopicPrefix())
        .isEqualTo("dead/");
  }

  @Test
  void defaultAckDurabilityMeansBuffered() {
    assertThat(
            QueueManagerConfig.builder()
                .ackDurability(AckDurability.DEFAULT)
                .build()
                .ackDurability())
        .isEqualTo(AckDurability.BUFFERED);
    assertThat(
            QueueManagerConfig.builder().ackDurability(AckDurability.FSYNC).build().ackDurability())
        .isEqualTo(AckDurability.FSYNC);
  }

  @Test
  void negativeAutoCommitIntervalIsRejectedZeroAllowed() {
    assertThat(
            QueueManagerConfig.builder()
                .autoCommitInterval(Duration.ZERO)
                .build()
                .autoCommitInterval())
        .isZero();
    assertRejected(
        b -> b.autoCommitInterval(Duration.ofMillis(-1)), "autoCommitInterval", "-0.001");
  }

  @Test
  void consumerTimeoutAndRetentionIntervalMustBePositive() {
    assertRejected(b -> b.consumerTimeout(Duration.ZERO), "consumerTimeout", "PT0S");
    assertRejected(b -> b.retentionCheckInterval(Duration.ZERO), "retentionCheckInterval", "PT0S");
    assertRejected(b -> b.visibilityTimeout(Duration.ofSeconds(-1)), "visibilityTimeout", "-1");
  }

  @Test
  void countsMustBePositiveAndPelCapNonNegative() {
    assertRejected(b -> b.maxDeliveryCount(0), "maxDeliveryCount", "0");
    assertRejected(b -> b.claimBatchSize(-1), "claimBatchSize", "-1");
    assertRejected(b -> b.deliveryBatchSize(0), "deliveryBatchSize", "0");
    assertRejected(b -> b.maxPelSize(-1), "maxPelSize", "-1");
    assertThat(QueueManagerConfig.builder().maxPelSize(0).build().maxPelSize()).isZero();
  }

  @Test
  void queueConfigsAreValidatedAndNamesUnique() {
    QueueConfig bad = QueueConfig.durable("orders").maxDepth(0).build();
    assertThatThrownBy(() -> QueueManagerConfig.builder().queueConfigs(List.of(bad)).build())
        .isInstanceOfSatisfying(
            InvalidConfigException.class, e -> assertThat(e.field()).isEqualTo("queueConfigs[0]"))
        .hasMessageContaining("orders")
        .hasMessageContaining("maxDepth");
    QueueConfig a = QueueConfig.durable("orders").build();
    assertThatThrownBy(() -> QueueManagerConfig.builder().queueConfigs(List.of(a, a)).build())
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e -> assertThat(e.field()).isEqualTo("queueConfigs[1].name"))
        .hasMessageContaining("orders");
  }

  @Test
  void invalidContractsDoNotFailTheConfig() {
    QueueConfig notAStream = QueueConfig.durable("s").build();
    QueueManagerConfig c =
        QueueManagerConfig.builder().protectedQueueContracts(List.of(notAStream)).build();
    assertThat(c.protectedQueueContracts()).containsExactly(notAStream);
  }

  @Test
  void toBuilderKeepsEveryValue() {
    Clock clock = MutableClock.at("2026-01-01T00:00:00Z");
    PeriodicScheduler scheduler = (name, period, task) -> () -> {};
    ConsumerRemovedListener listener = (q, g, ids) -> {};
    QueueManagerConfig c =
        QueueManagerConfig.builder()
            .captureWorkers(2)
            .captureQueueDepth(8)
            .ackDurability(AckDurability.FSYNC)
            .dlqTopicPrefix("d/")
            .clock(clock)
            .queueConfigs(List.of(QueueConfig.durable("q").build()))
            .deliveryWorkers(3)
            .deliveryDrainTimeout(Duration.ofSeconds(9))
            .scheduler(scheduler)
            .onConsumerRemoved(listener)
            .build();
    QueueManagerConfig copy = c.toBuilder().build();
    assertThat(copy.deliveryWorkers()).isEqualTo(3);
    assertThat(copy.deliveryDrainTimeout()).isEqualTo(Duration.ofSeconds(9));
    assertThat(copy.scheduler()).isSameAs(scheduler);
    assertThat(copy.onConsumerRemoved()).isSameAs(listener);
    assertThat(copy.captureWorkers()).isEqualTo(2);
    assertThat(copy.captureQueueDepth()).isEqualTo(8);
    assertThat(copy.ackDurability()).isEqualTo(AckDurability.FSYNC);
    assertThat(copy.dlqTopicPrefix()).isEqualTo("d/");
    assertThat(copy.clock()).isSameAs(clock);
    assertThat(copy.queueConfigs()).isEqualTo(c.queueConfigs());
  }

  private static void assertRejected(
      UnaryOperator<QueueManagerConfig.Builder> change, String field, String value) {
    assertThatThrownBy(() -> change.apply(QueueManagerConfig.builder()).build())
        .isInstanceOfSatisfying(
            InvalidConfigException.class, e -> assertThat(e.field()).isEqualTo(field))
        .hasMessageContaining(field)
        .hasMessageContaining(value);
  }
}
