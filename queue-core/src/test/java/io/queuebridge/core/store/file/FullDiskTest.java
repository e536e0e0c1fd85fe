package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.RetriableQueueException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PendingEntry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The file store on a full disk: a size-limited tmpfs the test mounts ({@link SmallTmpfs}; skipped,
 * with the reason, where the machine cannot mount one). Appends, durable appends, segment rolls and
 * consumer-group changes that meet ENOSPC fail with a retriable {@link QueueStoreException} naming
 * the file and the cause; what was acknowledged before reads back byte for byte while the store is
 * open and after a reopen; nothing of a failed call is left in the files (no torn frame, no stray
 * temporary file); once the filler file is deleted the same open store takes appends again, and a
 * reopen finds the log contiguous. On tmpfs an fsync cannot fail, so a full disk shows as failed
 * writes, never as a failed barrier (those are covered by {@link FaultInjectionTest}).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FullDiskTest {
  private static final String ENOSPC = "No space left on device";
  private static final String STREAM = "orders";
  private static final String CLASSIC = "jobs";
  private static final String GROUP = "workers";
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static SmallTmpfs disk;
  private final MutableClock clock = new MutableClock(T0);
  private Path dir;
  private FileStorage storage;

  @BeforeAll
  static void mount() throws Exception {
    disk = SmallTmpfs.mount("queue-core", 4 << 20);
  }

  @AfterAll
  static void unmount() throws Exception {
    if (disk != null) {
      disk.close();
    }
  }

  @BeforeEach
  void newStore() throws IOException {
    dir = Files.createTempDirectory(disk.dir(), "store-");
  }

  @AfterEach
  void closeAndClean() throws IOException {
    if (storage != null) {
      storage.close();
      storage = null;
    }
    disk.free();
    FileStorage.deleteRecursively(dir);
  }

  private FileStoreConfig config() {
    // segment.ms lets a test make the next append roll by moving the clock
    return FileStoreConfig.defaults(dir.resolve("store"))
        .withSegmentBytes(256 << 10)
        .withSegmentMs(60_000)
        .withSyncIntervalMs(0);
  }

  private FileStorage open() {
    storage = FileStorage.open(config(), clock, StoreIo.DEFAULT);
    return storage;
  }

  private void reopen() {
    storage.close();
    storage = null;
    open();
  }

  @Test
  void durableBatchesFailNamingTheFileAndResumeInTheSameStoreOnceSpaceIsFreed() throws Exception {
    DurableQueueStore q = open().queues();
    q.createQueue(QueueConfig.reservedStream(STREAM).build());
    Random rnd = new Random(42);
    List<Message> acked = new ArrayList<>();
    Map<String, String> checkpoints = new LinkedHashMap<>();

    for (int i = 0; i < 20; i++) {
      appendDurably(q, rnd, acked, checkpoints);
    }
    disk.fill(64 << 10);
    // Append until the disk is full: every batch either is acknowledged or fails as a whole.
    List<Throwable> failures = new ArrayList<>();
    while (failures.size() < 5) {
      Throwable t = catchThrowable(() -> appendDurably(q, rnd, acked, checkpoints));
      if (t != null) {
        failures.add(t);
      }
    }
    for (Throwable t : failures) {
      assertNamesFileAndCause(t, STREAM, dir.resolve("store/queues/" + STREAM));
    }
    // A buffered append, and a roll (the segment is a minute old), fail the same way.
    clock.advance(Duration.ofMinutes(2));
    Throwable roll = catchThrowable(() -> q.append(STREAM, big(rnd, 1)));
    assertNamesFileAndCause(roll, STREAM, dir.resolve("store/queues/" + STREAM));
    assertThat(roll).hasMessageContaining("rolling a new segment");

    assertHolds(q, STREAM, acked, checkpoints);
    assertThat(strayFiles()).as("files a failed call left behind").isEmpty();

    disk.free();
    for (int i = 0; i < 20; i++) {
      appendDurably(q, rnd, acked, checkpoints); // the same open store: nothing to reopen
    }
    assertThat(storage.queues.get(STREAM).log.segmentCount())
        .as("the roll refused on the full disk happened once there was room")
        .isGreaterThan(1);
    assertHolds(q, STREAM, acked, checkpoints);

    reopen();
    assertThat(storage.recovery().logCuts()).as("torn tails found on reopen").isEmpty();
    assertHolds(storage.queues(), STREAM, acked, checkpoints);
  }

  @Test
  void aStoreClosedOnAFullDiskReopensConsistentWhileTheDiskIsStillFull() throws Exception {
    DurableQueueStore q = open().queues();
    q.createQueue(QueueConfig.reservedStream(STREAM).build());
    Random rnd = new Random(7);
    List<Message> acked = new ArrayList<>();
    Map<String, String> checkpoints = new LinkedHashMap<>();
    for (int i = 0; i < 30; i++) {
      appendDurably(q, rnd, acked, checkpoints); // several segments, sealed in this session
    }
    disk.fill(128 << 10);
    Throwable failure = null;
    while (failure == null) {
      failure = catchThrowable(() -> appendDurably(q, rnd, acked, checkpoints));
    }
    assertNamesFileAndCause(failure, STREAM, dir.resolve("store/queues/" + STREAM));
    disk.fill(0); // what a smaller batch could still have used

    // The disk is still full: opening verifies the segments sealed since the last open and cannot
    // record that (queue.verified is only an optimisation; it is written at a later open).
    reopen();
    assertThat(storage.queues.get(STREAM).log.segmentCount()).as("segments").isGreaterThan(2);
    assertThat(storage.recovery().logCuts()).as("torn tails found on reopen").isEmpty();
    assertHolds(storage.queues(), STREAM, acked, checkpoints);
    Throwable again =
        catchThrowable(() -> appendDurably(storage.queues(), rnd, acked, checkpoints));
    assertNamesFileAndCause(again, STREAM, dir.resolve("store/queues/" + STREAM));

    disk.free();
    appendDurably(storage.queues(), rnd, acked, checkpoints);
    reopen();
    assertHolds(storage.queues(), STREAM, acked, checkpoints);
  }

  @Test
  void classicQueueAppendsAndGroupChangesFailWithoutChangingWhatWasAcknowledged() throws Exception {
    open();
    DurableQueueStore q = storage.queues();
    ConsumerGroupStore groups = storage.groups();
    q.createQueue(QueueConfig.durable(CLASSIC).build());
    groups.createGroup(ConsumerGroupState.create(CLASSIC, GROUP, "", GroupMode.QUEUE, false, T0));
    Random rnd = new Random(3);
    List<Message> acked = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      Message m = TestMessages.random(rnd, 512);
      acked.add(m.withOffset(q.appendAndSync(CLASSIC, m)));
    }
    Path groupFile = dir.resolve("store/queues/" + CLASSIC + "/groups/" + GROUP + ".grp");

    disk.fill(0);
    Throwable append = catchThrowable(() -> q.appendAndSync(CLASSIC, big(rnd, 3)));
    assertNamesFileAndCause(append, CLASSIC, dir.resolve("store/queues/" + CLASSIC));

    // Claim and acknowledge, one message at a time, until a change of the group needs a new page.
    Throwable groupFailure = null;
    ConsumerGroupState before = groups.getGroup(CLASSIC, GROUP);
    long next = before.cursor();
    while (groupFailure == null && next < acked.size()) {
      before = groups.getGroup(CLASSIC, GROUP);
      Instant now = clock.instant();
      PendingEntry e = new PendingEntry(next, "c1", now, 1, now, now.plusSeconds(30));
      long offset = next;
      groupFailure =
          catchThrowable(
              () -> {
                groups.claimPending(CLASSIC, GROUP, List.of(e), offset + 1, now);
                groups.acknowledgePending(CLASSIC, GROUP, "c1", offset, 1, now);
              });
      if (groupFailure == null) {
        next++;
      }
      clock.advance(Duration.ofMillis(1));
    }
    assertThat(groupFailure).as("a group change on the full disk").isNotNull();
    assertNamesFileAndCause(groupFailure, CLASSIC, groupFile);
    assertThat(groupFailure).hasMessageContaining("consumer group " + GROUP);
    ConsumerGroupState after = groups.getGroup(CLASSIC, GROUP);
    // The claim or the acknowledgement failed: whichever did changed nothing.
    if (after.pending().isEmpty()) {
      assertThat(after).as("the group after a refused claim").isEqualTo(before);
    } else {
      assertThat(after.pending()).extracting(PendingEntry::offset).containsExactly(next);
      assertThat(after.committed()).as("committed after a refused ack").isEqualTo(next);
    }
    ConsumerGroupState atFailure = after;
    Throwable create =
        catchThrowable(
            () ->
                groups.createGroup(
                    ConsumerGroupState.create(CLASSIC, "other", "", GroupMode.QUEUE, false, T0)));
    assertNamesFileAndCause(create, CLASSIC, groupFile.resolveSibling("other.grp"));
    assertThat(groups.findGroup(CLASSIC, "other")).isEmpty();
    // One page left: the new queue's first segment takes it, its configuration file finds none.
    disk.fill(4096);
    Throwable createQueue =
        catchThrowable(() -> q.createQueue(QueueConfig.durable("later").build()));
    assertNamesFileAndCause(createQueue, "later", dir.resolve("store/queues/later"));
    assertThat(q.listQueues()).extracting(QueueConfig::name).containsExactly(CLASSIC);
    assertThat(openDeletedFiles()).as("deleted files the store still holds open").isEmpty();
    assertThat(strayFiles()).as("files a failed call left behind").isEmpty();
    assertHolds(q, CLASSIC, acked, Map.of());

    reopen(); // still full
    assertThat(storage.queues().listQueues())
        .extracting(QueueConfig::name)
        .containsExactly(CLASSIC);
    assertThat(storage.groups().getGroup(CLASSIC, GROUP)).isEqualTo(atFailure);
    assertThat(storage.groups().findGroup(CLASSIC, "other")).isEmpty();
    assertHolds(storage.queues(), CLASSIC, acked, Map.of());

    disk.free();
    ConsumerGroupStore groups2 = storage.groups();
    Message m = big(rnd, 3);
    acked.add(m.withOffset(storage.queues().appendAndSync(CLASSIC, m)));
    Instant now = clock.instant();
    if (atFailure.pending().isEmpty()) {
      groups2.claimPending(
          CLASSIC,
          GROUP,
          List.of(new PendingEntry(next, "c1", now, 1, now, now.plusSeconds(30))),
          next + 1,
          now);
    }
    groups2.acknowledgePending(CLASSIC, GROUP, "c1", next, 1, now);
    ConsumerGroupState last = groups2.getGroup(CLASSIC, GROUP);
    storage.queues().createQueue(QueueConfig.durable("later").build());
    assertThat(last.committed()).isEqualTo(next + 1);
    assertThat(last.pending()).isEmpty();
    reopen();
    assertThat(storage.groups().getGroup(CLASSIC, GROUP)).isEqualTo(last);
    assertHolds(storage.queues(), CLASSIC, acked, Map.of());
    assertThat(storage.queues().listQueues())
        .extracting(QueueConfig::name)
        .containsExactlyInAnyOrder(CLASSIC, "later");
  }

  // ---------------------------------------------------------------- helpers

  /**
   * One durable batch of 1..4 messages of up to 24 KiB with a checkpoint naming the next offset;
   * recorded as acknowledged only once the call returned.
   */
  private static void appendDurably(
      DurableQueueStore q, Random rnd, List<Message> acked, Map<String, String> checkpoints)
      throws InterruptedException {
    List<Message> batch = new ArrayList<>();
    int n = 1 + rnd.nextInt(4);
    for (int i = 0; i < n; i++) {
      batch.add(big(rnd, 1 + rnd.nextInt(24)));
    }
    String cp = "kafka/in/0";
    String value = Integer.toString(acked.size() + n);
    long base = q.appendBatchAndSync(STREAM, batch, Map.of(cp, value));
    assertThat(base).as("first offset of the batch").isEqualTo(acked.size());
    for (int i = 0; i < n; i++) {
      acked.add(batch.get(i).withOffset(base + i));
    }
    checkpoints.put(cp, value);
  }

  /** A message with every field set and a value of {@code kib} KiB of random bytes. */
  private static Message big(Random rnd, int kib) {
    byte[] value = new byte[kib << 10];
    rnd.nextBytes(value);
    return TestMessages.random(rnd, 64).toBuilder().value(value).build();
  }

  /**
   * The queue holds exactly {@code acked}, byte for byte and at contiguous offsets from 0, and the
   * checkpoints of the last acknowledged batch.
   */
  private static void assertHolds(
      DurableQueueStore q, String queue, List<Message> acked, Map<String, String> checkpoints) {
    assertThat(q.head(queue)).as("head").isZero();
    assertThat(q.tail(queue)).as("tail").isEqualTo(acked.size());
    List<Message> read = new ArrayList<>();
    while (read.size() < acked.size()) {
      List<Message> batch = q.readBatch(queue, read.size(), 100);
      assertThat(batch).as("read from offset %d", read.size()).isNotEmpty();
      read.addAll(batch);
    }
    for (int i = 0; i < acked.size(); i++) {
      assertThat(read.get(i)).as("message at offset %d", i).isEqualTo(acked.get(i));
    }
    assertThat(q.readBatch(queue, acked.size(), 10)).as("beyond the tail").isEmpty();
    assertThat(q.checkpoints(queue)).as("checkpoints").isEqualTo(checkpoints);
  }

  /** A retriable store error naming {@code where} (a file or directory) and ENOSPC. */
  private static void assertNamesFileAndCause(Throwable t, String queue, Path where) {
    assertThat(t)
        .as("the failure on the full disk")
        .isInstanceOf(QueueStoreException.class)
        .isInstanceOf(RetriableQueueException.class)
        .hasMessageContaining(queue)
        .hasMessageContaining(where.toString())
        .hasMessageContaining(ENOSPC);
  }

  /** Files under the store directory that are deleted but still open in this process. */
  private List<String> openDeletedFiles() throws IOException {
    List<String> out = new ArrayList<>();
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      for (Path fd : fds.toList()) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.startsWith(dir.toString()) && target.endsWith("(deleted)")) {
            out.add(target);
          }
        } catch (IOException gone) {
          // closed meanwhile (the listing's own descriptor among them)
        }
      }
    }
    return out;
  }

  /** Temporary files in the store directory (a failed atomic replace must remove its own). */
  private List<Path> strayFiles() throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".tmp")).toList();
    }
  }
}
