package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.message.TimestampType;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.store.postgres.PostgresTestDatabase;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code dlq redrive} is exactly once across SIGKILLs: a child JVM runs the command line, is killed
 * mid-way several times and run again, and every dead letter ends up in its origin queue exactly
 * once, byte for byte, with the dead-letter queue empty. On a {@code file} store and, when {@code
 * QUEUEBRIDGE_TEST_PG_URL} names a server, a {@code postgres} one.
 */
class RedriveKillTest {
  private static final int MESSAGES = 600;
  private static final int KILLS = 4;

  @TempDir Path dir;

  @Test
  void aRedriveKilledAgainAndAgainMovesEveryDeadLetterExactlyOnceOnAFileStore() throws Exception {
    Path path = dir.resolve("store");
    check(() -> QueueStores.file(path), List.of("--store-type", "file", "--store", "path=" + path));
  }

  @Test
  void aRedriveKilledAgainAndAgainMovesEveryDeadLetterExactlyOnceOnAPostgresStore()
      throws Exception {
    String url = System.getenv("QUEUEBRIDGE_TEST_PG_URL");
    assumeTrue(
        url != null && !url.isBlank(),
        "QUEUEBRIDGE_TEST_PG_URL is not set: no PostgreSQL server for the postgres redrive");
    try (PostgresTestDatabase db = PostgresTestDatabase.create()) {
      List<String> args = new ArrayList<>(List.of("--store-type", "postgres"));
      db.config().forEach((k, v) -> args.addAll(List.of("--store", k + "=" + v)));
      check(() -> QueueStores.open("postgres", db.config()), args);
    }
  }

  private void check(Supplier<Storage> store, List<String> storeArgs) throws Exception {
    Map<Long, Message> dead = deadLetters(store);
    Random random = new Random(42);
    int killed = 0;
    int alreadyMovedSeen = 0;
    for (int run = 0; ; run++) {
      boolean kill = run < KILLS;
      Child child = Child.start(storeArgs);
      try {
        int after = kill ? 20 + random.nextInt(120) : Integer.MAX_VALUE;
        int lines = 0;
        String line;
        while ((line = child.out.readLine()) != null) {
          if (line.startsWith("already-moved")) {
            alreadyMovedSeen++;
          }
          if (++lines >= after) {
            child.process.destroyForcibly(); // SIGKILL
            killed++;
            break;
          }
        }
        assertThat(child.process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        if (!kill || lines < after) {
          assertThat(child.process.exitValue()).as("the last run's exit status").isZero();
          break;
        }
      } finally {
        child.process.destroyForcibly();
      }
      assertInvariant(store, dead, false);
    }
    assertThat(killed).as("runs killed mid-way").isGreaterThanOrEqualTo(2);
    assertInvariant(store, dead, true);
    System.out.printf(
        "redrive: %d kills, %d messages found already moved by a killed run%n",
        killed, alreadyMovedSeen);
  }

  /**
   * No dead letter is in the origin twice; none is lost (each is still in the DLQ or moved); when
   * {@code done}, every one is moved and the DLQ is empty. Moved copies are byte-identical.
   */
  private static void assertInvariant(
      Supplier<Storage> store, Map<Long, Message> dead, boolean done) throws Exception {
    try (Storage s = store.get()) {
      Map<Long, Message> moved = new HashMap<>();
      for (Message m : s.queues().readBatch("jobs", 0, 10 * MESSAGES)) {
        String from = m.properties().get(MessageProperties.REDRIVE_DLQ_OFFSET);
        if (from != null) {
          Message before = moved.put(Long.parseLong(from), m);
          assertThat(before).as("dead letter %s moved twice", from).isNull();
        }
      }
      List<Message> left = s.queues().readBatch("$dlq/jobs", 0, 10 * MESSAGES);
      for (Map.Entry<Long, Message> e : dead.entrySet()) {
        boolean inDlq = left.stream().anyMatch(m -> m.offset() == e.getKey());
        Message copy = moved.get(e.getKey());
        assertThat(inDlq || copy != null).as("dead letter %d lost", e.getKey()).isTrue();
        if (copy != null) {
          assertThat(copy.key()).isEqualTo(e.getValue().key());
          assertThat(copy.value()).isEqualTo(e.getValue().value());
          assertThat(copy.headers()).isEqualTo(e.getValue().headers());
          assertThat(copy.timestamp()).isEqualTo(e.getValue().timestamp());
          assertThat(copy.properties()).containsAllEntriesOf(e.getValue().properties());
        }
      }
      if (done) {
        assertThat(moved).hasSize(MESSAGES);
        assertThat(left).isEmpty();
      }
    }
  }

  /** {@value #MESSAGES} messages in {@code jobs}, all rejected into {@code $dlq/jobs}. */
  private static Map<Long, Message> deadLetters(Supplier<Storage> store) throws Exception {
    try (Storage s = store.get()) {
      QueueManager manager = new QueueManager(s, QueueManagerConfig.defaults());
      manager.createQueue(QueueConfig.durable("jobs").topics("jobs").build());
      for (int i = 0; i < MESSAGES; i++) {
        byte[] value = new byte[64 + i % 64];
        new Random(i).nextBytes(value);
        manager.publishTo(
            "jobs",
            PublishRequest.builder("jobs")
                .key(("job-" + i).getBytes(StandardCharsets.UTF_8))
                .value(value)
                .header("attempt", new byte[] {(byte) i})
                .property("tenant", "t" + i % 3)
                .timestamp(1_700_000_000_000L + i, TimestampType.CREATE_TIME)
                .build());
      }
      ConsumerGroups groups = manager.consumerGroups();
      groups.join("jobs", "", "workers", "w", CursorOption.earliest(GroupMode.QUEUE));
      List<GroupDelivery> got;
      while (!(got = groups.claimBatch("jobs", "workers", "w", 100)).isEmpty()) {
        for (GroupDelivery d : got) {
          d.reject("poison " + d.offset());
        }
      }
      groups.leave("jobs", "", "workers", "w");
      Map<Long, Message> dead = new HashMap<>();
      for (Message m : s.queues().readBatch("$dlq/jobs", 0, 2 * MESSAGES)) {
        dead.put(m.offset(), m);
      }
      assertThat(dead).hasSize(MESSAGES);
      manager.stop();
      return dead;
    }
  }

  /** {@code queue-bridge dlq redrive $dlq/jobs} in a child JVM, its stdout read line by line. */
  private record Child(Process process, BufferedReader out) {
    static Child start(List<String> storeArgs) throws IOException {
      List<String> command =
          new ArrayList<>(
              List.of(
                  Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  QueueBridgeCli.class.getName(),
                  "dlq",
                  "redrive",
                  "$dlq/jobs",
                  "--batch-size",
                  "7",
                  "--rate",
                  "1500/s"));
      command.addAll(storeArgs);
      Process p =
          new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      return new Child(
          p, new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)));
    }
  }
}
