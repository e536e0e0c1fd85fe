package io.queuebridge.core;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.Storage;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Delayed delivery through the manager (BEHAVIOUR Q-DELAY), on an injected clock: a classic queue
 * hands a delayed message to nobody before its due time and to a claimer at it; due messages come
 * out earliest first whatever their offsets; a stream reader sees the message at once with its due
 * time; delays the queue does not accept are refused naming the field and the limit; scheduled
 * messages survive a reopen and do not count against the PEL cap.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class DelayedDeliveryTest {
  @TempDir Path dir;

  private final ManagerHarness harness = new ManagerHarness(() -> dir);
  private final MutableClock clock = harness.clock;

  @AfterEach
  void tearDown() {
    harness.close();
  }

  private Storage store(String kind) {
    return harness.store(kind);
  }

  private QueueManager manager(Storage storage) {
    return harness.manager(storage);
  }

  private QueueManager manager(Storage storage, UnaryOperator<QueueManagerConfig.Builder> tune) {
    return harness.manager(storage, tune);
  }

  private static PublishRequest delayed(String value, Duration delay) {
    return PublishRequest.builder("jobs").value(value.getBytes(UTF_8)).delay(delay).build();
  }

  private static PublishRequest plain(String value) {
    return PublishRequest.of("jobs", value.getBytes(UTF_8));
  }

  private static String text(GroupDelivery d) {
    return new String(d.message().valueUnsafe(), UTF_8);
  }

  private static List<String> claim(QueueManager m, String consumer, int n) {
    return m.consumerGroups().claimBatch("jobs", "g", consumer, n).stream()
        .map(DelayedDeliveryTest::text)
        .toList();
  }

  /** Claims up to {@code n} and acknowledges each, so none comes back after its visibility. */
  private static List<String> claimAndAck(QueueManager m, String consumer, int n) {
    List<String> out = new ArrayList<>();
    for (GroupDelivery d : m.consumerGroups().claimBatch("jobs", "g", consumer, n)) {
      out.add(text(d));
      d.ack();
    }
    return out;
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aMessageDelayedTwoSecondsIsClaimableAtItsDueTimeAndNotBefore(String kind) throws Exception {
    QueueManager m = manager(store(kind));
    m.createQueue(QueueConfig.durable("jobs").build());
    m.subscribe("jobs", "", "c1", "g");
    Instant published = clock.instant();
    assertThat(m.publishTo("jobs", delayed("later", Duration.ofSeconds(2)))).isZero();

    assertThat(claim(m, "c1", 10)).isEmpty();
    assertThat(m.consumerGroups().metrics().scheduled()).isEqualTo(1);
    clock.advance(Duration.ofSeconds(2).minusNanos(1));
    assertThat(claim(m, "c1", 10)).as("one nanosecond before the due time").isEmpty();
    clock.advance(Duration.ofNanos(1));
    List<GroupDelivery> due = m.consumerGroups().claimBatch("jobs", "g", "c1", 10);
    assertThat(due).extracting(DelayedDeliveryTest::text).containsExactly("later");
    GroupDelivery d = due.get(0);
    assertThat(d.deliveryCount()).as("a first delivery").isEqualTo(1);
    assertThat(d.message().properties())
        .containsEntry(MessageProperties.DELIVER_AT, published.plusSeconds(2).toString());
    assertThat(d.message().deliverAt()).isEqualTo(published.plusSeconds(2));
    assertThat(claim(m, "c1", 10)).as("held now, not handed out twice").isEmpty();
    d.ack();
    assertThat(m.consumerGroups().group("jobs", "g").orElseThrow().committed()).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void dueMessagesComeOutEarliestFirstWhateverTheirOffsets(String kind) throws Exception {
    QueueManager m = manager(store(kind));
    m.createQueue(QueueConfig.durable("jobs").build());
    m.subscribe("jobs", "", "c1", "g");
    m.publishTo("jobs", delayed("d50", Duration.ofSeconds(50)));
    m.publishTo("jobs", delayed("d10", Duration.ofSeconds(10)));
    m.publishTo("jobs", plain("now"));
    m.publishTo(
        "jobs",
        PublishRequest.builder("jobs")
            .value("d40".getBytes(UTF_8))
            .deliverAt(clock.instant().plusSeconds(40))
            .build());
    m.publishTo("jobs", delayed("d20", Duration.ofSeconds(20)));
    m.publishTo("jobs", delayed("d30", Duration.ofSeconds(30)));

    assertThat(claimAndAck(m, "c1", 10)).containsExactly("now");
    clock.advance(Duration.ofSeconds(25));
    assertThat(claimAndAck(m, "c1", 10)).containsExactly("d10", "d20");
    clock.advance(Duration.ofSeconds(60));
    assertThat(claimAndAck(m, "c1", 2)).containsExactly("d30", "d40");
    assertThat(claimAndAck(m, "c1", 2)).containsExactly("d50");
  }

  @Test
  void aDueTimeAtOrBeforeThePublishIsAnOrdinaryPublish() throws Exception {
    Storage s = store("memory");
    QueueManager m = manager(s);
    m.createQueue(QueueConfig.durable("jobs").build());
    m.subscribe("jobs", "", "c1", "g");
    m.publishTo("jobs", delayed("zero", Duration.ZERO));
    m.publishTo(
        "jobs",
        PublishRequest.builder("jobs")
            .value("past".getBytes(UTF_8))
            .deliverAt(clock.instant().minusSeconds(1))
            .build());
    m.publishTo(
        "jobs",
        PublishRequest.builder("jobs")
            .value("forged".getBytes(UTF_8))
            .property(MessageProperties.DELIVER_AT, "2100-01-01T00:00:00Z")
            .build());
    assertThat(claim(m, "c1", 10)).containsExactly("zero", "past", "forged");
    assertThat(s.queues().readBatch("jobs", 0, 10))
        .as("a publisher cannot set the reserved property itself")
        .allSatisfy(msg -> assertThat(msg.properties()).doesNotContainKey("x-deliver-at"));
  }

  @Test
  void aStreamReaderSeesADelayedMessageAtOnceInOffsetOrderWithItsDueTime() throws Exception {
    QueueManager m = manager(store("memory"));
    m.createQueue(QueueConfig.durable("jobs").type(QueueType.STREAM).build());
    Instant due = clock.instant().plus(Duration.ofHours(1));
    m.publishTo("jobs", delayed("first", Duration.ofHours(1)));
    m.publishTo("jobs", plain("second"));
    m.subscribe("jobs", "", "r1", "reader", CursorOption.earliest(GroupMode.STREAM));
    List<Message> read =
        m.consumerGroups().peek("jobs", "reader", "r1", 10).deliveries().stream()
            .map(GroupDelivery::message)
            .toList();
    assertThat(read)
        .extracting(msg -> new String(msg.valueUnsafe(), UTF_8))
        .containsExactly("first", "second");
    assertThat(read.get(0).deliverAt()).isEqualTo(due);
    assertThat(read.get(1).deliverAt()).isNull();
  }

  @Test
  void delaysTheQueueDoesNotAcceptAreRefusedNamingTheFieldAndTheLimitAndStoreNothing()
      throws Exception {
    Storage s = store("memory");
    QueueManager m = manager(s);
    m.createQueue(QueueConfig.durable("jobs").maxDelay(Duration.ofHours(1)).build());
    m.createQueue(QueueConfig.durable("ttl").messageTtl(Duration.ofMinutes(10)).build());
    m.createQueue(QueueConfig.durable("none").maxDelay(Duration.ZERO).build());

    assertThat(m.publishTo("jobs", delayed("edge", Duration.ofHours(1)))).isZero();
    assertThatThrownBy(() -> m.publishTo("jobs", delayed("over", Duration.ofHours(1).plusNanos(1))))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("invalid deliverAt")
        .hasMessageContaining("maxDelay (PT1H)")
        .hasMessageContaining("queue jobs");
    assertThatThrownBy(() -> m.publishTo("ttl", delayed("expired", Duration.ofMinutes(11))))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("messageTtl (PT10M)");
    assertThatThrownBy(() -> m.publishTo("none", delayed("any", Duration.ofSeconds(1))))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("maxDelay (PT0S)");
    assertThatThrownBy(() -> m.publishTo("jobs", delayed("far", Duration.ofDays(1_000_000_000L))))
        .as("a delay past what an instant holds")
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("maxDelay (PT1H)");
    assertThat(s.queues().tail("jobs")).isEqualTo(1);
    assertThat(s.queues().tail("ttl")).isZero();
    assertThat(s.queues().tail("none")).isZero();

    assertThatThrownBy(() -> PublishRequest.builder("jobs").delay(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("delay PT-1S is negative");
    assertThatThrownBy(
            () ->
                m.createQueue(QueueConfig.durable("bad").maxDelay(Duration.ofSeconds(-1)).build()))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("invalid maxDelay: PT-1S");
    assertThatThrownBy(
            () ->
                m.createQueue(
                    QueueConfig.durable("bad")
                        .maxDelay(QueueConfig.MAX_DURATION.plusSeconds(1))
                        .build()))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("invalid maxDelay");
  }

  @Test
  void scheduledMessagesSurviveAReopenOfTheFileStore() throws Exception {
    Storage first = store("file");
    QueueManager m = manager(first);
    m.createQueue(QueueConfig.durable("jobs").build());
    m.subscribe("jobs", "", "c1", "g");
    m.publishTo("jobs", delayed("read-before", Duration.ofMinutes(2)));
    assertThat(claim(m, "c1", 10)).isEmpty(); // read: now a scheduled entry
    m.publishTo("jobs", delayed("unread", Duration.ofMinutes(1)));
    m.stop();
    first.close();

    QueueManager again = manager(store("file"));
    again.subscribe("jobs", "", "c1", "g");
    clock.advance(Duration.ofSeconds(59));
    assertThat(claimAndAck(again, "c1", 10)).isEmpty();
    clock.advance(Duration.ofSeconds(1));
    assertThat(claimAndAck(again, "c1", 10)).containsExactly("unread");
    clock.advance(Duration.ofMinutes(1));
    assertThat(claimAndAck(again, "c1", 10)).containsExactly("read-before");
  }

  @Test
  void scheduledMessagesDoNotCountAgainstThePelCap() throws Exception {
    QueueManager m = manager(store("memory"), b -> b.maxPelSize(2));
    m.createQueue(QueueConfig.durable("jobs").build());
    m.subscribe("jobs", "", "c1", "g");
    for (int i = 0; i < 5; i++) {
      m.publishTo("jobs", delayed("later-" + i, Duration.ofMinutes(1)));
    }
    m.publishTo("jobs", plain("a"));
    m.publishTo("jobs", plain("b"));
    m.publishTo("jobs", plain("c"));
    assertThat(claim(m, "c1", 10)).containsExactly("a", "b");
    assertThat(m.consumerGroups().group("jobs", "g").orElseThrow().pending())
        .filteredOn(PendingEntry::isScheduled)
        .hasSize(5);
    assertThat(claim(m, "c1", 10)).as("two held: the cap").isEmpty();
  }

  @Test
  void aDueMessageIsStolenLikeAnyOtherWhenItsFirstClaimerGoesQuiet() throws Exception {
    QueueManager m = manager(store("memory"));
    m.createQueue(QueueConfig.durable("jobs").deliveryTimeout(Duration.ofSeconds(30)).build());
    m.subscribe("jobs", "", "c1", "g");
    m.subscribe("jobs", "", "c2", "g");
    m.publishTo("jobs", delayed("job", Duration.ofSeconds(5)));
    assertThat(claim(m, "c1", 1)).isEmpty();
    clock.advance(Duration.ofSeconds(5));
    assertThat(claim(m, "c1", 1)).containsExactly("job");
    clock.advance(Duration.ofSeconds(29));
    assertThat(claim(m, "c2", 1)).isEmpty();
    clock.advance(Duration.ofSeconds(1));
    List<GroupDelivery> stolen = m.consumerGroups().claimBatch("jobs", "g", "c2", 1);
    assertThat(stolen).extracting(DelayedDeliveryTest::text).containsExactly("job");
    assertThat(stolen.get(0).deliveryCount()).isEqualTo(2);
  }
}
