package io.queuebridge.core.store.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.group.GroupDelivery;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Competing members of one queue-mode group, for the tests of every store: each member runs on its
 * own thread, claims batches, gives one message in {@code nackEvery} back and acks the others (half
 * the members with one {@code ackAll}, half one by one), until every message is acknowledged; then
 * the test asserts that no message was held by two members at once and none was acknowledged twice
 * or lost. The caller checks the group's stored state afterwards.
 */
public final class CompetingMembers {
  private CompetingMembers() {}

  /**
   * One member: {@code claim} returns its next batch of at most the given size; {@code ackAll} acks
   * a batch in one call and returns the deliveries it could not ack.
   */
  public record Member(
      Function<Integer, List<GroupDelivery>> claim,
      Function<List<GroupDelivery>, List<GroupDelivery>> ackAll) {}

  /** Drains {@code messages} with {@code members} and asserts the rules above. */
  public static void drainAndCheck(
      List<Member> members, int messages, int batch, int nackEvery, Duration timeout)
      throws Exception {
    Map<Long, Integer> holder = new ConcurrentHashMap<>();
    Set<Long> acked = ConcurrentHashMap.newKeySet();
    List<String> violations = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger done = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(members.size());
    try {
      List<Future<?>> running = new ArrayList<>();
      for (int i = 0; i < members.size(); i++) {
        int me = i;
        Member member = members.get(i);
        boolean oneCall = i % 2 == 0;
        running.add(
            pool.submit(
                () -> {
                  int round = 0;
                  while (done.get() < messages) {
                    List<GroupDelivery> claimed = member.claim().apply(batch);
                    for (GroupDelivery d : claimed) {
                      Integer other = holder.putIfAbsent(d.offset(), me);
                      if (other != null) {
                        violations.add(d.offset() + " held by members " + other + " and " + me);
                      }
                    }
                    List<GroupDelivery> settle = new ArrayList<>();
                    for (GroupDelivery d : claimed) {
                      holder.remove(d.offset()); // before settling: the next holder may come
                      if (++round % nackEvery == 0) {
                        d.nack(Duration.ZERO); // back to the group: claimed again by anyone
                      } else {
                        settle.add(d);
                      }
                    }
                    List<GroupDelivery> refused =
                        oneCall ? member.ackAll().apply(settle) : ackEach(settle);
                    if (!refused.isEmpty()) {
                      violations.add("acks refused for deliveries still held: " + refused);
                    }
                    for (GroupDelivery d : settle) {
                      if (!acked.add(d.offset())) {
                        violations.add(d.offset() + " acked twice");
                      }
                    }
                    done.addAndGet(settle.size());
                  }
                  return null;
                }));
      }
      for (Future<?> f : running) {
        f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(violations)
        .as("messages held by two members at once, acked twice, or acks refused")
        .isEmpty();
    assertThat(acked).as("every message acked").hasSize(messages);
  }

  private static List<GroupDelivery> ackEach(List<GroupDelivery> deliveries) {
    deliveries.forEach(GroupDelivery::ack);
    return List.of();
  }
}
