package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.errors.StoreLockedException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A read-only open beside a writer in another process ({@link GroupWriterProcess}, started with
 * this JVM's java and class path): while the child holds the store's lock, the parent reads what
 * the child reported (messages, offsets, the group's cursor, committed offset, pending entries and
 * lag) and follows its later appends.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ReadOnlyBesideAnotherProcessTest {
  private static final Pattern READY =
      Pattern.compile("ready tail=(\\d+) cursor=(\\d+) committed=(\\d+) pending=(\\d+)");
  private static final Pattern APPENDED = Pattern.compile("appended (\\d+)");

  @TempDir Path tmp;

  @Test
  void theParentReadsWhatTheChildCommittedWhileTheChildHoldsTheStore() throws Exception {
    Path dir = tmp.resolve("store");
    Process child =
        new ProcessBuilder(
                CrashRecoveryTest.javaBin(),
                "-Xmx128m",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                GroupWriterProcess.class.getName(),
                dir.toString(),
                "203",
                "40",
                "25")
            .redirectError(tmp.resolve("child.err").toFile())
            .start();
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread pump =
        new Thread(
            () -> {
              try (BufferedReader out =
                  new BufferedReader(
                      new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l = out.readLine(); l != null; l = out.readLine()) {
                  lines.add(l);
                }
              } catch (java.io.IOException e) {
                lines.add("pump failed: " + e);
              }
            },
            "child stdout");
    pump.setDaemon(true);
    pump.start();
    try {
      Matcher ready = READY.matcher(next(lines, "ready", child));
      assertThat(ready.matches()).isTrue();
      long tail = Long.parseLong(ready.group(1));
      long cursor = Long.parseLong(ready.group(2));
      long committed = Long.parseLong(ready.group(3));
      int pending = Integer.parseInt(ready.group(4));
      assertThat(tail).isEqualTo(203);
      assertThat(cursor).isEqualTo(40);
      assertThat(committed).isEqualTo(25);
      assertThat(pending).isEqualTo(15);

      assertThatThrownBy(() -> QueueStores.file(dir))
          .as("the child holds the store")
          .isInstanceOf(StoreLockedException.class)
          .hasMessageContaining("pid " + child.pid());
      try (Storage ro = QueueStores.provider("file").openReadOnly(Map.of("path", dir.toString()))) {
        assertThat(ro.queues().head("q")).isZero();
        assertThat(ro.queues().tail("q")).isEqualTo(tail);
        assertThat(ro.queues().count("q")).isEqualTo(tail);
        List<Message> all = ro.queues().readBatch("q", 0, 1000);
        assertThat(all).hasSize((int) tail);
        for (Message m : all) {
          assertThat(TestMessages.text(m)).isEqualTo("m" + m.offset());
        }
        ConsumerGroupState g = ro.groups().getGroup("q", "g");
        assertThat(g.cursor()).isEqualTo(cursor);
        assertThat(g.committed()).isEqualTo(committed);
        assertThat(g.pending()).hasSize(pending);
        assertThat(g.pending()).extracting(PendingEntry::offset).first().isEqualTo(committed);
        assertThat(g.pending()).extracting(PendingEntry::consumerId).containsOnly("c1");
        assertThat(ro.queues().tail("q") - g.committed()).as("lag").isEqualTo(tail - committed);

        OutputStream in = child.getOutputStream();
        Map<String, Long> seen = new HashMap<>();
        for (int round = 1; round <= 3; round++) {
          in.write("more\n".getBytes(StandardCharsets.UTF_8));
          in.flush();
          Matcher appended = APPENDED.matcher(next(lines, "appended", child));
          assertThat(appended.matches()).isTrue();
          long now = Long.parseLong(appended.group(1));
          assertThat(now).isEqualTo(tail + 5L * round);
          assertThat(ro.queues().awaitAppend("q", now - 1, Duration.ofSeconds(30))).isTrue();
          assertThat(ro.queues().tail("q")).isEqualTo(now);
          assertThat(TestMessages.text(ro.queues().read("q", now - 1))).isEqualTo("m" + (now - 1));
          seen.put("round " + round, now);
        }
        assertThat(seen).hasSize(3);
        in.close();
        assertThat(child.waitFor(30, TimeUnit.SECONDS)).as("the child exits").isTrue();
        assertThat(child.exitValue()).isZero();
        assertThat(ro.queues().tail("q")).as("what the child left").isEqualTo(tail + 15);
        assertThat(ro.groups().getGroup("q", "g")).isEqualTo(g);
      }
    } finally {
      child.destroyForcibly();
      child.waitFor(30, TimeUnit.SECONDS);
    }
  }

  /** The next line the child printed that starts with {@code prefix}, waiting at most 60 s. */
  private static String next(BlockingQueue<String> lines, String prefix, Process child)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      long left = deadline - System.nanoTime();
      String line = lines.poll(Math.max(0, left), TimeUnit.NANOSECONDS);
      if (line == null) {
        throw new AssertionError(
            "the child printed no line starting with '"
                + prefix
                + "' within 60 s (alive: "
                + child.isAlive()
                + ")");
      }
      if (line.startsWith(prefix)) {
        return line;
      }
    }
  }
}
