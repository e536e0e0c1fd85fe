package io.queuebridge.core.store.contract;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.group.GroupDelivery;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Competing consumers of an ordered queue (BEHAVIOUR Q-ORDER), for the tests of every store: each
 * claimer runs on its own thread, claims batches, nacks one message in 20 at random and acks the
 * others, until every published message is acknowledged; then the test asserts that no key was ever
 * held by two deliveries at once and that every key's messages were acknowledged in publish order.
 * Messages carry their key as the message key and their publish sequence number as the value.
 */
public final class CompetingKeyConsumers {
  private CompetingKeyConsumers() {}

  /**
   * Runs one thread per claimer until {@code published} (key → sequence numbers in publish order)
   * is acknowledged in full, and asserts the order. A claimer returns the next batch for its own
   * member; an empty batch is retried.
   */
  public static void drainAndCheck(
      List<Function<Integer, List<GroupDelivery>>> claimers,
      Map<String, List<Integer>> published,
      Duration timeout)
      throws Exception {
    int messages = published.values().stream().mapToInt(List::size).sum();
    Map<String, List<Integer>> acked = new ConcurrentHashMap<>();
    Map<String, String> holder = new ConcurrentHashMap<>();
    AtomicInteger done = new AtomicInteger();
    List<String> violations = Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(claimers.size());
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < claimers.size(); w++) {
        String me = "member " + w;
        Function<Integer, List<GroupDelivery>> claim = claimers.get(w);
        Random r = new Random(w);
        workers.add(
            pool.submit(
                () -> {
                  while (done.get() < messages) {
                    for (GroupDelivery d : claim.apply(8)) {
                      String key = new String(d.message().keyUnsafe(), UTF_8);
                      String other = holder.putIfAbsent(key, me + "@" + d.offset());
                      if (other != null) {
                        violations.add(key + " held by " + other + " and " + me);
                      }
                      holder.remove(key); // before settling: the next holder may come at once
                      if (r.nextInt(20) == 0) {
                        d.nack(Duration.ZERO);
                      } else {
                        acked
                            .computeIfAbsent(
                                key, k -> Collections.synchronizedList(new ArrayList<>()))
                            .add(Integer.parseInt(new String(d.message().valueUnsafe(), UTF_8)));
                        d.ack();
                        done.incrementAndGet();
                      }
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : workers) {
        f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(violations).as("keys held by two deliveries at once").isEmpty();
    assertThat(acked)
        .as("every key's messages, acknowledged in publish order")
        .isEqualTo(published);
  }
}
