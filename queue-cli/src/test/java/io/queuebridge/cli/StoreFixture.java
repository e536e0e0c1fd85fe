package io.queuebridge.cli;

import io.queuebridge.core.MutableClock;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.RetentionPolicy;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.Header;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.message.TimestampType;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.Storage;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

/**
 * The store every command test reads, written through the public API (a manager over the store for
 * the groups, the store's own appends for messages with fixed ids and times):
 *
 * <ul>
 *   <li>{@code jobs}, a durable classic queue: six messages (offsets 0-5) accepted one second apart
 *       from {@link #T0}; group {@code workers} with members {@code workers-1} and {@code
 *       workers-2}: offset 0 acknowledged, 2 rejected to the dead-letter queue, 1 nacked and
 *       claimed again (two deliveries), 3 and 4 pending; cursor 5, committed 1.
 *   <li>{@code $dlq/jobs}: the rejected message.
 *   <li>{@code orders}, a reserved durable stream (the shape of the sink's protected stream): three
 *       messages captured from Kafka topic {@code orders} (text, binary, a tombstone), with headers
 *       and Kafka coordinates; stream group {@code archiver}: cursor 3, committed 2.
 * </ul>
 *
 * Commands run with {@link #CLOCK}: one hour after {@link #T0}.
 */
final class StoreFixture {
  static final Instant T0 = Instant.parse("2025-01-31T09:00:00Z");

  /** The clock the commands under test read: {@code T0} plus one hour. */
  static final Clock CLOCK = Clock.fixed(T0.plus(Duration.ofHours(1)), ZoneOffset.UTC);

  private StoreFixture() {}

  static void fill(Storage storage) {
    MutableClock clock = new MutableClock(T0);
    QueueManager manager =
        new QueueManager(storage, QueueManagerConfig.builder().clock(clock).build());
    DurableQueueStore log = storage.queues();
    ConsumerGroups groups = manager.consumerGroups();

    manager.createQueue(QueueConfig.durable("jobs").topics("jobs/#").build());
    for (int i = 0; i < 5; i++) {
      log.append("jobs", job(i, T0.plusSeconds(i)));
    }
    manager.subscribeExisting("jobs", null, "workers-1", "workers");
    manager.subscribeExisting("jobs", null, "workers-2", "workers");
    clock.set(T0.plus(Duration.ofMinutes(10)));
    List<GroupDelivery> first = groups.claimBatch("jobs", "workers", "workers-1", 2); // 0, 1
    List<GroupDelivery> second = groups.claimBatch("jobs", "workers", "workers-2", 3); // 2, 3, 4
    second.get(0).reject("malformed");
    first.get(0).ack();
    first.get(1).nack(Duration.ZERO);
    clock.set(T0.plus(Duration.ofMinutes(20)));
    groups.claimNext("jobs", "workers", "workers-1").orElseThrow(); // 1 again: delivery 2
    log.append("jobs", job(5, T0.plus(Duration.ofMinutes(30))));

    manager.createQueue(
        QueueConfig.reservedStream("orders")
            .topics("orders/#")
            .retention(new RetentionPolicy(Duration.ofDays(7), 0, 0))
            .maxMessageSize(1_048_576)
            .messageTtl(Duration.ZERO)
            .dedupWindow(Duration.ofMinutes(5))
            .build());
    log.append("orders", order(0, utf8("order-0"), utf8("{\"id\":0}")));
    log.append("orders", order(1, utf8("order-1"), new byte[] {0, 1, 2, (byte) 0xff}));
    log.append("orders", order(2, utf8("order-2"), null));
    clock.set(T0.plus(Duration.ofMinutes(40)));
    groups.join("orders", null, "archiver", "archiver-1", CursorOption.earliest(GroupMode.STREAM));
    groups.commitCursor("orders", "archiver", 3);
    groups.commitOffset("orders", "archiver", 2);
    manager.stop();
  }

  /**
   * Two queues with per-key ordering, beside the fixture ({@link FixtureStore#amend}): {@code
   * ordered} (by message key) holds k1, k1, k2, k1 (offsets 0-3) and a k3 delayed by 10 minutes
   * (4), all published at {@link #T0}; one claim of member {@code w-1} of group {@code w} takes 0
   * and 2, blocks 1 and 3 behind 0 and keeps 4 until due; then 0 is acknowledged, which releases 1
   * (no member holds it yet). So: 2 held, 1 and 4 scheduled, 3 blocked; committed 1. {@code
   * tenants} (by property {@code tenant}) is empty.
   */
  static void fillOrdered(Storage storage) throws InterruptedException {
    QueueManager manager =
        new QueueManager(storage, QueueManagerConfig.builder().clock(new MutableClock(T0)).build());
    manager.createQueue(
        QueueConfig.durable("ordered")
            .topics("ordered/#")
            .ordering(OrderingKey.MESSAGE_KEY)
            .build());
    manager.createQueue(
        QueueConfig.durable("tenants")
            .topics("tenants/#")
            .ordering(OrderingKey.property("tenant"))
            .build());
    for (String key : List.of("k1", "k1", "k2", "k1")) {
      manager.publishTo("ordered", keyed(key).build());
    }
    manager.publishTo("ordered", keyed("k3").delay(Duration.ofMinutes(10)).build());
    manager.subscribeExisting("ordered", null, "w-1", "w");
    List<GroupDelivery> out = manager.consumerGroups().claimBatch("ordered", "w", "w-1", 10);
    List<Long> offsets = out.stream().map(GroupDelivery::offset).toList();
    if (!offsets.equals(List.of(0L, 2L))) {
      throw new IllegalStateException(
          "the ordered fixture's claim took offsets " + offsets + "; expected [0, 2]");
    }
    out.get(0).ack();
    manager.stop();
  }

  private static PublishRequest.Builder keyed(String key) {
    return PublishRequest.builder("ordered/x").key(utf8(key)).value(utf8("v"));
  }

  private static Message job(int i, Instant at) {
    return Message.builder()
        .id("job-" + i)
        .topic("jobs/email")
        .key(utf8("job-" + i))
        .value(utf8("send mail " + i))
        .createdAt(at)
        .build();
  }

  private static Message order(int i, byte[] key, byte[] value) {
    return Message.builder()
        .id("order-" + i)
        .topic("orders")
        .key(key)
        .value(value)
        .header("trace", utf8("t-" + i))
        .header(Header.of("raw", new byte[] {(byte) 0xc3, 0x28}))
        .timestamp(T0.plusSeconds(100 + i).toEpochMilli(), TimestampType.CREATE_TIME)
        .createdAt(T0.plusSeconds(200 + i))
        .property("tenant", "eu")
        .property(KafkaCoordinates.TOPIC, "orders")
        .property(KafkaCoordinates.PARTITION, "0")
        .property(KafkaCoordinates.OFFSET, Integer.toString(17 + i))
        .build();
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
