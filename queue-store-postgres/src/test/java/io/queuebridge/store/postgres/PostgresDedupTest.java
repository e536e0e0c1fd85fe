package io.queuebridge.store.postgres;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.store.AppendResult;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Deduplicated appends across processes (BEHAVIOUR Q-DEDUP): two stores with their own pools on one
 * schema — two Connect workers sharing the database — and 100 publishers split between them
 * retrying the same ids store each id exactly once, every publisher answered with its offset; the
 * ids older than the window are deleted by later appends, so the table stays bounded by the window.
 * Skipped, visibly, without the PostgreSQL test server.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class PostgresDedupTest {
  private static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");
  private static final Duration WINDOW = Duration.ofMinutes(5);

  private PostgresTestDatabase database;
  private final List<Storage> stores = new ArrayList<>();

  @AfterEach
  void tearDown() {
    stores.forEach(Storage::close);
    if (database != null) {
      database.close();
    }
  }

  private Storage open(String schema) {
    Map<String, String> config = database.config(schema);
    config.put("pool.size", "12");
    Storage s = QueueStores.open("postgres", config);
    stores.add(s);
    return s;
  }

  private static Message dedup(String value, String id, Instant at) {
    return Message.builder()
        .topic("t")
        .value(value.getBytes(UTF_8))
        .property(MessageProperties.DEDUP_ID, id)
        .createdAt(at)
        .build();
  }

  @Test
  void hundredPublishersOnTwoStoresRetryingTheSameIdsStoreEachIdOnce() throws Exception {
    database = PostgresTestDatabase.create();
    Storage a = open("shared");
    Storage b = open("shared");
    a.queues().createQueue(QueueConfig.durable("q").dedupWindow(WINDOW).build());
    int publishers = 100;
    int ids = 1_000;
    ExecutorService pool = Executors.newFixedThreadPool(publishers);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<long[]>> answers = new ArrayList<>();
      for (int p = 0; p < publishers; p++) {
        int self = p;
        Storage mine = p % 2 == 0 ? a : b;
        answers.add(
            pool.submit(
                () -> {
                  long[] offsets = new long[ids];
                  go.await();
                  for (int k = 0; k < ids; k++) {
                    int i = (k * 7919 + self * 101) % ids;
                    AppendResult r =
                        mine.queues()
                            .appendDeduplicatedAndSync(
                                "q", dedup("p" + self, "id-" + i, T0), T0.minus(WINDOW));
                    offsets[i] = r.offset();
                  }
                  return offsets;
                }));
      }
      go.countDown();
      List<long[]> all = new ArrayList<>();
      for (Future<long[]> f : answers) {
        all.add(f.get(200, TimeUnit.SECONDS));
      }
      assertThat(a.queues().tail("q")).isEqualTo(ids);
      Map<String, Long> stored = new HashMap<>();
      for (Message m : b.queues().readBatch("q", 0, ids + 1)) {
        assertThat(stored.put(m.properties().get(MessageProperties.DEDUP_ID), m.offset())).isNull();
      }
      assertThat(stored).hasSize(ids);
      for (long[] offsets : all) {
        for (int i = 0; i < ids; i++) {
          assertThat(offsets[i]).as("id-%d", i).isEqualTo(stored.get("id-" + i));
        }
      }
    } finally {
      pool.shutdownNow();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void idsOlderThanTheWindowAreDeletedByLaterAppends() throws Exception {
    database = PostgresTestDatabase.create();
    Storage s = open("pruned");
    s.queues().createQueue(QueueConfig.durable("q").dedupWindow(WINDOW).build());
    for (int i = 0; i < 300; i++) {
      s.queues().appendDeduplicated("q", dedup("old", "old-" + i, T0), T0.minus(WINDOW));
    }
    assertThat(dedupRows()).isEqualTo(300);
    Instant later = T0.plus(WINDOW).plusSeconds(2); // every old id is now whole seconds outside
    s.queues().appendDeduplicated("q", dedup("new", "new-0", later), later.minus(WINDOW));
    assertThat(dedupRows()).as("256 forgotten by one append, the new one added").isEqualTo(45);
    s.queues().appendDeduplicated("q", dedup("new", "new-1", later), later.minus(WINDOW));
    assertThat(dedupRows()).isEqualTo(2);
    assertThat(
            s.queues().appendDeduplicated("q", dedup("again", "old-7", later), later.minus(WINDOW)))
        .isEqualTo(AppendResult.stored(302));
  }

  private long dedupRows() throws Exception {
    try (var c = database.connect();
        var st = c.createStatement();
        var rs = st.executeQuery("SELECT count(*) FROM pruned.dedup")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
