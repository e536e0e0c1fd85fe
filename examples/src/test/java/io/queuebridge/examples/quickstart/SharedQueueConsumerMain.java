package io.queuebridge.examples.quickstart;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.errors.MessageNotPendingException;
import io.queuebridge.core.group.ConsumerGroups;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A consumer application in its own JVM (started by {@link PostgresDistributedIT}): a {@link
 * QueueManager} on the postgres store that competes for a classic queue's messages as a member of a
 * queue-mode group, acknowledging each one it claims.
 *
 * <p>Arguments: {@code <store properties file> <queue> <group> <consumer id>}. It prints {@code
 * READY} once it has joined, then {@code ACKED <offset> <key>} for every message whose
 * acknowledgement the store accepted (a claim that was taken over meanwhile prints {@code LOST
 * <offset>} and does not count), and {@code DONE <acked>} when standard input closes, after leaving
 * the group.
 */
public final class SharedQueueConsumerMain {
  private static final Duration IDLE_WAIT = Duration.ofMillis(200);

  private SharedQueueConsumerMain() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> store = readProperties(Path.of(args[0]));
    String queue = args[1];
    String group = args[2];
    String consumer = args[3];
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    AtomicBoolean stopping = new AtomicBoolean();
    Thread eof =
        new Thread(
            () -> {
              try {
                InputStream in = System.in;
                while (in.read() >= 0) {
                  // wait for the parent to close our standard input
                }
              } catch (IOException ignored) {
                // the parent went away: stop as well
              }
              stopping.set(true);
            },
            "stdin-eof");
    eof.setDaemon(true);

    long acked = 0;
    try (Storage storage = QueueStores.open("postgres", store)) {
      QueueManager manager = new QueueManager(storage, QueueManagerConfig.defaults());
      manager.start();
      ConsumerGroups groups = manager.consumerGroups();
      groups.join(queue, null, group, consumer, CursorOption.resume(GroupMode.QUEUE));
      out.println("READY");
      eof.start();
      try {
        while (!stopping.get()) {
          List<GroupDelivery> batch = groups.claimBatch(queue, group, consumer, 20);
          for (GroupDelivery d : batch) {
            String key =
                d.message().key() == null
                    ? "-"
                    : new String(d.message().key(), StandardCharsets.UTF_8);
            try {
              d.ack();
              acked++;
              out.println("ACKED " + d.offset() + " " + key);
            } catch (MessageNotPendingException e) {
              out.println("LOST " + d.offset());
            }
          }
          if (batch.isEmpty()) {
            // idle: wait for the next append (bounded: a message may become claimable again
            // without one, when another member's claim expires)
            storage.queues().awaitAppend(queue, storage.queues().tail(queue), IDLE_WAIT);
          }
        }
      } finally {
        groups.leave(queue, null, group, consumer);
        manager.stop();
      }
    }
    out.println("DONE " + acked);
  }

  private static Map<String, String> readProperties(Path file) throws IOException {
    Properties p = new Properties();
    try (InputStream in = Files.newInputStream(file)) {
      p.load(in);
    }
    Map<String, String> out = new TreeMap<>();
    p.stringPropertyNames().forEach(k -> out.put(k, p.getProperty(k)));
    return out;
  }
}
