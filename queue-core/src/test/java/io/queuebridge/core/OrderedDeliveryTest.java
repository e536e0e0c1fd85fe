package io.queuebridge.core;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.CompetingKeyConsumers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Per-key order through the manager (BEHAVIOUR Q-ORDER), on an injected clock: a group hands out at
 * most one message of a key at a time, in publish order, while other keys go on; a nack holds back
 * only its key, a reject or a dead letter releases it; messages without a key are not ordered; the
 * blocked messages survive a reopen; bad settings are refused naming the field; and 8 competing
 * consumers over 1,000 keys acknowledge every key's messages in publish order.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class OrderedDeliveryTest {
  @TempDir Path dir;

  private final ManagerHarness harness = new ManagerHarness(() -> dir);

  @AfterEach
  void tearDown() {
    harness.close();
  }

  private QueueManager ordered(String kind, UnaryOperator2 tune) throws Exception {
    return ordered(harness.store(kind), tune);
  }

  private QueueManager ordered(Storage storage, UnaryOperator2 tune) throws Exception {
    QueueManager m = harness.manager(storage);
    if (m.listQueues().stream().noneMatch(q -> q.name().equals("jobs"))) {
      m.createQueue(
          tune.apply(QueueConfig.durable("jobs").ordering(OrderingKey.MESSAGE_KEY)).build());
    }
    m.subscribe("jobs", "", "c1", "g");
    m.subscribe("jobs", "", "c2", "g");
    return m;
  }

  /** A configuration tweak of a test. */
  private interface UnaryOperator2 {
    QueueConfig.Builder apply(QueueConfig.Builder b);
  }

  private static RetryPolicy retries(int n) {
    return new RetryPolicy(n, Duration.ZERO, Duration.ZERO, 1.0, Duration.ZERO);
  }

  private static PublishRequest keyed(String key, String value) {
    PublishRequest.Builder b = PublishRequest.builder("jobs").value(value.getBytes(UTF_8));
    return (key == null ? b : b.key(key.getBytes(UTF_8))).build();
  }

  private static void publish(QueueManager m, String... keyValuePairs) throws Exception {
    for (int i = 0; i < keyValuePairs.length; i += 2) {
      m.publishTo("jobs", keyed(keyValuePairs[i], keyValuePairs[i + 1]));
    }
  }

  private static void publishDelayed(QueueManager m, String key, String value, Duration delay)
      throws Exception {
    m.publishTo(
        "jobs",
        PublishRequest.builder("jobs")
            .key(key.getBytes(UTF_8))
            .value(value.getBytes(UTF_8))
            .delay(delay)
            .build());
  }

  private static String text(GroupDelivery d) {
    return new String(d.message().valueUnsafe(), UTF_8);
  }

  private static List<GroupDelivery> claim(QueueManager m, String consumer) {
    return m.consumerGroups().claimBatch("jobs", "g", consumer, 100);
  }

  private static List<String> texts(List<GroupDelivery> ds) {
    return ds.stream().map(OrderedDeliveryTest::text).toList();
  }

  private static GroupDelivery find(List<GroupDelivery> ds, String value) {
    return ds.stream().filter(d -> text(d).equals(value)).findFirst().orElseThrow();
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aKeyIsHandedOutOneMessageAtATimeInPublishOrderWhileOtherKeysGoOn(String kind)
      throws Exception {
    QueueManager m = ordered(kind, b -> b);
    publish(m, "k1", "a1", "k1", "a2", "k2", "b1", "k1", "a3", "k2", "b2", "k3", "c1");

    List<GroupDelivery> first = claim(m, "c1");
    assertThat(texts(first)).containsExactly("a1", "b1", "c1");
    assertThat(claim(m, "c2")).as("every key has a message out").isEmpty();
    assertThat(m.consumerGroups().metrics().blocked()).isEqualTo(3);

    find(first, "a1").ack();
    List<GroupDelivery> second = claim(m, "c2");
    assertThat(texts(second)).as("the next of k1, to any consumer").containsExactly("a2");
    assertThat(second.get(0).deliveryCount()).as("a first delivery").isEqualTo(1);
    find(first, "b1").ack();
    find(first, "c1").ack();
    assertThat(texts(claim(m, "c1"))).containsExactly("b2");
    second.get(0).ack();
    assertThat(texts(claim(m, "c1"))).containsExactly("a3");
    assertThat(m.consumerGroups().group("jobs", "g").orElseThrow().committed())
        .as("a3 (offset 3) and b2 (offset 4) are still out")
        .isEqualTo(3);
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aNackHoldsBackOnlyItsKeyAndTheRetryComesBeforeTheNextMessage(String kind) throws Exception {
    QueueManager m = ordered(kind, b -> b);
    publish(m, "k1", "a1", "k2", "b1", "k1", "a2", "k2", "b2");
    List<GroupDelivery> out = claim(m, "c1");
    assertThat(texts(out)).containsExactly("a1", "b1");
    find(out, "a1").nack(Duration.ofSeconds(5));
    find(out, "b1").ack();
    assertThat(texts(claim(m, "c2")))
        .as("k2 goes on; k1 waits for a1's retry")
        .containsExactly("b2");
    harness.clock.advance(Duration.ofSeconds(5));
    List<GroupDelivery> retry = claim(m, "c2");
    assertThat(texts(retry)).containsExactly("a1");
    assertThat(retry.get(0).deliveryCount()).isEqualTo(2);
    assertThat(claim(m, "c1")).as("a2 only after a1 is settled").isEmpty();
    retry.get(0).ack();
    assertThat(texts(claim(m, "c1"))).containsExactly("a2");
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aRejectedOrDeadLetteredMessageReleasesItsKey(String kind) throws Exception {
    QueueManager m = ordered(kind, b -> b.retryPolicy(retries(1)));
    publish(m, "k1", "a1", "k1", "a2", "k1", "a3");
    GroupDelivery a1 = claim(m, "c1").get(0);
    a1.reject("bad input");
    GroupDelivery a2 = claim(m, "c2").get(0);
    assertThat(text(a2)).isEqualTo("a2");
    a2.nack(Duration.ZERO);
    GroupDelivery again = claim(m, "c2").get(0);
    assertThat(text(again)).isEqualTo("a2");
    again.nack(Duration.ZERO); // retries exhausted: dead-lettered
    assertThat(texts(claim(m, "c1"))).containsExactly("a3");
    assertThat(m.consumerGroups().metrics().dlqMoves()).isEqualTo(2);
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void anExpiredVisibilityMovesTheMessageToAnotherConsumerAndStillHoldsTheKey(String kind)
      throws Exception {
    QueueManager m = ordered(kind, b -> b.deliveryTimeout(Duration.ofSeconds(10)));
    publish(m, "k1", "a1", "k1", "a2");
    GroupDelivery lost = claim(m, "c1").get(0);
    harness.clock.advance(Duration.ofSeconds(10));
    List<GroupDelivery> stolen = claim(m, "c2");
    assertThat(texts(stolen)).as("a1 again, not a2").containsExactly("a1");
    assertThatThrownBy(lost::ack)
        .as("the old delivery lost it")
        .isInstanceOf(RuntimeException.class);
    stolen.get(0).ack();
    assertThat(texts(claim(m, "c1"))).containsExactly("a2");
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void anExpiredMessageIsDroppedAndReleasesItsKey(String kind) throws Exception {
    QueueManager m =
        ordered(
            kind,
            b -> b.messageTtl(Duration.ofSeconds(100)).deliveryTimeout(Duration.ofSeconds(110)));
    publish(m, "k1", "a1");
    assertThat(claim(m, "c1")).hasSize(1); // a1 out, never settled
    harness.clock.advance(Duration.ofSeconds(30));
    publish(m, "k1", "a2");
    assertThat(claim(m, "c2")).isEmpty();
    // at 110 s a1's visibility passes; it expired at 100 s: dropped, and a2 (expiring at 130 s)
    // is released in the same claim
    harness.clock.advance(Duration.ofSeconds(80));
    assertThat(texts(claim(m, "c2"))).containsExactly("a2");
    assertThat(m.consumerGroups().metrics().discarded()).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aBatchAckReleasesEveryKeyItSettles(String kind) throws Exception {
    QueueManager m = ordered(kind, b -> b);
    publish(m, "k1", "a1", "k2", "b1", "k1", "a2", "k2", "b2");
    List<GroupDelivery> out = claim(m, "c1");
    assertThat(m.consumerGroups().ackAll(out)).isEmpty();
    assertThat(texts(claim(m, "c2"))).containsExactly("a2", "b2");
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void messagesWithoutAKeyAreNotOrdered(String kind) throws Exception {
    QueueManager m = ordered(kind, b -> b);
    publish(m, null, "n1", "k1", "a1", null, "n2", "k1", "a2", null, "n3");
    assertThat(texts(claim(m, "c1"))).containsExactly("n1", "a1", "n2", "n3");
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aPropertyOrdersByItsValue(String kind) throws Exception {
    QueueManager m = ordered(kind, b -> b.ordering(OrderingKey.property("tenant")));
    for (String[] p :
        new String[][] {{"acme", "x1"}, {"acme", "x2"}, {"zeta", "z1"}, {null, "free"}}) {
      PublishRequest.Builder b =
          PublishRequest.builder("jobs").value(p[1].getBytes(UTF_8)).key("same".getBytes(UTF_8));
      if (p[0] != null) {
        b.property("tenant", p[0]);
      }
      m.publishTo("jobs", b.build());
    }
    List<GroupDelivery> out = claim(m, "c1");
    assertThat(texts(out)).as("the message key plays no part").containsExactly("x1", "z1", "free");
    find(out, "x1").ack();
    assertThat(texts(claim(m, "c2"))).containsExactly("x2");
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aDelayedMessageHoldsBackTheLaterMessagesOfItsKey(String kind) throws Exception {
    QueueManager m = ordered(kind, b -> b);
    publishDelayed(m, "k1", "later", Duration.ofSeconds(20));
    publish(m, "k1", "after", "k2", "other");
    assertThat(texts(claim(m, "c1"))).containsExactly("other");
    harness.clock.advance(Duration.ofSeconds(20));
    List<GroupDelivery> due = claim(m, "c1");
    assertThat(texts(due)).containsExactly("later");
    due.get(0).ack();
    assertThat(texts(claim(m, "c2"))).containsExactly("after");
  }

  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void aDelayedMessageBlockedBehindItsKeyStillWaitsForItsDueTimeOnceReleased(String kind)
      throws Exception {
    QueueManager m = ordered(kind, b -> b);
    publish(m, "k1", "first");
    publishDelayed(m, "k1", "later", Duration.ofSeconds(20));
    List<GroupDelivery> first = claim(m, "c1");
    assertThat(texts(first)).containsExactly("first");
    assertThat(m.consumerGroups().metrics().blocked()).as("read while k1 is out").isEqualTo(1);
    first.get(0).ack(); // releases k1's next entry, which is not due yet
    assertThat(claim(m, "c2")).as("released, but 20 s from its due time").isEmpty();
    harness.clock.advance(Duration.ofSeconds(19));
    assertThat(claim(m, "c2")).isEmpty();
    harness.clock.advance(Duration.ofSeconds(1));
    assertThat(texts(claim(m, "c2"))).containsExactly("later");
  }

  @Test
  void blockedMessagesSurviveAReopenAndAreReleasedAfterIt() throws Exception {
    Storage first = harness.store("file");
    QueueManager m = ordered(first, b -> b);
    publish(m, "k1", "a1", "k1", "a2", "k1", "a3");
    GroupDelivery a1 = claim(m, "c1").get(0);
    assertThat(text(a1)).isEqualTo("a1");
    a1.ack();
    GroupDelivery a2 = claim(m, "c1").get(0);
    assertThat(text(a2)).isEqualTo("a2");
    m.stop();
    first.close();

    QueueManager again = ordered(harness.store("file"), b -> b);
    assertThat(claim(again, "c2")).as("a2 is still out: a3 stays blocked").isEmpty();
    harness.clock.advance(Duration.ofSeconds(30)); // a2's visibility passes: redelivered
    List<GroupDelivery> redelivered = claim(again, "c2");
    assertThat(texts(redelivered)).containsExactly("a2");
    redelivered.get(0).ack();
    assertThat(texts(claim(again, "c1"))).containsExactly("a3");
  }

  @Test
  void badOrderingsAreRefusedNamingTheField() {
    assertThatThrownBy(
            () ->
                QueueConfig.reservedStream("s")
                    .ordering(OrderingKey.MESSAGE_KEY)
                    .build()
                    .validate())
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("ordering")
        .hasMessageContaining("key")
        .hasMessageContaining("stream");
    assertThatThrownBy(
            () ->
                QueueConfig.durable("q")
                    .ordering(OrderingKey.property(MessageProperties.QUEUE))
                    .build()
                    .validate())
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("ordering")
        .hasMessageContaining("reserved");
    assertThatThrownBy(
            () -> QueueConfig.durable("q").ordering(OrderingKey.property("")).build().validate())
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("1 to 255 characters");
    assertThatThrownBy(() -> OrderingKey.parse("ordering", "keys"))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("ordering")
        .hasMessageContaining("keys")
        .hasMessageContaining("none, key, or property:<name>");
    assertThat(OrderingKey.parse("ordering", "property:tenant"))
        .isEqualTo(OrderingKey.property("tenant"));
    assertThat(OrderingKey.parse("ordering", "none")).isEqualTo(OrderingKey.NONE);
    assertThat(OrderingKey.property("tenant").toString()).isEqualTo("property:tenant");
  }

  private static String keyOf(byte[] key) {
    return OrderingKey.MESSAGE_KEY.keyOf(
        io.queuebridge.core.message.Message.builder().key(key).value(new byte[0]).build());
  }

  private static byte[] sha256(byte[] raw) throws Exception {
    return java.security.MessageDigest.getInstance("SHA-256").digest(raw);
  }

  @Test
  void longKeysAreKeptByTheirDigestAndStayDistinct() throws Exception {
    byte[] a = new byte[1000];
    byte[] b = new byte[1000];
    b[999] = 1;
    assertThat(keyOf(a)).hasSizeLessThanOrEqualTo(44).isNotEqualTo(keyOf(b)).startsWith("h");
    assertThat(keyOf(new byte[0])).as("an empty key is a key").isEqualTo("b");
    assertThat(keyOf(new byte[32])).startsWith("b").hasSize(44);
    assertThat(keyOf(null)).as("no key").isNull();
    Random random = new Random(3);
    java.util.Base64.Encoder b64 = java.util.Base64.getEncoder().withoutPadding();
    for (int n = 0; n < 80; n++) {
      byte[] raw = new byte[n];
      random.nextBytes(raw);
      String expected =
          n <= 32 ? "b" + b64.encodeToString(raw) : "h" + b64.encodeToString(sha256(raw));
      assertThat(keyOf(raw)).as("%d bytes", n).isEqualTo(expected);
    }
    assertThat(
            OrderingKey.NONE.keyOf(
                io.queuebridge.core.message.Message.builder().key(a).value(a).build()))
        .isNull();
  }

  /**
   * 8 consumers compete for 10,000 messages over 1,000 keys, acking most, nacking some and letting
   * a few time out: at no time do two consumers hold messages of one key, and every key's messages
   * are acknowledged in publish order.
   */
  @ParameterizedTest
  @ValueSource(strings = {"memory", "file"})
  void eightCompetingConsumersAckEveryKeysMessagesInPublishOrder(String kind) throws Exception {
    int keys = 1000;
    int messages = 10_000;
    QueueManager m =
        harness.manager(harness.store(kind), b -> b.clock(java.time.Clock.systemUTC()));
    m.createQueue(
        QueueConfig.durable("jobs")
            .ordering(OrderingKey.MESSAGE_KEY)
            .retryPolicy(retries(1000))
            .build());
    Map<String, List<Integer>> published = new HashMap<>();
    Random random = new Random(7);
    for (int i = 0; i < messages; i++) {
      String key = "key-" + random.nextInt(keys);
      published.computeIfAbsent(key, k -> new ArrayList<>()).add(i);
      m.publishTo("jobs", keyed(key, Integer.toString(i)));
    }
    List<Function<Integer, List<GroupDelivery>>> claimers = new ArrayList<>();
    for (int w = 0; w < 8; w++) {
      String me = "c" + w;
      m.subscribe("jobs", "", me, "g");
      claimers.add(n -> m.consumerGroups().claimBatch("jobs", "g", me, n));
    }
    CompetingKeyConsumers.drainAndCheck(claimers, published, Duration.ofMinutes(2));
  }
}
