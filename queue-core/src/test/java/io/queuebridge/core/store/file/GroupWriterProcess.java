package io.queuebridge.core.store.file;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The child process of {@link ReadOnlyBesideAnotherProcessTest}: opens the file store in {@code
 * args[0]} writable (holding its lock), creates queue {@code q} and queue-mode group {@code g},
 * appends {@code args[1]} messages ({@code m<offset>}) in batches of 10, claims the first {@code
 * args[2]} for consumer {@code c1} and acknowledges the first {@code args[3]} of those, printing a
 * line after each step and then {@code ready tail=.. cursor=.. committed=.. pending=..}. It then
 * appends 5 more messages for every {@code more} line on its standard input, printing {@code
 * appended <tail>}, until its standard input closes.
 */
public final class GroupWriterProcess {
  private static final Instant T0 = Instant.parse("2024-05-01T00:00:00Z");

  private GroupWriterProcess() {}

  public static void main(String[] args) throws Exception {
    int messages = Integer.parseInt(args[1]);
    int claimed = Integer.parseInt(args[2]);
    int acked = Integer.parseInt(args[3]);
    try (Storage s = QueueStores.file(Path.of(args[0]))) {
      s.queues().createQueue(QueueConfig.durable("q").build());
      s.groups().createGroup(ConsumerGroupState.create("q", "g", "", GroupMode.QUEUE, true, T0));
      for (int i = 0; i < messages; i += 10) {
        append(s, Math.min(10, messages - i));
        say("appended " + s.queues().tail("q"));
      }
      List<PendingEntry> entries = new ArrayList<>();
      for (int o = 0; o < claimed; o++) {
        entries.add(new PendingEntry(o, "c1", T0, 1, T0, T0.plusSeconds(3600)));
      }
      s.groups().claimPending("q", "g", entries, claimed, T0);
      say("claimed " + claimed);
      for (int o = 0; o < acked; o++) {
        s.groups().acknowledgePending("q", "g", "c1", o, 1, T0.plusSeconds(1));
      }
      ConsumerGroupState g = s.groups().getGroup("q", "g");
      say("acked " + acked);
      say(
          "ready tail="
              + s.queues().tail("q")
              + " cursor="
              + g.cursor()
              + " committed="
              + g.committed()
              + " pending="
              + g.pending().size());
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.equals("more")) {
          append(s, 5);
          say("appended " + s.queues().tail("q"));
        }
      }
    }
  }

  private static void append(Storage s, int n) {
    long tail = s.queues().tail("q");
    List<Message> batch = new ArrayList<>(n);
    for (int k = 0; k < n; k++) {
      batch.add(TestMessages.text("m" + (tail + k)));
    }
    s.queues().appendBatch("q", batch);
  }

  private static void say(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
