package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash safety end to end (BEHAVIOUR Q-DUR, F-RECOVER): a child JVM ({@link CrashWriter}) appends
 * with {@code appendAndSync} from several threads and reports each acknowledged append; the test
 * kills it with SIGKILL at random moments, reopens the store, and checks that every acknowledged
 * record is present and intact, that the log has no duplicates and no damaged record, and that
 * appends continue at the right offset. Twenty-odd cycles on one store.
 */
class CrashRecoveryTest {
  @TempDir Path tmp;

  private record Ack(long offset, String hash, int length) {}

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void everyAcknowledgedDurableAppendSurvivesSigkillIntactInOrderAndOnce() throws Exception {
    Path dir = tmp.resolve("store");
    Random rnd = new Random(42);
    Map<Long, Ack> acked = new ConcurrentHashMap<>();
    long expectedTail = 0;
    int cycles = 22;
    long totalCut = 0;
    for (int cycle = 0; cycle < cycles; cycle++) {
      List<String> errors = new CopyOnWriteArrayList<>();
      AtomicLong ready = new AtomicLong(-1);
      AtomicInteger acksThisCycle = new AtomicInteger();
      Process child =
          new ProcessBuilder(
                  javaBin(),
                  "-Xmx128m",
                  "-XX:TieredStopAtLevel=1",
                  "-cp",
                  System.getProperty("java.class.path"),
                  CrashWriter.class.getName(),
                  dir.toString(),
                  "4",
                  "run" + cycle)
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      Thread reader =
          new Thread(
              () -> {
                try (BufferedReader r =
                    new BufferedReader(
                        new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = r.readLine()) != null) {
                    String[] f = line.split(" ");
                    switch (f[0]) {
                      case "ready" -> ready.set(Long.parseLong(f[1]));
                      case "ack" -> {
                        Ack a = new Ack(Long.parseLong(f[1]), f[2], Integer.parseInt(f[3]));
                        Ack prev = acked.putIfAbsent(a.offset(), a);
                        if (prev != null) {
                          errors.add("offset acknowledged twice: " + a.offset());
                        }
                        acksThisCycle.incrementAndGet();
                      }
                      default -> errors.add(line);
                    }
                  }
                } catch (IOException e) {
                  // the child died mid-line: its last line is incomplete and not an ack
                }
              });
      reader.start();
      int target = 1 + rnd.nextInt(cycle % 3 == 0 ? 5 : 150);
      await("child acknowledges " + target + " appends")
          .atMost(Duration.ofSeconds(60))
          .until(() -> acksThisCycle.get() >= target || !child.isAlive());
      child.destroyForcibly(); // SIGKILL on Linux
      assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();
      reader.join(30_000);
      assertThat(errors).as("child output, cycle %d", cycle).isEmpty();
      assertThat(ready.get())
          .as("appends continue at the tail left by the last reopen")
          .isEqualTo(expectedTail);

      try (FileStorage s =
          FileStorage.open(CrashWriter.config(dir), Clock.systemUTC(), StoreIo.DEFAULT)) {
        DurableQueueStore q = s.queues();
        totalCut += s.recovery().logBytesCut();
        long tail = q.tail(CrashWriter.QUEUE);
        long maxAcked = acked.keySet().stream().mapToLong(Long::longValue).max().orElse(-1);
        assertThat(tail)
            .as("cycle %d: tail covers every acknowledged offset", cycle)
            .isGreaterThan(maxAcked);
        assertThat(q.head(CrashWriter.QUEUE)).isZero();
        Set<String> ids = new HashSet<>();
        List<Message> all = new ArrayList<>();
        for (long o = 0; o < tail; o += 500) {
          all.addAll(q.readBatch(CrashWriter.QUEUE, o, 500));
        }
        assertThat(all).hasSize((int) tail);
        for (int i = 0; i < all.size(); i++) {
          Message m = all.get(i);
          assertThat(m.offset()).isEqualTo(i);
          assertThat(ids.add(m.id()))
              .as("cycle %d: record %s appears once", cycle, m.id())
              .isTrue();
          Ack a = acked.get((long) i);
          if (a != null) {
            assertThat(CrashWriter.hash(m.valueUnsafe()))
                .as("acknowledged offset %d intact", i)
                .isEqualTo(a.hash());
            assertThat(m.valueUnsafe()).hasSize(a.length());
          }
        }
        long next =
            q.append(
                CrashWriter.QUEUE,
                Message.builder().id("parent-" + cycle).value(new byte[] {1}).build());
        assertThat(next).as("appends continue at the recovered tail").isEqualTo(tail);
        expectedTail = tail + 1;
      }
    }
    assertThat(acked).as("acknowledged appends over all cycles").hasSizeGreaterThan(cycles);
    System.out.printf(
        "crash test: %d cycles, %d acknowledged appends, final tail %d, %d bytes of torn tails cut%n",
        cycles, acked.size(), expectedTail, totalCut);
  }

  static String javaBin() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }
}
