package io.queuebridge.core.store.support;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.store.PendingEntry;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** {@link PendingLog} against a {@link TreeMap} model: same content, same order, at every step. */
class PendingLogTest {
  private static final Instant T0 = Instant.parse("2024-01-01T00:00:00Z");

  private static PendingEntry entry(long offset, int count) {
    return new PendingEntry(offset, "c", T0, count, T0, T0);
  }

  @Test
  void randomAppendsInsertsReplacementsAndRemovalsMatchASortedMap() {
    Random random = new Random(7);
    for (int run = 0; run < 50; run++) {
      PendingLog log = new PendingLog();
      TreeMap<Long, PendingEntry> model = new TreeMap<>();
      long next = 0;
      for (int step = 0; step < 2_000; step++) {
        int dice = random.nextInt(100);
        if (dice < 45) {
          PendingEntry e = entry(next, step); // claims: above everything pending
          next += 1 + random.nextInt(3);
          log.put(e);
          model.put(e.offset(), e);
        } else if (dice < 55 && next > 0) {
          PendingEntry e = entry(random.nextInt((int) next), step); // rewinds and replacements
          log.put(e);
          model.put(e.offset(), e);
        } else if (dice < 80 && !model.isEmpty()) {
          long lowest = model.firstKey(); // in-order acks
          assertThat(log.remove(lowest)).isEqualTo(model.remove(lowest));
        } else if (next > 0) {
          long any = random.nextInt((int) next); // out-of-order acks, misses included
          assertThat(log.remove(any)).isEqualTo(model.remove(any));
        }
        long probe = next == 0 ? 0 : random.nextInt((int) next + 1);
        assertThat(log.get(probe)).isEqualTo(model.get(probe));
        assertThat(log.size()).isEqualTo(model.size());
        assertThat(log.first()).isEqualTo(model.isEmpty() ? null : model.firstEntry().getValue());
        if (step % 97 == 0) {
          assertThat(log.toArray()).containsExactlyElementsOf(model.values());
        }
      }
      assertThat(log.toArray()).containsExactlyElementsOf(model.values());
    }
  }

  @Test
  void theDueAndKeyIndexesAnswerWhatASortedScanOfTheLiveEntriesAnswersAtEveryStep() {
    Random random = new Random(11);
    for (int run = 0; run < 30; run++) {
      PendingLog log = new PendingLog();
      TreeMap<Long, PendingEntry> model = new TreeMap<>();
      long next = 0;
      long clock = 0; // seconds after T0: claims are visible again 30 s after "now"
      List<PendingEntry> reused = new ArrayList<>();
      for (int step = 0; step < 3_000; step++) {
        clock += random.nextInt(2);
        int dice = random.nextInt(100);
        PendingEntry e = null;
        if (dice < 40) {
          e = visible(next, clock + 30); // a claim, in visibility order
          next += 1 + random.nextInt(2);
        } else if (dice < 48) {
          e =
              random.nextBoolean()
                  ? PendingEntry.scheduled(next, T0, T0.plusSeconds(clock + random.nextInt(600)))
                  : PendingEntry.blocked(next, T0, "k" + random.nextInt(5)); // never due
          next++;
        } else if (dice < 58 && !model.isEmpty()) {
          long at = pick(model, random);
          // a nack's retry time, a renewal, a blocked entry released (keeping its key)
          e = visible(at, clock + random.nextInt(60)).withOrderKey(model.get(at).orderKey());
        } else if (dice < 62 && !reused.isEmpty()) {
          e = reused.get(random.nextInt(reused.size())); // the same object again
          if (model.containsKey(e.offset()) && model.get(e.offset()) != e) {
            e = null;
          }
        } else if (dice < 85 && !model.isEmpty()) {
          long at = random.nextInt(3) == 0 ? pick(model, random) : model.firstKey();
          PendingEntry gone = log.remove(at);
          assertThat(gone).isSameAs(model.remove(at));
          reused.add(gone);
        }
        if (e != null) {
          log.put(e);
          model.put(e.offset(), e);
        }
        if (step % 7 == 0) {
          Instant now = T0.plusSeconds(clock + random.nextInt(400));
          List<PendingEntry> expected =
              model.values().stream()
                  .filter(p -> !p.visibleAt().isAfter(now))
                  .sorted(PendingEntry.BY_VISIBILITY)
                  .toList();
          int limit = 1 + random.nextInt(50);
          assertThat(log.due(now, null, limit))
              .containsExactlyElementsOf(expected.subList(0, Math.min(limit, expected.size())));
          if (expected.size() > 2) {
            PendingEntry after = expected.get(random.nextInt(expected.size() - 1));
            List<PendingEntry> rest =
                expected.stream()
                    .filter(p -> PendingEntry.BY_VISIBILITY.compare(p, after) > 0)
                    .toList();
            assertThat(log.due(now, after, limit))
                .containsExactlyElementsOf(rest.subList(0, Math.min(limit, rest.size())));
          }
          assertThat(log.scheduledCount())
              .isEqualTo(model.values().stream().filter(PendingEntry::isScheduled).count());
          assertThat(log.blockedCount())
              .isEqualTo(model.values().stream().filter(PendingEntry::isBlocked).count());
          for (int k = 0; k < 6; k++) {
            String key = "k" + k;
            PendingEntry first =
                model.values().stream()
                    .filter(p -> p.orderKey().equals(key))
                    .findFirst()
                    .orElse(null);
            assertThat(log.hasKey(key)).as(key).isEqualTo(first != null);
            assertThat(log.firstWithKey(key)).as(key).isSameAs(first);
          }
        }
      }
    }
  }

