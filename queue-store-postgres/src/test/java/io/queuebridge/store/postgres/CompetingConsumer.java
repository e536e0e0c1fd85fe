package io.queuebridge.store.postgres;

import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;

/**
 * One member of a queue-mode group that claims and acks until the group has committed {@code total}
 * messages. Used in-process by {@link CrossProcessGroupTest} and, through {@link #main}, as the
 * consumer running in a child JVM (it prints {@code ACK <offset>} per acknowledged message).
 */
final class CompetingConsumer {
  private static final long IDLE_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

  private CompetingConsumer() {}

  /**
   * Joins {@code group} as {@code consumerId} (then runs {@code joined}) and claims batches of 10,
   * reporting each delivered offset to {@code delivered} before acking it, until the group's
   * committed offset reaches {@code total} or {@code timeout} passes.
   *
   * @return whether the group reached {@code total} in time
   */
  static boolean run(
      GroupCoordinator coordinator,
      String queue,
      String group,
      String consumerId,
      long total,
      Duration timeout,
      Runnable joined,
      LongConsumer delivered) {
    return run(coordinator, queue, group, consumerId, total, timeout, joined, delivered, false);
  }

  /**
   * {@link #run}, acknowledging each claimed batch with one {@code ackAll} when {@code batchAck}
   * (failing if any delivery of it is not acknowledged), else with one {@code ack} per delivery.
   */
  static boolean run(
      GroupCoordinator coordinator,
      String queue,
      String group,
      String consumerId,
      long total,
      Duration timeout,
      Runnable joined,
      LongConsumer delivered,
      boolean batchAck) {
    coordinator.join(queue, "", group, consumerId, CursorOption.resume(GroupMode.QUEUE));
    joined.run();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() - deadline < 0) {
      List<GroupDelivery> batch = coordinator.claimBatch(queue, group, consumerId, 10);
      if (batch.isEmpty()) {
        if (coordinator.group(queue, group).orElseThrow().committed() >= total) {
          return true;
        }
        LockSupport.parkNanos(IDLE_PAUSE_NANOS); // others still hold claims: do not hammer the DB
        continue;
      }
      for (GroupDelivery d : batch) {
        delivered.accept(d.offset());
        if (!batchAck) {
          d.ack();
        }
      }
      if (batchAck) {
        List<GroupDelivery> notAcked = coordinator.ackAll(batch);
        if (!notAcked.isEmpty()) {
          throw new IllegalStateException(
              consumerId + ": ackAll left " + notAcked + " unacknowledged, expected none");
        }
      }
    }
    return false;
  }

  /**
   * Child-JVM entry: {@code <queue> <group> <consumerId> <total> <timeoutSeconds>}; the store
   * configuration comes from the environment ({@code QB_URL}, {@code QB_USER}, {@code QB_PASSWORD},
   * {@code QB_SCHEMA}). Exit status 0 when the group reached the total.
   */
  public static void main(String[] args) {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    Map<String, String> config = new HashMap<>();
    config.put("url", System.getenv("QB_URL"));
    config.put("user", System.getenv("QB_USER"));
    config.put("password", System.getenv("QB_PASSWORD"));
    config.put("schema", System.getenv("QB_SCHEMA"));
    try (Storage storage = QueueStores.open("postgres", config)) {
      GroupCoordinator coordinator = GroupCoordinator.builder(storage).build();
      boolean done =
          run(
              coordinator,
              args[0],
              args[1],
              args[2],
              Long.parseLong(args[3]),
              Duration.ofSeconds(Long.parseLong(args[4])),
              () -> out.println("JOINED"),
              offset -> out.println("ACK " + offset));
      out.println(done ? "DONE" : "TIMEOUT");
      System.exit(done ? 0 : 1);
    }
  }
}
