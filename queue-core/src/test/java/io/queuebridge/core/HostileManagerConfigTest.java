package io.queuebridge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.Named.named;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hostile numbers and strings in {@link QueueManagerConfig.Builder} as a table (BEHAVIOUR
 * M-CONFIG): each is refused by {@code build()} naming the field, the value and what was expected,
 * or builds a manager that publishes, claims, dead-letters, starts and stops cleanly. Before these
 * bounds a huge drain timeout made {@code stop()} throw {@link ArithmeticException} for ever, a
 * huge capture depth ran out of memory at construction, and a dead-letter prefix with {@code +}
 * failed every reject.
 */
class HostileManagerConfigTest {
  private static final Duration HUGE = Duration.ofSeconds(Long.MAX_VALUE);
  private static final AtomicInteger STORES = new AtomicInteger();

  private static Arguments refused(
      String label, UnaryOperator<QueueManagerConfig.Builder> change, String field, String says) {
    return arguments(named(label, change), field, says);
  }

  static Stream<Arguments> refusedConfigs() {
    return Stream.of(
        refused(
            "visibilityTimeout -1 ms",
            b -> b.visibilityTimeout(Duration.ofMillis(-1)),
            "visibilityTimeout",
            ">= 0"),
        refused(
            "visibilityTimeout huge",
            b -> b.visibilityTimeout(HUGE),
            "visibilityTimeout",
            "at most PT876000H"),
        refused("maxDeliveryCount 0", b -> b.maxDeliveryCount(0), "maxDeliveryCount", "> 0"),
        refused(
            "maxDeliveryCount Integer.MIN_VALUE",
            b -> b.maxDeliveryCount(Integer.MIN_VALUE),
            "maxDeliveryCount",
            "> 0"),
        refused("claimBatchSize -1", b -> b.claimBatchSize(-1), "claimBatchSize", "> 0"),
        refused(
            "autoCommitInterval -1 s",
            b -> b.autoCommitInterval(Duration.ofSeconds(-1)),
            "autoCommitInterval",
            ">= 0"),
        refused(
            "autoCommitInterval huge",
            b -> b.autoCommitInterval(HUGE),
            "autoCommitInterval",
            "at most"),
        refused("deliveryBatchSize 0", b -> b.deliveryBatchSize(0), "deliveryBatchSize", "> 0"),
        refused(
            "consumerTimeout 0", b -> b.consumerTimeout(Duration.ZERO), "consumerTimeout", "> 0"),
        refused("consumerTimeout huge", b -> b.consumerTimeout(HUGE), "consumerTimeout", "at most"),
        refused("maxPelSize -1", b -> b.maxPelSize(-1), "maxPelSize", ">= 0 (0 = unlimited)"),
        refused(
            "retentionCheckInterval -1 s",
            b -> b.retentionCheckInterval(Duration.ofSeconds(-1)),
            "retentionCheckInterval",
            "> 0"),
        refused(
            "retentionCheckInterval huge",
            b -> b.retentionCheckInterval(HUGE),
            "retentionCheckInterval",
            "at most"),
        refused(
            "captureDrainTimeout huge",
            b -> b.captureDrainTimeout(HUGE),
            "captureDrainTimeout",
            "at most"),
        refused(
            "deliveryDrainTimeout huge",
            b -> b.deliveryDrainTimeout(HUGE),
            "deliveryDrainTimeout",
            "at most"),
        refused(
            "captureWorkers 1025", b -> b.captureWorkers(1025), "captureWorkers", "at most 1024"),
        refused(
            "captureWorkers Integer.MAX_VALUE",
            b -> b.captureWorkers(Integer.MAX_VALUE),
            "captureWorkers",
            "at most 1024"),
        refused(
            "captureQueueDepth 2^20 + 1",
            b -> b.captureQueueDepth((1 << 20) + 1),
            "captureQueueDepth",
            "at most 1048576"),
        refused(
            "captureQueueDepth Integer.MAX_VALUE",
            b -> b.captureQueueDepth(Integer.MAX_VALUE),
            "captureQueueDepth",
            "at most 1048576"),
        refused(
            "dlqTopicPrefix with NUL",
            b -> b.dlqTopicPrefix("dlq\u0000/"),
            "dlqTopicPrefix",
            "U+0000 at index 3"),
        refused(
            "dlqTopicPrefix with `+`",
            b -> b.dlqTopicPrefix("dl+q/"),
            "dlqTopicPrefix",
            "no '+' or '#'"),
        refused(
            "dlqTopicPrefix with `#`",
            b -> b.dlqTopicPrefix("#/"),
            "dlqTopicPrefix",
            "no '+' or '#'"),
        refused(
            "dlqTopicPrefix with a lone surrogate",
            b -> b.dlqTopicPrefix("\uD800/"),
            "dlqTopicPrefix",
            "unpaired surrogate"),
        refused(
            "dlqTopicPrefix of 101 characters",
            b -> b.dlqTopicPrefix("d".repeat(101)),
            "dlqTopicPrefix",
            "at most 100 bytes"),
        refused(
            "dlqTopicPrefix of 10,000 characters",
            b -> b.dlqTopicPrefix("d".repeat(10_000)),
            "dlqTopicPrefix",
            "at most"));
  }

