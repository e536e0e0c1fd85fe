package io.queuebridge.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.AckDurability;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.errors.DurableSyncUnsupportedException;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueFullException;
import io.queuebridge.core.errors.QueueMessageTooLargeException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.MessageState;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.message.TimestampType;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The strict publish path with the acknowledgement policy, the limits and the message stamping
 * (BEHAVIOUR Q-PUB, Q-ACK, L-LIMITS, Q-MSG).
 */
class PublishTest {
  private final MutableClock clock = MutableClock.at("2026-03-01T12:00:00Z");
  private final RecordingStore store = new RecordingStore();
  private final RecordingScheduler scheduler = new RecordingScheduler();
  private final List<QueueManager> managers = new ArrayList<>();

  @AfterEach
  void tearDown() {
    managers.forEach(QueueManager::stop);
    store.close();
  }

  private QueueManager manager(AckDurability policy) {
    QueueManager m =
        new QueueManager(
            store, QueueManagerConfig.builder().clock(clock).ackDurability(policy).build());
    m.deliveryScheduler(scheduler);
    managers.add(m);
    return m;
  }

  private QueueManager manager() {
    return manager(AckDurability.BUFFERED);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static PublishRequest request(String topic, String value) {
    return PublishRequest.of(topic, bytes(value));
  }

  // --- routing ------------------------------------------------------------------------------

  @Test
  void publishAppendsToEveryMatchingQueue() throws Exception {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("a").topics("orders/#").build());
    m.createQueue(QueueConfig.durable("b").topics("#").build());
    m.createQueue(QueueConfig.durable("c").topics("other").build());
    m.publish(request("orders/1", "v"));
    assertThat(store.messages("a")).hasSize(1);
    assertThat(store.messages("b")).hasSize(1);
    assertThat(store.messages("c")).isEmpty();
    assertThat(store.appends()).containsExactlyInAnyOrder("append:a", "append:b");
  }

