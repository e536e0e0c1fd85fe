package io.queuebridge.core.group;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Delayed delivery (BEHAVIOUR Q-DELAY) on the memory store: {@value #MESSAGES} messages with random
 * due times over {@value #SPREAD_SECONDS} s are read by one queue-mode group (every one becomes a
 * scheduled entry), then the clock passes all due times and one member drains them: {@code
 * claimBatch(100)} + {@code ackAll} until nothing is left, checking that they come out in due-time
 * order ({@code messages = delayed}). The reference in the same run, {@code messages = undelayed},
 * drains the same number of messages published without a delay the same way. Each invocation is one
 * whole drain, timed once ({@code SingleShotTime}); the store is built and filled in a
 * per-invocation setup, which JMH does not time. {@code notDue} adds that many more delayed
 * messages due long after the run: they stay scheduled in the group's PEL the whole time, so
 * comparing {@code notDue = 0} with {@code notDue = 100000} shows what a claim pays for entries
 * that are not due.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5)
@Measurement(iterations = 10)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms4g", "-Xmx4g"})
public class DelayedClaimBenchmark {
  private static final String QUEUE = "bench";
  private static final String GROUP = "g";
  private static final String CONSUMER = "c1";
  static final int MESSAGES = 100_000;
  static final int SPREAD_SECONDS = 3_600;
  private static final int BATCH = 100;
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  @Param({"delayed", "undelayed"})
  public String messages;

  @Param({"0", "100000"})
  public int notDue;

  private Storage storage;
  private GroupCoordinator groups;
  private final SettableClock clock = new SettableClock();
  private long[] dueMillis; // by offset: each message's due time, for the order check

  /** A clock the benchmark sets; read by the engine on every claim. */
  static final class SettableClock extends Clock {
    volatile Instant now = T0;

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }
  }

  private Message message(Instant due) {
    Message.Builder b =
        Message.builder().topic("$queue/" + QUEUE).value(new byte[100]).createdAt(T0);
    if (due != null) {
      b.property(MessageProperties.DELIVER_AT, due.toString());
    }
    return b.build();
  }

  /**
   * A fresh store: the not-due messages, then {@value #MESSAGES} messages with random due times;
   * the group reads them all once (each becomes a scheduled entry); undelayed messages are appended
   * after that read. Then the clock passes every random due time.
   */
  private void fill(boolean delayed) {
    clock.now = T0;
    storage = QueueStores.memory();
    storage
        .queues()
        .createQueue(
            QueueConfig.durable(QUEUE)
                .messageTtl(Duration.ZERO)
                .deliveryTimeout(Duration.ofDays(1))
                .build());
    groups = GroupCoordinator.builder(storage).clock(clock).build();
    groups.join(QUEUE, "", GROUP, CONSUMER, CursorOption.resume(GroupMode.QUEUE));
    Instant never = T0.plus(Duration.ofDays(365));
    for (int i = 0; i < notDue; i++) {
      storage.queues().append(QUEUE, message(never.plusMillis(i)));
    }
    dueMillis = new long[notDue + MESSAGES];
    if (delayed) {
      SplittableRandom random = new SplittableRandom(42);
      for (int i = 0; i < MESSAGES; i++) {
        Instant due = T0.plusMillis(1 + random.nextLong(SPREAD_SECONDS * 1000L));
        dueMillis[(int) storage.queues().append(QUEUE, message(due))] = due.toEpochMilli();
      }
    }
    // the group reads everything once: every delayed message becomes a scheduled entry
    while (groups.group(QUEUE, GROUP).orElseThrow().cursor() < storage.queues().tail(QUEUE)) {
      if (!groups.claimBatch(QUEUE, GROUP, CONSUMER, BATCH).isEmpty()) {
        throw new IllegalStateException("a message was handed out before its due time");
      }
    }
    if (!delayed) {
      for (int i = 0; i < MESSAGES; i++) {
        storage.queues().append(QUEUE, message(null));
      }
    }
    clock.now = T0.plusSeconds(SPREAD_SECONDS + 1); // every random due time has passed
    System.gc(); // the garbage of the set-up is not the drain's to collect
  }

  @Setup(Level.Invocation)
  public void setUp() {
    fill(messages.equals("delayed"));
  }

  @TearDown(Level.Invocation)
  public void tearDown() {
    storage.close();
  }

  /**
   * Drains the {@value #MESSAGES} claimable messages: claimBatch(100) + ackAll until empty; the
   * delayed ones in due-time order.
   */
  @Benchmark
  public long drain() {
    return drain(messages.equals("delayed"));
  }

  private long drain(boolean checkOrder) {
    long drained = 0;
    long last = Long.MIN_VALUE;
    while (true) {
      List<GroupDelivery> claimed = groups.claimBatch(QUEUE, GROUP, CONSUMER, BATCH);
      if (claimed.isEmpty()) {
        break;
      }
      for (GroupDelivery d : claimed) {
        if (checkOrder) {
          long due = dueMillis[(int) d.offset()];
          if (due < last) {
            throw new IllegalStateException(
                "offset " + d.offset() + " due at " + due + " came after one due at " + last);
          }
          last = due;
        }
      }
      if (!groups.ackAll(claimed).isEmpty()) {
        throw new IllegalStateException("not acked");
      }
      drained += claimed.size();
    }
    if (drained != MESSAGES) {
      throw new IllegalStateException("drained " + drained + " of " + MESSAGES);
    }
    return drained;
  }
}
