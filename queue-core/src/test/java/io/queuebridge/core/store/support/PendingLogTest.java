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
