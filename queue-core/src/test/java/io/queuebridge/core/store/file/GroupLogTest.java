package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.ConsumerInfo;
import io.queuebridge.core.store.PendingEntry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Consumer-group persistence (BEHAVIOUR S-GROUP, S-FILE): op log, snapshots, prefix recovery. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class GroupLogTest {
  private static final String Q = "q";
  private static final String G = "workers";
  private static final Instant T0 = Instant.parse("2024-05-01T12:00:00.123456789Z");
  @TempDir Path tmp;
  private final FaultyIo io = new FaultyIo();
  private FileStorage storage;

  private FileStoreConfig config() {
    return FileStoreConfig.defaults(tmp.resolve("store")).withSyncIntervalMs(60_000);
  }

  private ConsumerGroupStore open(FileStoreConfig config) {
    storage = FileStorage.open(config, java.time.Clock.systemUTC(), io);
    if (storage.queues.get(Q) == null) {
      storage.queues().createQueue(QueueConfig.durable(Q).build());
      storage.groups().createGroup(ConsumerGroupState.create(Q, G, "", GroupMode.QUEUE, true, T0));
    }
    return storage.groups();
  }

  private ConsumerGroupStore reopen(FileStoreConfig config) {
    storage.close();
    return open(config);
  }

  @AfterEach
  void close() {
    if (storage != null) {
      storage.close();
    }
  }

  private Path groupFile() {
    return tmp.resolve("store/queues/q/groups/workers.grp");
  }

  /** A random mix of every kind of change; returns the state after each one. */
  private static List<ConsumerGroupState> randomChanges(ConsumerGroupStore g, Random rnd, int n) {
    List<ConsumerGroupState> states = new ArrayList<>();
    Instant now = T0;
    for (int i = 0; i < n; i++) {
      now = now.plusMillis(rnd.nextInt(1000));
      long offset = rnd.nextInt(50);
      String consumer = "c" + rnd.nextInt(3);
      ConsumerGroupState s = g.getGroup(Q, G);
      switch (rnd.nextInt(10)) {
        case 0 ->
            g.addPending(
                Q, G, new PendingEntry(offset, consumer, now, 1, now, now.plusSeconds(30)));
        case 1 ->
            s.pending().stream()
                .findFirst()
                .ifPresent(e -> g.removePending(Q, G, e.consumerId(), e.offset()));
        case 2 -> {
          Instant t = now;
          s.pending().stream()
              .findFirst()
              .ifPresent(
                  e ->
                      g.transferPending(
                          Q, G, e.offset(), e.consumerId(), consumer, t, Duration.ofSeconds(5)));
        }
        case 3 -> g.updateCursor(Q, G, rnd.nextInt(100), now);
        case 4 -> g.updateCommitted(Q, G, rnd.nextInt(100), now);
        case 5 ->
            g.registerConsumer(Q, G, new ConsumerInfo(consumer, "client-" + consumer, now, now));
        case 6 -> g.unregisterConsumer(Q, G, consumer);
        case 7 -> {
          List<PendingEntry> claimed = new ArrayList<>();
          for (int k = rnd.nextInt(3); k >= 0; k--) {
            claimed.add(new PendingEntry(offset + k, consumer, now, 1, now, now.plusSeconds(30)));
          }
          g.claimPending(Q, G, claimed, offset + claimed.size(), now);
        }
        case 8 -> {
          Instant t = now;
          s.pending().stream()
              .findFirst()
              .ifPresent(
                  e ->
                      g.acknowledgePending(Q, G, e.consumerId(), e.offset(), e.deliveryCount(), t));
        }
        default -> {
          Instant t = now;
          s.pending().stream()
              .findFirst()
              .ifPresent(
                  e ->
                      g.updatePending(
                          Q,
                          G,
                          new PendingEntry(
                              e.offset(),
                              e.consumerId(),
                              t,
                              e.deliveryCount(),
                              e.firstClaimedAt(),
                              t.plusSeconds(60))));
        }
      }
      states.add(g.getGroup(Q, G));
    }
    return states;
  }

  @Test
  void everyKindOfChangeSurvivesReopenExactly() {
    ConsumerGroupStore g = open(config());
    List<ConsumerGroupState> states = randomChanges(g, new Random(1), 500);
    g = reopen(config());
    assertThat(g.getGroup(Q, G)).isEqualTo(states.get(states.size() - 1));
  }

  @Test
  void aTornOrDamagedGroupLogTailRollsTheGroupBackToAnEarlierStateNeverAnInvalidOne()
      throws Exception {
    ConsumerGroupStore g = open(config());
    List<ConsumerGroupState> states = new ArrayList<>();
    states.add(g.getGroup(Q, G));
    states.addAll(randomChanges(g, new Random(2), 200));
    storage.close();
    storage = null;
    byte[] pristine = Files.readAllBytes(groupFile());
    // the first record is the snapshot written atomically at creation; changes follow it
    int firstEnd = GroupLog.HEADER + 8 + ByteSource.getIntAt(pristine, GroupLog.HEADER);
    Random rnd = new Random(3);
    for (int c = 0; c < 200; c++) {
      byte[] b;
      int p = firstEnd + rnd.nextInt(pristine.length - firstEnd);
      boolean truncation = rnd.nextBoolean();
      if (truncation) {
        b = java.util.Arrays.copyOf(pristine, p);
      } else {
        b = pristine.clone();
        b[p] ^= (byte) (1 + rnd.nextInt(255));
      }
      Files.write(groupFile(), b);
      storage = FileStorage.open(config(), java.time.Clock.systemUTC(), io);
      ConsumerGroupState recovered = storage.groups().getGroup(Q, G);
      assertThat(states)
          .as("case %d: recovered state is one the group was in", c)
          .contains(recovered);
      if (!truncation) {
        assertThat(storage.recovery().groupLogCuts())
            .as("case %d: a damaged record is cut and reported", c)
            .singleElement()
            .satisfies(cut -> assertThat(cut.keptBytes()).isLessThanOrEqualTo(p));
      }
      storage.groups().updateCursor(Q, G, 4242, T0); // appends continue after the cut
      storage.close();
      storage = FileStorage.open(config(), java.time.Clock.systemUTC(), io);
      assertThat(storage.groups().getGroup(Q, G).cursor()).isEqualTo(4242);
      storage.close();
      storage = null;
    }
  }

  @Test
  void damageInTheCreationSnapshotFailsClosedNamingTheFile() throws Exception {
    open(config());
    storage.close();
    storage = null;
    byte[] b = Files.readAllBytes(groupFile());
    b[GroupLog.HEADER + 12] ^= 1;
    Files.write(groupFile(), b);
    assertThatThrownBy(() -> FileStorage.open(config(), java.time.Clock.systemUTC(), io))
        .isInstanceOf(io.queuebridge.core.errors.StoreCorruptedException.class)
        .hasMessageContaining(groupFile().toString())
        .hasMessageContaining("no readable snapshot");
  }

  @Test
  void theLogIsCompactedIntoASnapshotSoItStaysBounded() {
    ConsumerGroupStore g = open(config());
    for (int i = 0; i < 200; i++) {
      g.addPending(Q, G, new PendingEntry(i, "c", T0, 1, T0, T0.plusSeconds(30)));
    }
    for (int i = 0; i < 60_000; i++) {
      g.updateCursor(Q, G, i, T0.plusMillis(i));
    }
    assertThat(groupFile().toFile().length()).as("compacted").isLessThan(2L << 20);
    ConsumerGroupState last = g.getGroup(Q, G);
    assertThat(last.cursor()).isEqualTo(59_999);
    assertThat(reopen(config()).getGroup(Q, G)).isEqualTo(last);
  }

  @Test
  void intervalModeWritesEveryChangeAndLeavesFsyncToTheBackgroundThread() {
    ConsumerGroupStore g = open(config());
    Path f = groupFile();
    int forces = io.forcesOf(f).size();
    long size = f.toFile().length();
    g.updateCursor(Q, G, 5, T0);
    assertThat(f.toFile().length()).as("written before the call returns").isGreaterThan(size);
    assertThat(io.forcesOf(f)).hasSize(forces);
    storage.queues.get(Q).groups.get(G).syncIfDirty();
    assertThat(io.forcesOf(f)).hasSize(forces + 1);
  }

  @Test
  void alwaysModeFsyncsEveryChangeBeforeReturning() {
    ConsumerGroupStore g = open(config().withGroupSync(FileStoreConfig.GroupSync.ALWAYS));
    Path f = groupFile();
    int forces = io.forcesOf(f).size();
    g.updateCursor(Q, G, 5, T0);
    g.addPending(Q, G, new PendingEntry(1, "c", T0, 1, T0, T0));
    g.removePending(Q, G, "c", 1);
    assertThat(io.forcesOf(f)).hasSize(forces + 3);
  }

  private int versionOnDisk() throws Exception {
    byte[] b = Files.readAllBytes(groupFile());
    return (b[4] & 0xFF) << 8 | (b[5] & 0xFF);
  }

  @Test
  void aLogStaysInVersion1UntilItsFirstKeyedEntryThenIsRewrittenInVersion2() throws Exception {
    ConsumerGroupStore groups = open(config());
    groups.claimPending(Q, G, List.of(new PendingEntry(0, "c", T0, 1, T0, T0)), 1, T0);
    assertThat(versionOnDisk()).as("no ordering key: what earlier releases read").isEqualTo(1);
    PendingEntry keyed = new PendingEntry(1, "c", T0, 1, T0, T0, "bazz");
    PendingEntry blocked = PendingEntry.blocked(2, T0, "bazz");
    groups.claimPending(Q, G, List.of(keyed, blocked), 3, T0);
    assertThat(versionOnDisk()).isEqualTo(GroupLog.KEYED_VERSION);
    groups = reopen(config());
    assertThat(groups.getAllPending(Q, G))
        .containsExactly(new PendingEntry(0, "c", T0, 1, T0, T0), keyed, blocked);
    assertThat(firstWithKey(groups, Q, G, "bazz")).contains(keyed);
    // a single put and a whole-group write upgrade an old log the same way
    groups.updateGroup(groups.getGroup(Q, G).withPending(List.of(), T0));
    assertThat(versionOnDisk()).as("a version-2 log is not downgraded").isEqualTo(2);
  }

  @Test
  void aLogIsRewrittenInVersion3ByTheGroupsFirstPauseAndStaysThereAfterTheResume()
      throws Exception {
    ConsumerGroupStore groups = open(config());
    PendingEntry keyed = new PendingEntry(0, "c", T0, 1, T0, T0, "bazz");
    groups.claimPending(Q, G, List.of(keyed), 1, T0);
    assertThat(versionOnDisk()).isEqualTo(GroupLog.KEYED_VERSION);
    groups.setPaused(Q, G, true, T0.plusSeconds(1));
    assertThat(versionOnDisk()).as("paused").isEqualTo(GroupLog.PAUSED_VERSION);
    groups = reopen(config());
    assertThat(groups.getGroup(Q, G).paused()).isTrue();
    assertThat(groups.getAllPending(Q, G)).as("the keys kept").containsExactly(keyed);
    groups.setPaused(Q, G, false, T0.plusSeconds(2));
    groups.claimPending(Q, G, List.of(new PendingEntry(1, "c", T0, 1, T0, T0)), 2, T0);
    groups = reopen(config());
    assertThat(groups.getGroup(Q, G).paused()).as("resumed").isFalse();
    assertThat(groups.getAllPending(Q, G)).hasSize(2);
    assertThat(versionOnDisk()).as("a version-3 log is not downgraded").isEqualTo(3);
  }

  @Test
  void aLogOfANewerFormatIsRefusedNamingBothVersions() throws Exception {
    open(config());
    storage.close();
    storage = null;
    byte[] b = Files.readAllBytes(groupFile());
    b[4] = 0;
    b[5] = 4;
    Files.write(groupFile(), b);
    assertThatThrownBy(() -> FileStorage.open(config(), java.time.Clock.systemUTC(), io))
        .isInstanceOf(io.queuebridge.core.errors.StoreCorruptedException.class)
        .hasMessageContaining("version 4")
        .hasMessageContaining("reads versions 1 to 3")
        .hasMessageContaining("newer version");
  }

  @Test
  void aSinglePutOfAKeyedEntryUpgradesAVersion1LogWithoutLosingItsRecords() throws Exception {
    ConsumerGroupStore groups = open(config());
    List<PendingEntry> plain = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      plain.add(new PendingEntry(i, "c", T0, 1, T0, T0.plusSeconds(i)));
    }
    groups.claimPending(Q, G, plain, 50, T0);
    groups.acknowledgePending(Q, G, "c", 0, 1, T0);
    assertThat(versionOnDisk()).isEqualTo(1);
    PendingEntry keyed = new PendingEntry(60, "c", T0, 1, T0, T0, "bk");
    groups.addPending(Q, G, keyed);
    assertThat(versionOnDisk()).isEqualTo(2);
    ConsumerGroupState before = groups.getGroup(Q, G);
    groups = reopen(config());
    assertThat(groups.getGroup(Q, G)).isEqualTo(before);
    assertThat(groups.getAllPending(Q, G)).hasSize(50).contains(keyed);
  }

  /** The lowest entry carrying {@code key}, through {@code firstPendingByKey}. */
  private static Optional<PendingEntry> firstWithKey(
      ConsumerGroupStore groups, String queue, String group, String key) {
    return Optional.ofNullable(groups.firstPendingByKey(queue, group, List.of(key)).get(key));
  }
}