  @Test
  void batchesAckedOutOfOrderLeaveTheDueIndexAnsweringFromItsFirstLiveEntry() {
    // Competing members: three batches claimed in order, settled in another order.
    PendingLog log = new PendingLog();
    for (long o = 0; o < 30; o++) {
      log.put(visible(o, 30 + o / 10)); // batch b is visible again at 30 + b seconds
    }
    for (long o = 10; o < 20; o++) {
      log.remove(o); // the second batch first
    }
    assertThat(log.due(T0.plusSeconds(29), null, 100)).isEmpty();
    for (long o = 0; o < 10; o++) {
      log.remove(o); // then the first: every entry before the third batch is gone
    }
    assertThat(log.due(T0.plusSeconds(31), null, 100)).isEmpty();
    assertThat(log.due(T0.plusSeconds(32), null, 5))
        .extracting(PendingEntry::offset)
        .containsExactly(20L, 21L, 22L, 23L, 24L);
    log.put(visible(5, 1)); // a nack's retry, earlier than everything indexed
    assertThat(log.due(T0.plusSeconds(1), null, 100))
        .extracting(PendingEntry::offset)
        .containsExactly(5L);
  }

  private static PendingEntry visible(long offset, long seconds) {
    return new PendingEntry(offset, "c", T0, 1, T0, T0.plusSeconds(seconds));
  }

  private static long pick(TreeMap<Long, PendingEntry> model, Random random) {
    List<Long> keys = new ArrayList<>(model.keySet());
    return keys.get(random.nextInt(keys.size()));
  }

  @Test
  void resetReplacesTheContent() {
    PendingLog log = new PendingLog();
    for (int i = 0; i < 100; i++) {
      log.put(entry(i, 1));
    }
    List<PendingEntry> sorted = new ArrayList<>();
    for (Map.Entry<Long, PendingEntry> e :
        new TreeMap<>(Map.of(3L, entry(3, 2), 9L, entry(9, 2))).entrySet()) {
      sorted.add(e.getValue());
    }
    log.reset(sorted);
    assertThat(log.toArray()).containsExactly(entry(3, 2), entry(9, 2));
    assertThat(log.get(50)).isNull();
    log.clear();
    assertThat(log.isEmpty()).isTrue();
    assertThat(log.first()).isNull();
  }
}