  @ParameterizedTest(name = "manager config {0}: refused")
  @MethodSource("refusedConfigs")
  void refusedNamingTheFieldTheValueAndTheExpectation(
      UnaryOperator<QueueManagerConfig.Builder> change, String field, String says) {
    Throwable t = catchThrowable(() -> change.apply(QueueManagerConfig.builder()).build());
    assertThat(t).isInstanceOf(InvalidConfigException.class);
    assertThat(((InvalidConfigException) t).field()).isEqualTo(field);
    assertThat(t.getMessage())
        .startsWith("invalid " + field + ": ")
        .contains("expected")
        .contains(says)
        .doesNotContain("\u0000")
        .hasSizeLessThan(400);
  }

  static Stream<Arguments> acceptedConfigs() {
    return Stream.of(
        arguments(
            named(
                "maxDeliveryCount Integer.MAX_VALUE",
                (UnaryOperator<QueueManagerConfig.Builder>)
                    b -> b.maxDeliveryCount(Integer.MAX_VALUE)),
            "$dlq/"),
        arguments(
            named(
                "maxPelSize Integer.MAX_VALUE",
                (UnaryOperator<QueueManagerConfig.Builder>) b -> b.maxPelSize(Integer.MAX_VALUE)),
            "$dlq/"),
        arguments(
            named(
                "claimBatchSize Integer.MAX_VALUE",
                (UnaryOperator<QueueManagerConfig.Builder>)
                    b -> b.claimBatchSize(Integer.MAX_VALUE)),
            "$dlq/"),
        arguments(
            named(
                "deliveryBatchSize Integer.MAX_VALUE",
                (UnaryOperator<QueueManagerConfig.Builder>)
                    b -> b.deliveryBatchSize(Integer.MAX_VALUE)),
            "$dlq/"),
        arguments(
            named(
                "visibilityTimeout 100 years",
                (UnaryOperator<QueueManagerConfig.Builder>)
                    b -> b.visibilityTimeout(QueueConfig.MAX_DURATION)),
            "$dlq/"),
        arguments(
            named(
                "consumerTimeout 100 years",
                (UnaryOperator<QueueManagerConfig.Builder>)
                    b -> b.consumerTimeout(QueueConfig.MAX_DURATION)),
            "$dlq/"),
        arguments(
            named(
                "captureWorkers -5 (the default)",
                (UnaryOperator<QueueManagerConfig.Builder>) b -> b.captureWorkers(-5)),
            "$dlq/"),
        arguments(
            named(
                "captureQueueDepth Integer.MIN_VALUE (the default)",
                (UnaryOperator<QueueManagerConfig.Builder>)
                    b -> b.captureQueueDepth(Integer.MIN_VALUE)),
            "$dlq/"),
        arguments(
            named(
                "drain timeouts negative (the defaults)",
                (UnaryOperator<QueueManagerConfig.Builder>)
                    b ->
                        b.captureDrainTimeout(Duration.ofSeconds(-1))
                            .deliveryDrainTimeout(Duration.ofSeconds(-1))),
            "$dlq/"),
        arguments(
            named(
                "dlqTopicPrefix empty (the default)",
                (UnaryOperator<QueueManagerConfig.Builder>) b -> b.dlqTopicPrefix("")),
            "$dlq/"),
        arguments(
            named(
                "dlqTopicPrefix `../dead/`",
                (UnaryOperator<QueueManagerConfig.Builder>) b -> b.dlqTopicPrefix("../dead/")),
            "../dead/"),
        arguments(
            named(
                "dlqTopicPrefix of 100 characters",
                (UnaryOperator<QueueManagerConfig.Builder>) b -> b.dlqTopicPrefix("d".repeat(100))),
            "d".repeat(100)));
  }

  @ParameterizedTest(name = "manager config {0}: works")
  @MethodSource("acceptedConfigs")
  void acceptedExtremesBuildAManagerThatWorks(
      UnaryOperator<QueueManagerConfig.Builder> change, String dlqPrefix) throws Exception {
    MutableClock clock = MutableClock.at("2026-03-01T12:00:00Z");
    QueueManagerConfig config =
        change
            .apply(QueueManagerConfig.builder().clock(clock).scheduler(new ManualScheduler(clock)))
            .build();
    try (Storage storage =
        QueueStores.open("memory", Map.of("name", "hostile-config-" + STORES.incrementAndGet()))) {
      QueueManager m = new QueueManager(storage, config);
      m.createQueue(QueueConfig.durable("q").build());
      m.publishTo("q", PublishRequest.of("t", new byte[] {7}));
      m.subscribe("q", "", "c1", "g");
      List<GroupDelivery> got = m.consumerGroups().claimBatch("q", "g", "c1", 0);
      assertThat(got)
          .singleElement()
          .satisfies(d -> assertThat(d.message().value()).containsExactly(7));
      got.get(0).reject("hostile");
      assertThat(storage.queues().read(dlqPrefix + "q", 0).value()).containsExactly(7);
      m.start();
      m.stop();
      assertThat(m.shutdownComplete()).isTrue();
    }
  }
}
