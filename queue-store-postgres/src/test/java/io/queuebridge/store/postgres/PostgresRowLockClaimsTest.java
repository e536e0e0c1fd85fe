package io.queuebridge.store.postgres;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.CompetingKeyConsumers;
import io.queuebridge.core.store.contract.CompetingMembers;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The engine's row-lock path on the postgres store: claims from the PEL with {@code claimDue}
 * ({@code SKIP LOCKED}) and acks outside the group's section, the cursor read ahead in a section
 * committed lazily ({@code atomicallyLazy}). The store answers {@code concurrentClaims()} false
 * (the sectioned path is the faster one on the machines measured), so these tests wrap its group
 * half to answer true, and run competing members on two store instances (two pools, as two
 * processes would have): none holds a message another holds, none is lost, each key keeps its
 * order.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class PostgresRowLockClaimsTest {
  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();

  /** {@code groups}, answering {@code concurrentClaims()} true and forwarding everything else. */
  private static ConsumerGroupStore rowLocks(ConsumerGroupStore groups) {
    return (ConsumerGroupStore)
        Proxy.newProxyInstance(
            ConsumerGroupStore.class.getClassLoader(),
            new Class<?>[] {ConsumerGroupStore.class},
            (proxy, method, args) -> {
              if (method.getName().equals("concurrentClaims")) {
                return true;
              }
              try {
                return method.invoke(groups, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  /** Four engines, two on each of two store instances of {@code schema}. */
  private static List<GroupCoordinator> engines(List<Storage> stores) {
    List<GroupCoordinator> engines = new ArrayList<>();
    for (Storage s : stores) {
      GroupCoordinator e = GroupCoordinator.builder(s.queues(), rowLocks(s.groups())).build();
      engines.add(e);
      engines.add(e);
    }
    return engines;
  }

  private static List<Storage> open(String schema) {
    Map<String, String> config = database.config(schema);
    return List.of(QueueStores.open("postgres", config), QueueStores.open("postgres", config));
  }

  @Test
  void competingMembersOnTwoInstancesGetEachMessageOnceAtATimeAndLoseNone() throws Exception {
    List<Storage> stores = open("unordered");
    try {
      Storage first = stores.get(0);
      first.queues().createQueue(QueueConfig.durable("q").build());
      int messages = 1500; // three read aheads and more
      List<Message> batch = new ArrayList<>();
      for (int i = 0; i < messages; i++) {
        batch.add(Message.builder().topic("q").value(("v" + i).getBytes(UTF_8)).build());
      }
      first.queues().appendBatch("q", batch);
      List<GroupCoordinator> engines = engines(stores);
      List<CompetingMembers.Member> members = new ArrayList<>();
      for (int i = 0; i < engines.size(); i++) {
        GroupCoordinator engine = engines.get(i);
        String me = "m" + i;
        engine.join("q", "", "g", me, null);
        members.add(
            new CompetingMembers.Member(n -> engine.claimBatch("q", "g", me, n), engine::ackAll));
      }
      CompetingMembers.drainAndCheck(members, messages, 7, 31, Duration.ofMinutes(2));
      assertThat(first.groups().getAllPending("q", "g")).isEmpty();
      assertThat(first.groups().getGroup("q", "g").committed()).isEqualTo(messages);
    } finally {
      stores.forEach(Storage::close);
    }
  }

  @Test
  void competingMembersOfAnOrderedQueueOnTwoInstancesKeepEachKeysOrder() throws Exception {
    List<Storage> stores = open("ordered");
    try {
      Storage first = stores.get(0);
      first
          .queues()
          .createQueue(QueueConfig.durable("q").ordering(OrderingKey.MESSAGE_KEY).build());
      Map<String, List<Integer>> published = new LinkedHashMap<>();
      List<Message> batch = new ArrayList<>();
      for (int i = 0; i < 900; i++) {
        String key = "k" + (i * 7 % 13);
        published.computeIfAbsent(key, k -> new ArrayList<>()).add(i);
        batch.add(
            Message.builder()
                .topic("q")
                .key(key.getBytes(UTF_8))
                .value(Integer.toString(i).getBytes(UTF_8))
                .build());
      }
      first.queues().appendBatch("q", batch);
      List<Function<Integer, List<GroupDelivery>>> claimers = new ArrayList<>();
      List<GroupCoordinator> engines = engines(stores);
      for (int i = 0; i < engines.size(); i++) {
        GroupCoordinator engine = engines.get(i);
        String me = "m" + i;
        engine.join("q", "", "g", me, null);
        claimers.add(n -> engine.claimBatch("q", "g", me, n));
      }
      CompetingKeyConsumers.drainAndCheck(claimers, published, Duration.ofMinutes(2));
    } finally {
      stores.forEach(Storage::close);
    }
  }
}
