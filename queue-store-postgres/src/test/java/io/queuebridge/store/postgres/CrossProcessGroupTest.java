package io.queuebridge.store.postgres;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Competing consumers of one queue-mode group in two "processes" sharing one database: two
 * independent Storage instances (two pools, as two JVMs would have), each under its own
 * GroupCoordinator (so the in-JVM coordinator lock serialises nothing between them), and then a
 * real child JVM. Every message must be acked exactly once and none delivered to two members: only
 * {@code ConsumerGroupStore.atomically} makes claims atomic across the coordinators.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CrossProcessGroupTest {
  private static final String QUEUE = "work";
  private static final String GROUP = "g";
  private static final int MESSAGES = 400;

  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();

  @Test
  void competingConsumersOnTwoStoragesAckEveryMessageExactlyOnce() throws Exception {
    Map<String, String> config = database.config("two_storages");
    try (Storage one = QueueStores.open("postgres", config);
        Storage two = QueueStores.open("postgres", config)) {
      fill(one);
      GroupCoordinator first = GroupCoordinator.builder(one).build();
      GroupCoordinator second = GroupCoordinator.builder(two).build();
      Set<Long> delivered = ConcurrentHashMap.newKeySet();
      List<Long> duplicates = new CopyOnWriteArrayList<>();
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        List<Future<Boolean>> members = new ArrayList<>();
        int i = 0;
        for (GroupCoordinator c : List.of(first, second, first, second)) {
          boolean batchAck = i >= 2; // two members ack one by one, two with ackAll
          String id = "member-" + i++;
          members.add(
              pool.submit(
                  () ->
                      CompetingConsumer.run(
                          c,
                          QUEUE,
                          GROUP,
                          id,
                          MESSAGES,
                          Duration.ofMinutes(2),
                          () -> {},
                          offset -> {
                            if (!delivered.add(offset)) {
                              duplicates.add(offset);
                            }
                          },
                          batchAck)));
        }
        for (Future<Boolean> m : members) {
          assertThat(m.get(3, TimeUnit.MINUTES)).as("member finished in time").isTrue();
        }
      } finally {
        pool.shutdownNow();
      }
      assertThat(duplicates).as("offsets delivered to two members").isEmpty();
      assertThat(delivered).hasSize(MESSAGES).allMatch(o -> o >= 0 && o < MESSAGES);
      assertFullyAcked(two);
    }
  }

  @Test
  void aConsumerInAChildJvmAndOneInThisJvmAckEveryMessageExactlyOnce() throws Exception {
    Map<String, String> config = database.config("child_jvm");
    try (Storage storage = QueueStores.open("postgres", config)) {
      fill(storage);
      Process child = startChild(config);
      Set<Long> delivered = ConcurrentHashMap.newKeySet();
      List<Long> duplicates = new CopyOnWriteArrayList<>();
      List<String> childOutput = new CopyOnWriteArrayList<>();
      Thread reader =
          new Thread(
              () -> {
                try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(child.getInputStream(), UTF_8))) {
                  String line;
                  while ((line = r.readLine()) != null) {
                    childOutput.add(line);
                    if (line.startsWith("ACK ")
                        && !delivered.add(Long.parseLong(line.substring(4)))) {
                      duplicates.add(Long.parseLong(line.substring(4)));
                    }
                  }
                } catch (java.io.IOException e) {
                  childOutput.add("reader failed: " + e);
                }
              });
      reader.start();
      try {
        await("the child joined the group")
            .atMost(Duration.ofMinutes(1))
            .until(() -> childOutput.contains("JOINED") || !child.isAlive());
        GroupCoordinator here = GroupCoordinator.builder(storage).build();
        boolean done =
            CompetingConsumer.run(
                here,
                QUEUE,
                GROUP,
                "parent",
                MESSAGES,
                Duration.ofMinutes(2),
                () -> {},
                offset -> {
                  if (!delivered.add(offset)) {
                    duplicates.add(offset);
                  }
                });
        assertThat(done).as("parent finished in time").isTrue();
        assertThat(child.waitFor(2, TimeUnit.MINUTES)).as("child exited").isTrue();
        reader.join(TimeUnit.SECONDS.toMillis(30));
        assertThat(child.exitValue()).as("child exit status; output %s", childOutput).isZero();
      } finally {
        child.destroyForcibly();
      }
      assertThat(childOutput).as("the child consumed too").anyMatch(l -> l.startsWith("ACK "));
      assertThat(duplicates).as("offsets delivered to both JVMs").isEmpty();
      assertThat(delivered).hasSize(MESSAGES);
      assertFullyAcked(storage);
    }
  }

  private static void fill(Storage storage) {
    storage.queues().createQueue(QueueConfig.durable(QUEUE).build());
    List<Message> batch = new ArrayList<>();
    for (int i = 0; i < MESSAGES; i++) {
      batch.add(Message.builder().topic(QUEUE).value(("m" + i).getBytes(UTF_8)).build());
    }
    storage.queues().appendBatch(QUEUE, batch);
  }

  private static void assertFullyAcked(Storage storage) {
    ConsumerGroupState g = storage.groups().getGroup(QUEUE, GROUP);
    assertThat(g.pending()).as("nothing left pending").isEmpty();
    assertThat(g.committed()).isEqualTo(MESSAGES);
    assertThat(g.cursor()).isEqualTo(MESSAGES);
  }

  private static Process startChild(Map<String, String> config) throws java.io.IOException {
    Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
    ProcessBuilder pb =
        new ProcessBuilder(
            java.toString(),
            "-cp",
            System.getProperty("java.class.path"),
            CompetingConsumer.class.getName(),
            QUEUE,
            GROUP,
            "child",
            Integer.toString(MESSAGES),
            "120");
    pb.environment().put("QB_URL", config.get("url"));
    pb.environment().put("QB_USER", config.get("user"));
    pb.environment().put("QB_PASSWORD", config.get("password"));
    pb.environment().put("QB_SCHEMA", config.get("schema"));
    pb.redirectError(new File(System.getProperty("java.io.tmpdir"), "qb-child-consumer.err"));
    return pb.start();
  }
}