  @Test
  void forwardTargetsPropertySelectsExactlyThoseQueuesAndIsNotStored() throws Exception {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("a").topics("x").build());
    m.createQueue(QueueConfig.durable("b").topics("y").build());
    m.createQueue(QueueConfig.durable("c").topics("orders").build());
    m.publish(
        PublishRequest.builder("orders")
            .value(bytes("v"))
            .property(MessageProperties.FORWARD_TARGETS, " b, ,a,b ,ghost")
            .property("keep", "1")
            .build());
    assertThat(store.appends()).containsExactly("append:b", "append:a");
    assertThat(store.messages("c")).isEmpty();
    assertThat(store.messages("a").get(0).properties()).containsExactly(Map.entry("keep", "1"));
  }

  @Test
  void forwardTargetsAllUnknownWritesNothingAndSucceeds() throws Exception {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("c").topics("orders").build());
    m.publish(
        PublishRequest.builder("orders")
            .value(bytes("v"))
            .property(MessageProperties.FORWARD_TARGETS, "ghost1,ghost2")
            .build());
    assertThat(store.appends()).isEmpty();
    assertThat(m.listQueues()).extracting(QueueConfig::name).containsExactly("c");
  }

  @Test
  void noMatchCreatesAnEphemeralQueueNamedByTheFirstLevelUnderQueueRoot() throws Exception {
    QueueManager m = manager();
    m.publish(request("$queue/jobs/email/send", "v"));
    QueueConfig q = m.getQueue("jobs");
    assertThat(q.durable()).isFalse();
    assertThat(q.topics()).containsExactly("$queue/jobs/#");
    assertThat(store.messages("jobs")).hasSize(1);
    m.publish(request("$queue/jobs", "w")); // $queue/jobs/# matches $queue/jobs too
    assertThat(store.messages("jobs")).hasSize(2);
  }

  @Test
  void noMatchCreatesAnEphemeralQueueNamedLikeAnOrdinaryTopic() throws Exception {
    QueueManager m = manager();
    m.publish(request("sensors/1/temp", "21.5"));
    QueueConfig q = m.getQueue("sensors/1/temp");
    assertThat(q.durable()).isFalse();
    assertThat(q.topics()).containsExactly("sensors/1/temp");
    assertThat(store.messages("sensors/1/temp")).hasSize(1);
    m.publish(request("$queue//x", "v")); // empty first level: the topic itself
    assertThat(m.getQueue("$queue//x").topics()).containsExactly("$queue//x");
  }

  @Test
  void invalidTopicNameIsRejectedBeforeAnything() {
    QueueManager m = manager();
    assertThatThrownBy(() -> m.publish(request("a/+", "v")))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("a/+");
    assertThat(store.calls()).isEmpty();
  }

  // --- the stored message -------------------------------------------------------------------

  @Test
  void eachTargetGetsAFreshMessageWithCopiedContent() throws Exception {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("a").topics("t").messageTtl(Duration.ofHours(1)).build());
    m.createQueue(QueueConfig.durable("b").topics("t").messageTtl(Duration.ZERO).build());
    m.publish(
        PublishRequest.builder("t")
            .key(bytes("k"))
            .value(bytes("v"))
            .header("h", bytes("1"))
            .header("h", bytes("2"))
            .timestamp(1234L, TimestampType.CREATE_TIME)
            .build());
    Message a = store.messages("a").get(0);
    Message b = store.messages("b").get(0);
    for (Message msg : List.of(a, b)) {
      assertThat(msg.topic()).isEqualTo("t");
      assertThat(msg.key()).isEqualTo(bytes("k"));
      assertThat(msg.value()).isEqualTo(bytes("v"));
      assertThat(msg.headers())
          .containsExactly(Header.of("h", bytes("1")), Header.of("h", bytes("2")));
      assertThat(msg.timestamp()).isEqualTo(1234L);
      assertThat(msg.timestampType()).isEqualTo(TimestampType.CREATE_TIME);
      assertThat(msg.state()).isEqualTo(MessageState.QUEUED);
      assertThat(msg.createdAt()).isEqualTo(clock.instant());
    }
    assertThat(a.expiresAt()).isEqualTo(clock.instant().plus(Duration.ofHours(1)));
    assertThat(b.expiresAt()).isNull();
    assertThat(a.id()).isNotEqualTo(b.id());
    assertThat(Long.parseLong(a.id())).isPositive();
    assertThat(Long.parseLong(b.id())).isPositive();
  }

  @Test
  void storedMessagesNeverSeeTheCallersBuffersChange() throws Exception {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    m.createQueue(QueueConfig.durable("b").topics("t").build());
    byte[] key = bytes("k");
    byte[] value = bytes("v");
    byte[] header = bytes("1");
    PublishRequest.Builder request =
        PublishRequest.builder("t").key(key).value(value).header("h", header);
    m.publish(request.build());
    key[0] = 'X';
    value[0] = 'X';
    header[0] = 'X';
    for (String q : List.of("a", "b")) {
      Message stored = store.messages(q).get(0);
      assertThat(stored.key()).isEqualTo(bytes("k"));
      assertThat(stored.value()).isEqualTo(bytes("v"));
      assertThat(stored.headers()).containsExactly(Header.of("h", bytes("1")));
      stored.value()[0] = 'Y'; // a reader's copy cannot change the stored message either
      assertThat(store.messages(q).get(0).value()).isEqualTo(bytes("v"));
    }
  }

  @Test
  void messageIdsComeFromOneIncreasingProcessWideCounter() throws Exception {
    QueueManager m1 = manager();
    QueueManager m2 = manager();
    m1.createQueue(QueueConfig.durable("a").topics("t").build());
    m1.publish(request("t", "1"));
    m2.publish(request("t", "2"));
    m1.publish(request("t", "3"));
    List<Long> ids = store.messages("a").stream().map(Message::id).map(Long::parseLong).toList();
    assertThat(ids).hasSize(3).isSorted().doesNotHaveDuplicates();
  }

  @Test
  void publishersCannotForgeReservedProperties() throws Exception {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    Map<String, String> props = new LinkedHashMap<>();
    for (String reserved : MessageProperties.RESERVED) {
      if (!reserved.equals(MessageProperties.FORWARD_TARGETS)) {
        props.put(reserved, "forged");
      }
    }
    props.put("user", "u");
    props.put(MessageProperties.CLIENT_ID, "forged-client");
    m.publish(
        PublishRequest.builder("t").value(bytes("v")).properties(props).clientId("pub-1").build());
    assertThat(store.messages("a").get(0).properties())
        .containsOnly(Map.entry("user", "u"), Map.entry(MessageProperties.CLIENT_ID, "pub-1"));
  }

  @Test
  void clientIdPropertyIsAddedOnlyWhenTheRequestHasOne() throws Exception {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    m.publish(request("t", "v"));
    assertThat(store.messages("a").get(0).properties()).isEmpty();
  }

  // --- BEHAVIOUR Q-ACK ----------------------------------------------------------------------

  @Test
  void fsyncQueueOnASyncingStoreAppendsWithABarrier() throws Exception {
    store.durableSync(true);
    QueueManager m = manager(AckDurability.BUFFERED);
    m.createQueue(QueueConfig.durable("a").topics("t").ackDurability(AckDurability.FSYNC).build());
    m.createQueue(QueueConfig.durable("b").topics("u").build());
    m.publish(request("t", "v"));
    m.publish(request("u", "v"));
    assertThat(store.appends()).containsExactly("appendAndSync:a", "append:b");
  }

  @Test
  void defaultQueueFollowsTheManagerPolicy() throws Exception {
    store.durableSync(true);
    QueueManager fsync = manager(AckDurability.FSYNC);
    fsync.createQueue(QueueConfig.durable("a").topics("t").build());
    fsync.createQueue(
        QueueConfig.durable("b").topics("u").ackDurability(AckDurability.BUFFERED).build());
    fsync.publish(request("t", "v"));
    fsync.publish(request("u", "v"));
    manager(AckDurability.BUFFERED).publish(request("t", "w"));
    assertThat(store.appends()).containsExactly("appendAndSync:a", "append:b", "append:a");
  }

  @Test
  void fsyncOverrideOnAStoreWithoutDurableSyncIsBuffered() throws Exception {
    store.durableSync(false);
    QueueManager m = manager();
    QueueConfig q = QueueConfig.durable("a").topics("t").ackDurability(AckDurability.FSYNC).build();
    m.createQueue(q);
    assertThat(m.effectiveAckDurability(q)).isEqualTo(AckDurability.BUFFERED);
    m.publish(request("t", "v"));
    assertThat(store.appends()).containsExactly("append:a");
  }

  @Test
  void fsyncManagerPolicyOnAStoreWithoutDurableSyncIsDowngradedAtConstruction() throws Exception {
    store.durableSync(false);
    QueueManager m = manager(AckDurability.FSYNC);
    QueueConfig q = QueueConfig.durable("a").topics("t").build();
    m.createQueue(q);
    assertThat(m.effectiveAckDurability(q)).isEqualTo(AckDurability.BUFFERED);
    m.publish(request("t", "v"));
    assertThat(store.appends()).containsExactly("append:a");
  }

  @Test
  void ephemeralQueuesNeverSync() throws Exception {
    store.durableSync(true);
    QueueManager m = manager(AckDurability.FSYNC);
    m.createQueue(
        QueueConfig.ephemeral("e").topics("t").ackDurability(AckDurability.FSYNC).build());
    m.publish(request("t", "v"));
    assertThat(store.appends()).containsExactly("append:e");
  }

  @Test
  void fsyncPolicyOnAStoreThatNoLongerClaimsDurableSyncIsRefusedBeforeAppend() {
    store.durableSync(true);
    QueueManager m = manager(AckDurability.FSYNC);
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    store.durableSync(false);
    assertThatThrownBy(() -> m.publish(request("t", "v")))
        .isInstanceOfSatisfying(
            DurableSyncUnsupportedException.class, e -> assertThat(e.queue()).isEqualTo("a"));
    assertThat(store.appends()).isEmpty();
  }

  // --- limits (BEHAVIOUR L-LIMITS) ----------------------------------------------------------

  @Test
  void oversizedPublishIsRefusedBeforeAppendCountingKeyValueAndHeaders() throws Exception {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("a").topics("t").maxMessageSize(10).build());
    PublishRequest eleven =
        PublishRequest.builder("t")
            .value(bytes("vvvvv"))
            .key(bytes("kkk"))
            .header("h", bytes("hh"))
            .build();
    assertThatThrownBy(() -> m.publish(eleven))
        .isInstanceOfSatisfying(
            QueueMessageTooLargeException.class,
            e -> {
              assertThat(e.limit()).isEqualTo(10);
              assertThat(e.actual()).isEqualTo(11);
              assertThat(e.queue()).isEqualTo("a");
            });
    assertThat(store.appends()).isEmpty();
    m.publish(PublishRequest.builder("t").value(bytes("vvvvvvvvvv")).build()); // exactly 10
    assertThat(store.messages("a")).hasSize(1);
  }

  @Test
  void classicQueueAtMaxDepthRefusesWithQueueFullStreamsAreNotLimited() throws Exception {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("c").topics("c").maxDepth(2).build());
    m.createQueue(QueueConfig.durable("s").topics("s").type(QueueType.STREAM).maxDepth(2).build());
    m.publish(request("c", "1"));
    m.publish(request("c", "2"));
    assertThatThrownBy(() -> m.publish(request("c", "3")))
        .isInstanceOfSatisfying(
            QueueFullException.class,
            e -> {
              assertThat(e.depth()).isEqualTo(2);
              assertThat(e.maxDepth()).isEqualTo(2);
            })
        .hasMessageContaining("queue full");
    assertThat(store.messages("c")).hasSize(2);
    for (int i = 0; i < 3; i++) {
      m.publish(request("s", "x"));
    }
    assertThat(store.messages("s")).hasSize(3);
  }

  // --- errors -------------------------------------------------------------------------------

  @Test
  void everyTargetIsAttemptedAndFailuresAreJoined() {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    m.createQueue(QueueConfig.durable("b").topics("t").build());
    m.createQueue(QueueConfig.durable("c").topics("t").maxMessageSize(1).build());
    QueueStoreException diskFull = new QueueStoreException("a", "disk full", null);
    store.failAppends("a", () -> diskFull);
    PublishRequest req =
        PublishRequest.builder("t")
            .value(bytes("vv"))
            .property(MessageProperties.FORWARD_TARGETS, "a,b,c")
            .build();
    assertThatThrownBy(() -> m.publish(req))
        .isSameAs(diskFull)
        .satisfies(
            e ->
                assertThat(e.getSuppressed())
                    .singleElement()
                    .isInstanceOf(QueueMessageTooLargeException.class));
    assertThat(store.messages("b")).hasSize(1);
    // three creations, then only the successful append
    assertThat(scheduler.calls())
        .containsExactly("schedule:a", "schedule:b", "schedule:c", "schedule:b");
  }

  @Test
  void foreignAppendFailureIsWrappedNamingTheQueue() {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    IllegalStateException bug = new IllegalStateException("bug");
    store.failAppends("a", () -> bug);
    assertThatThrownBy(() -> m.publish(request("t", "v")))
        .isInstanceOfSatisfying(
            QueueStoreException.class, e -> assertThat(e.queue()).isEqualTo("a"))
        .hasMessageContaining("append to queue a")
        .hasCause(bug);
  }

  @Test
  void successfulAppendsScheduleDelivery() throws Exception {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    m.publish(request("t", "v"));
    assertThat(scheduler.calls()).containsExactly("schedule:a", "schedule:a");
  }

  @Test
  void interruptionBeforeASyncedAppendStopsThePublishThere() throws Exception {
    store.durableSync(true);
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("plain").topics("p").build());
    m.createQueue(
        QueueConfig.durable("synced").topics("s").ackDurability(AckDurability.FSYNC).build());
    PublishRequest req =
        PublishRequest.builder("t")
            .value(bytes("v"))
            .property(MessageProperties.FORWARD_TARGETS, "plain,synced")
            .build();
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(() -> m.publish(req)).isInstanceOf(InterruptedException.class);
    } finally {
      Thread.interrupted();
    }
    assertThat(store.messages("plain")).hasSize(1);
    assertThat(store.messages("synced")).isEmpty();
  }

  @Test
  void createdAtFollowsTheInjectedClock() throws Exception {
    QueueManager m = manager();
    m.createQueue(QueueConfig.durable("a").topics("t").build());
    m.publish(request("t", "1"));
    clock.advance(Duration.ofMinutes(3));
    m.publish(request("t", "2"));
    assertThat(store.messages("a"))
        .extracting(Message::createdAt)
        .containsExactly(
            Instant.parse("2026-03-01T12:00:00Z"), Instant.parse("2026-03-01T12:03:00Z"));
  }
}
