package io.queuebridge.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.PendingEntryNotFoundException;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The one-statement batch paths of the postgres group store ({@code claimPending}, {@code
 * acknowledgeAllPending}): fenced across processes, and with the memory store's results (the memory
 * and file stores share {@code GroupTable}) for the same calls, rewinds and duplicates included.
 */
class PostgresBatchAckTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();

  private static PendingEntry entry(long offset, String holder, int count) {
    return new PendingEntry(offset, holder, T0, count, T0, T0.plusSeconds(30), "");
  }

  private static ConsumerGroupState group() {
    return ConsumerGroupState.create("q", "g", "", GroupMode.QUEUE, true, T0);
  }

  @Test
  void aStaleHoldersBatchAckFromAnotherProcessRemovesOnlyWhatItStillHolds() {
    Map<String, String> config = database.config("stale_holder");
    try (Storage one = QueueStores.open("postgres", config);
        Storage two = QueueStores.open("postgres", config)) {
      one.queues().createQueue(QueueConfig.durable("q").build());
      one.groups().createGroup(group().withCursor(5, T0));
      List<PendingEntry> claimed = new ArrayList<>();
      for (long off = 0; off < 5; off++) {
        claimed.add(entry(off, "c1", 1));
      }
      one.groups().claimPending("q", "g", claimed, 5, T0);
      // the other process steals offset 2 (c1's visibility passed): c2 holds it, delivery 2
      PendingEntry stolen =
          two.groups()
              .transferPending("q", "g", 2, "c1", "c2", T0.plusSeconds(31), Duration.ofSeconds(30));
      assertThat(stolen.deliveryCount()).isEqualTo(2);

      boolean[] removed = new boolean[5];
      long committed =
          one.groups()
              .atomically(
                  "q",
                  "g",
                  () ->
                      one.groups()
                          .acknowledgeAllPending(
                              "q",
                              "g",
                              "c1",
                              new long[] {0, 1, 2, 3, 4},
                              new int[] {1, 1, 1, 1, 1},
                              removed,
                              T0.plusSeconds(32)));
      assertThat(removed).as("offset 2 is c2's now").containsExactly(true, true, false, true, true);
      assertThat(committed).as("2 is still pending").isEqualTo(2);
      ConsumerGroupState g = two.groups().getGroup("q", "g");
      assertThat(g.pending()).containsExactly(stolen);
      assertThat(g.committed()).isEqualTo(2);

      // c1 cannot settle c2's entry even with c2's delivery count; c2 can
      boolean[] again = new boolean[1];
      one.groups()
          .acknowledgeAllPending(
              "q", "g", "c1", new long[] {2}, new int[] {2}, again, T0.plusSeconds(33));
      assertThat(again).containsExactly(false);
      assertThat(two.groups().getGroup("q", "g").pending()).containsExactly(stolen);
      assertThat(
              two.groups()
                  .acknowledgeAllPending(
                      "q", "g", "c2", new long[] {2}, new int[] {2}, again, T0.plusSeconds(34)))
          .isEqualTo(5);
      assertThat(again).containsExactly(true);
      assertThat(one.groups().getGroup("q", "g").pending()).isEmpty();
    }
  }

  /**
   * Random claims (duplicates, other holders, later deliveries), transfers, rewinds of the cursor
   * below pending offsets, single and batch acknowledgements with duplicates, wrong holders and
   * wrong counts: after every call the postgres group and the memory store's agree, and so do the
   * answers.
   */
  @Test
  void randomBatchesGiveTheMemoryStoresResults() {
    try (Storage pg = QueueStores.open("postgres", database.config("versus_memory"));
        Storage mem = QueueStores.open("memory", Map.of())) {
      for (Storage s : List.of(pg, mem)) {
        s.queues().createQueue(QueueConfig.durable("q").build());
        s.groups().createGroup(group());
      }
      Random r = new Random(20261202);
      String[] holders = {"c1", "c2", PendingEntry.NO_HOLDER};
      long cursor = 0;
      int batchRemovals = 0; // batch acks that removed something
      int rewound = 0; // batch acks while the cursor was below a pending offset
      for (int step = 0; step < 300; step++) {
        Instant now = T0.plusSeconds(step + 1);
        int op = r.nextInt(10);
        String what;
        Object pgAnswer;
        Object memAnswer;
        if (op < 4) {
          List<PendingEntry> entries = new ArrayList<>();
          int n = r.nextInt(6);
          for (int i = 0; i < n; i++) {
            long off = r.nextInt(4) == 0 ? Math.max(0, cursor - 1 - r.nextInt(5)) : cursor + i;
            String holder = holders[r.nextInt(holders.length)];
            entries.add(entry(off, holder, holder.isEmpty() ? 0 : 1 + r.nextInt(2)));
          }
          cursor += n;
          long c = cursor;
          what = "claimPending " + entries + " cursor " + c;
          pgAnswer = call(() -> claim(pg.groups(), entries, c, now));
          memAnswer = call(() -> claim(mem.groups(), entries, c, now));
        } else if (op < 5) {
          long c = Math.max(0, cursor - r.nextInt(8));
          what = "updateCursor " + c + " (a rewind)";
          pgAnswer = call(() -> cursor(pg.groups(), c, now));
          memAnswer = call(() -> cursor(mem.groups(), c, now));
        } else if (op < 6) {
          long off = r.nextInt((int) cursor + 1);
          String from = holders[r.nextInt(2)];
          what = "transferPending " + off + " from " + from;
          pgAnswer = call(() -> transfer(pg.groups(), off, from, now));
          memAnswer = call(() -> transfer(mem.groups(), off, from, now));
        } else if (op < 7) {
          long off = r.nextInt((int) cursor + 1);
          String holder = holders[r.nextInt(holders.length)];
          int count = r.nextInt(3);
          what = "acknowledgePending " + off + " " + holder + " " + count;
          pgAnswer = call(() -> pg.groups().acknowledgePending("q", "g", holder, off, count, now));
          memAnswer =
              call(() -> mem.groups().acknowledgePending("q", "g", holder, off, count, now));
        } else {
          int n = r.nextInt(7);
          long[] offsets = new long[n];
          int[] counts = new int[n];
          List<PendingEntry> pending = pg.groups().getAllPending("q", "g");
          for (int i = 0; i < n; i++) {
            if (!pending.isEmpty() && r.nextInt(4) > 0) {
              PendingEntry e = pending.get(r.nextInt(pending.size()));
              offsets[i] = e.offset();
              counts[i] = r.nextInt(5) == 0 ? e.deliveryCount() + 1 : e.deliveryCount();
            } else {
              offsets[i] = r.nextInt((int) cursor + 2);
              counts[i] = r.nextInt(3);
            }
          }
          String holder = holders[r.nextInt(holders.length)];
          what =
              "acknowledgeAllPending "
                  + holder
                  + " "
                  + Arrays.toString(offsets)
                  + " "
                  + Arrays.toString(counts);
          ConsumerGroupState before = pg.groups().getGroup("q", "g");
          if (!before.pending().isEmpty()
              && before.pending().get(before.pending().size() - 1).offset() >= before.cursor()) {
            rewound++;
          }
          pgAnswer = call(() -> ackAll(pg.groups(), holder, offsets, counts, now));
          memAnswer = call(() -> ackAll(mem.groups(), holder, offsets, counts, now));
          if (pgAnswer.toString().contains("true")) {
            batchRemovals++;
          }
        }
        assertThat(pgAnswer).as("step %d: %s", step, what).isEqualTo(memAnswer);
        assertThat(pg.groups().getGroup("q", "g"))
            .as("step %d: %s", step, what)
            .isEqualTo(mem.groups().getGroup("q", "g"));
      }
      assertThat(batchRemovals).as("batch acks that removed entries").isGreaterThan(20);
      assertThat(rewound).as("batch acks after a rewind below pending offsets").isGreaterThan(5);
    }
  }

  /** The answer of a call, or the kind of exception it threw. */
  private static Object call(java.util.function.Supplier<Object> call) {
    try {
      return call.get();
    } catch (PendingEntryNotFoundException e) {
      return "not found";
    }
  }

  private static Object claim(
      ConsumerGroupStore groups, List<PendingEntry> entries, long cursor, Instant now) {
    groups.claimPending("q", "g", entries, cursor, now);
    return "claimed";
  }

  private static Object cursor(ConsumerGroupStore groups, long cursor, Instant now) {
    groups.updateCursor("q", "g", cursor, now);
    return "moved";
  }

  private static Object transfer(ConsumerGroupStore groups, long off, String from, Instant now) {
    return groups.transferPending("q", "g", off, from, "c3", now, Duration.ofSeconds(30));
  }

  private static Object ackAll(
      ConsumerGroupStore groups, String holder, long[] offsets, int[] counts, Instant now) {
    boolean[] removed = new boolean[offsets.length];
    long committed = groups.acknowledgeAllPending("q", "g", holder, offsets, counts, removed, now);
    return committed + " " + Arrays.toString(removed);
  }
}
