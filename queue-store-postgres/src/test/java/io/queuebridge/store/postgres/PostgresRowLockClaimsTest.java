package io.queuebridge.store.postgres;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.internal.group.GroupCoordinator;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.ClaimsSwitch;
import io.queuebridge.core.store.contract.CompetingKeyConsumers;
import io.queuebridge.core.store.contract.CompetingMembers;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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

  /** Four engines, two on each of two store instances of {@code schema}. */
  private static List<GroupCoordinator> engines(List<Storage> stores) {
    List<GroupCoordinator> engines = new ArrayList<>();
    for (Storage s : stores) {
      GroupCoordinator e =
          GroupCoordinator.builder(s.queues(), ClaimsSwitch.answering(s.groups(), true)).build();
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

  /**
   * Two acks of one group that both wait for its row lock: the one that gets it second reads the
   * entries after the first one's removal, so the committed offset reaches the cursor once nothing
   * is pending. (A statement that waits for the lock inside itself reads the other rows as they
   * were when it started, and would leave the offset behind the first ack's entry.)
   */
  @Test
  void twoAcksThatWaitForTheGroupRowLockLeaveTheCommittedOffsetAtTheCursor() throws Exception {
    List<Storage> stores = open("acks");
    try {
      Storage first = stores.get(0);
      first.queues().createQueue(QueueConfig.durable("q").build());
      first
          .queues()
          .appendBatch(
              "q",
              List.of(
                  Message.builder().topic("q").value("a".getBytes(UTF_8)).build(),
                  Message.builder().topic("q").value("b".getBytes(UTF_8)).build()));
      List<GroupCoordinator> engines = engines(stores);
      List<GroupDelivery> held = new ArrayList<>();
      for (int i : new int[] {0, 2}) { // one engine on each store instance
        engines.get(i).join("q", "", "g", "m" + i, null);
        held.addAll(engines.get(i).claimBatch("q", "g", "m" + i, 1));
      }
      assertThat(held).extracting(GroupDelivery::offset).containsExactlyInAnyOrder(0L, 1L);
      ExecutorService acks = Executors.newFixedThreadPool(2);
      try (Connection blocker = database.connect()) {
        blocker.setAutoCommit(false);
        try (Statement st = blocker.createStatement()) {
          st.execute(
              "SELECT 1 FROM acks.groups g JOIN acks.queues q ON q.id = g.queue_id"
                  + " WHERE q.name = 'q' AND g.group_id = 'g' FOR UPDATE OF g");
        }
        List<Future<Long>> done = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
          GroupDelivery d = held.get(i);
          ConsumerGroupStore groups = stores.get(i).groups();
          String member = "m" + (2 * i);
          done.add(
              acks.submit(
                  () ->
                      groups.acknowledgePending(
                          "q", "g", member, d.offset(), d.deliveryCount(), Instant.now())));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> sessionsWaitingOnALock(blocker) == 2);
        blocker.commit();
        for (Future<Long> f : done) {
          f.get(30, TimeUnit.SECONDS);
        }
      } finally {
        acks.shutdownNow();
      }
      assertThat(first.groups().getAllPending("q", "g")).isEmpty();
      assertThat(first.groups().getGroup("q", "g").committed()).isEqualTo(2);
    } finally {
      stores.forEach(Storage::close);
    }
  }

  /** The sessions of this database, other than {@code c}'s, waiting for a lock. */
  private static int sessionsWaitingOnALock(Connection c) throws Exception {
    try (Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    + " AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
