package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.errors.StoreLockedException;
import io.queuebridge.core.errors.StoreNotFoundException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PendingEntry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damage in a sealed segment (BEHAVIOUR F-RECOVER): found when the store opens, reported with the
 * queue, the segment, the byte position and the offsets that cannot be served; those offsets never
 * served and appends to the queue refused while other queues work; the explicit repair, its dry
 * run, and the store after it. Every case damages a real store on disk.
 *
 * <p>The fixture: queue {@code q} with five or more sealed segments of frames holding one to three
 * records (some with checkpoints), and three groups — {@code workers} (queue mode, entries pending
 * before and after the damage), {@code reader} (stream mode at the tail) and {@code early} (stream
 * mode well before the damage) — and queue {@code other}, which is never damaged.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SealedSegmentDamageTest {
  private static final String Q = "q";
  private static final String OTHER = "other";
  private static final Instant T = Instant.parse("2025-03-01T00:00:00Z");

  @TempDir Path tmp;
  private Path dir;
  private FileStoreConfig config;
  private final MutableClock clock = new MutableClock(T);

  /** Every message appended to {@code q}, by offset. */
  private final List<Message> appended = new ArrayList<>();

  private final List<Message> otherAppended = new ArrayList<>();

  /** A frame of a segment file: [start, end) bytes, its offsets. */
  private record Frame(long start, long end, long base, int count) {}

  private List<Path> logs;

  /** The sealed segment the cases damage (the second) and its frames. */
  private Path victim;

  private List<Frame> victimFrames;
  private long nextBase;
  private long tail;

  @BeforeEach
  void build() throws Exception {
    dir = tmp.resolve("store");
    config =
        FileStoreConfig.defaults(dir)
            .withSegmentBytes(2048)
            .withIndexIntervalBytes(200)
            .withSyncIntervalMs(60_000);
    Random rnd = new Random(7);
    try (FileStorage s = FileStorage.open(config, clock, StoreIo.DEFAULT)) {
      DurableQueueStore qs = s.queues();
      qs.createQueue(QueueConfig.durable(Q).build());
      qs.createQueue(QueueConfig.durable(OTHER).build());
      int cp = 0;
      while (qs.tail(Q) < 70 || s.queues.get(Q).log.segmentCount() < 6) {
        List<Message> batch = new ArrayList<>();
        for (int i = 1 + rnd.nextInt(3); i > 0; i--) {
          batch.add(TestMessages.random(rnd, 120));
        }
        long base =
            rnd.nextInt(4) == 0
                ? qs.appendBatchAndSync(Q, batch, Map.of("cp", Integer.toString(cp++)))
                : qs.appendBatch(Q, batch);
        for (int i = 0; i < batch.size(); i++) {
          appended.add(batch.get(i).withOffset(base + i));
        }
      }
      for (int i = 0; i < 5; i++) {
        Message m = TestMessages.text("other " + i);
        otherAppended.add(m.withOffset(qs.append(OTHER, m)));
      }
      tail = qs.tail(Q);
    }
    logs = segmentFiles();
    victim = logs.get(1);
    victimFrames = frames(Files.readAllBytes(victim));
    nextBase = base(logs.get(2));
    assertThat(victimFrames).hasSizeGreaterThanOrEqualTo(3);
    assertThat(logs).hasSizeGreaterThanOrEqualTo(6);
  }

  /** Groups that point before, into and past the damage of {@link #middle()}. */
  private void createGroups(FileStorage s) {
    long damagedFrom = middle().base();
    List<PendingEntry> pending = new ArrayList<>();
    for (long o : new long[] {1, damagedFrom - 1, damagedFrom, damagedFrom + 1, tail - 1}) {
      pending.add(new PendingEntry(o, "w1", T, 1, T, T.plusSeconds(30)));
    }
    s.groups()
        .createGroup(
            new ConsumerGroupState(
                Q, "workers", "", GroupMode.QUEUE, false, tail, 1, pending, Map.of(), T, T));
    s.groups()
        .createGroup(
            new ConsumerGroupState(
                Q,
                "reader",
                "",
                GroupMode.STREAM,
                true,
                tail,
                tail - 2,
                List.of(),
                Map.of(),
                T,
                T));
    s.groups()
        .createGroup(
            new ConsumerGroupState(
                Q, "early", "", GroupMode.STREAM, true, 3, 2, List.of(), Map.of(), T, T));
  }

  private Frame middle() {
    return victimFrames.get(victimFrames.size() / 2);
  }

  private FileStorage open() {
    return FileStorage.open(config, clock, StoreIo.DEFAULT);
  }

  private FileStorage open(FileStoreConfig.VerifyOnOpen mode) {
    return FileStorage.open(config.withVerifyOnOpen(mode), clock, StoreIo.DEFAULT);
  }

  /** Flips one byte inside the first record of {@link #middle()}'s payload. */
  private void flipPayloadByte() throws IOException {
    byte[] b = Files.readAllBytes(victim);
    b[(int) middle().start() + Frames.HEADER + 10] ^= 0x5A;
    Files.write(victim, b);
  }

  // ---------------------------------------------------------------- found when the store opens

  @Test
  void aFlippedPayloadByteInASealedSegmentIsReportedAtOpenWithQueueFilePositionAndRange()
      throws Exception {
    flipPayloadByte();
    byte[] damagedBytes = Files.readAllBytes(victim);
    Frame bad = middle();

    try (FileStorage s = open()) {
      RecoveryReport r = s.recovery();
      assertThat(r.logCuts()).as("nothing is cut on open").isEmpty();
      assertThat(r.clean()).isFalse();
      assertThat(r.damage())
          .singleElement()
          .satisfies(
              d -> {
                assertThat(d.queue()).isEqualTo(Q);
                assertThat(d.file()).isEqualTo(victim);
                assertThat(d.position()).isEqualTo(bad.start());
                assertThat(d.fromOffset()).isEqualTo(bad.base());
                assertThat(d.toOffset()).isEqualTo(nextBase);
                assertThat(d.reason()).contains("CRC-32C mismatch").contains("" + bad.base());
                assertThat(d.describe())
                    .contains("'" + Q + "'")
                    .contains(victim.toString())
                    .contains("at byte " + bad.start())
                    .contains("[" + bad.base() + ", " + nextBase + ")");
              });
      assertThat(r.damageOf(OTHER)).isEmpty();
      assertThat(Files.readAllBytes(victim))
          .as("the damaged file is left as it is")
          .isEqualTo(damagedBytes);

      DurableQueueStore qs = s.queues();
      for (long o = 0; o < bad.base(); o++) {
        assertThat(qs.read(Q, o))
            .as("offset %d before the damage", o)
            .isEqualTo(appended.get((int) o));
      }
      assertThat(qs.readBatch(Q, 0, 10_000))
          .as("a batch stops before the damage")
          .isEqualTo(appended.subList(0, (int) bad.base()));
      for (long o = bad.base(); o < nextBase; o++) {
        long offset = o;
        StoreCorruptedException e =
            catchThrowableOfType(StoreCorruptedException.class, () -> qs.read(Q, offset));
        assertThat(e).as("offset %d in the damaged range", o).isNotNull();
        assertThat(e.file()).isEqualTo(victim.toString());
        assertThat(e.position()).isEqualTo(bad.start());
        assertThat(e.getMessage())
            .contains("offset " + o)
            .contains("[" + bad.base() + ", " + nextBase + ")")
            .contains("queue-bridge repair");
        assertThatThrownBy(() -> qs.readBatch(Q, offset, 5))
            .isInstanceOf(StoreCorruptedException.class);
      }
      for (long o = nextBase; o < tail; o++) {
        assertThat(qs.read(Q, o))
            .as("offset %d after the damaged segment", o)
            .isEqualTo(appended.get((int) o));
      }

      StoreCorruptedException refused =
          catchThrowableOfType(
              StoreCorruptedException.class, () -> qs.append(Q, TestMessages.text("late")));
      assertThat(refused.getMessage())
          .contains(victim.toString())
          .contains("at byte " + bad.start())
          .contains("appends to it are refused")
          .contains("queue-bridge repair");
      assertThatThrownBy(() -> qs.appendAndSync(Q, TestMessages.text("late")))
          .isInstanceOf(StoreCorruptedException.class);
      assertThat(qs.tail(Q)).isEqualTo(tail);

      Message m = TestMessages.text("other works");
      long at = qs.append(OTHER, m);
      assertThat(qs.read(OTHER, at)).isEqualTo(m.withOffset(at));
      assertThat(qs.readBatch(OTHER, 0, 100).subList(0, otherAppended.size()))
          .isEqualTo(otherAppended);
    }
  }

  @Test
  void aSealedSegmentCutMidFrameIsReportedFromTheTornFrameToTheSegmentsEnd() throws Exception {
    Frame bad = middle();
    byte[] b = Files.readAllBytes(victim);
    Files.write(victim, java.util.Arrays.copyOf(b, (int) bad.start() + 20));

    try (FileStorage s = open()) {
      assertThat(s.recovery().damage())
          .singleElement()
          .satisfies(
              d -> {
                assertThat(d.file()).isEqualTo(victim);
                assertThat(d.position()).isEqualTo(bad.start());
                assertThat(d.fromOffset()).isEqualTo(bad.base());
                assertThat(d.toOffset()).isEqualTo(nextBase);
                assertThat(d.reason()).contains("torn frame");
              });
      assertThat(s.queues().readBatch(Q, 0, 10_000))
          .isEqualTo(appended.subList(0, (int) bad.base()));
      assertThatThrownBy(() -> s.queues().read(Q, bad.base()))
          .isInstanceOf(StoreCorruptedException.class);
    }
    assertThat(Files.size(victim)).as("nothing is cut on open").isEqualTo(bad.start() + 20);
  }

  @Test
  void aSealedSegmentCutAtAFrameBoundaryIsMissingItsLastOffsets() throws Exception {
    Frame bad = middle();
    byte[] b = Files.readAllBytes(victim);
    Files.write(victim, java.util.Arrays.copyOf(b, (int) bad.start()));

    try (FileStorage s = open()) {
      assertThat(s.recovery().damage())
          .singleElement()
          .satisfies(
              d -> {
                assertThat(d.position()).isEqualTo(bad.start());
                assertThat(d.fromOffset()).isEqualTo(bad.base());
                assertThat(d.toOffset()).isEqualTo(nextBase);
                assertThat(d.reason())
                    .isEqualTo(
                        "the file ends at offset "
                            + bad.base()
                            + ", but the next segment starts at offset "
                            + nextBase);
              });
    }
  }

  @Test
  void damageInTwoSealedSegmentsIsReportedOldestFirst() throws Exception {
    flipPayloadByte();
    Path third = logs.get(3);
    byte[] b = Files.readAllBytes(third);
    b[0] ^= 1; // the magic of its first frame
    Files.write(third, b);

    try (FileStorage s = open()) {
      assertThat(s.recovery().damage())
          .extracting(RecoveryReport.Damage::file, RecoveryReport.Damage::fromOffset)
          .containsExactly(
              org.assertj.core.groups.Tuple.tuple(victim, middle().base()),
              org.assertj.core.groups.Tuple.tuple(third, base(third)));
      assertThat(s.recovery().damage().get(1).reason()).contains("bad frame magic");
    }
  }

  @Test
  void truncatingPastTheDamagedRangeDropsItAndAppendsResume() throws Exception {
    flipPayloadByte();
    try (FileStorage s = open()) {
      DurableQueueStore qs = s.queues();
      qs.truncate(Q, middle().base() + 1); // inside the range: still damaged
      assertThatThrownBy(() -> qs.append(Q, TestMessages.text("x")))
          .isInstanceOf(StoreCorruptedException.class);
      qs.truncate(Q, nextBase);
      Message m = TestMessages.text("after truncation");
      long at = qs.append(Q, m);
      assertThat(at).isEqualTo(tail);
      assertThat(qs.readBatch(Q, 0, 10_000))
          .isEqualTo(
              Stream.concat(
                      appended.subList((int) nextBase, (int) tail).stream(),
                      Stream.of(m.withOffset(at)))
                  .toList());
    }
    try (FileStorage s = open()) {
      assertThat(s.recovery().damage()).as("the damaged segment was deleted").isEmpty();
    }
  }

  // ---------------------------------------------------------------- the verified stamp

  @Test
  void aSealedSegmentIsVerifiedOnceThenSkippedUntilItsFileChanges() throws Exception {
    int sealed = logs.size() - 1;
    long sealedBytes = 0;
    for (Path p : logs.subList(0, sealed)) {
      sealedBytes += Files.size(p);
    }
    Path stamps = VerifiedSegments.file(logs.get(0).getParent());
    assertThat(stamps).doesNotExist();
    try (FileStorage s = open()) {
      assertThat(s.recovery().segmentsVerified()).isEqualTo(sealed);
      assertThat(s.recovery().bytesVerified()).isEqualTo(sealedBytes);
      assertThat(s.recovery().clean()).isTrue();
    }
    assertThat(VerifiedSegments.read(Q, stamps.getParent()).keySet())
        .containsExactlyInAnyOrderElementsOf(
            logs.subList(0, sealed).stream().map(p -> base(p)).toList());
    try (FileStorage s = open()) {
      assertThat(s.recovery().segmentsVerified()).as("stamped: not read again").isZero();
    }
    try (FileStorage s = open(FileStoreConfig.VerifyOnOpen.ALL)) {
      assertThat(s.recovery().segmentsVerified()).as("all: read at every open").isEqualTo(sealed);
    }
    try (FileStorage s = open(FileStoreConfig.VerifyOnOpen.NEWEST)) {
      assertThat(s.recovery().segmentsVerified()).isZero();
    }

    // a write changes the file's modification time: the segment is read again, and found damaged
    flipPayloadByte();
    try (FileStorage s = open()) {
      assertThat(s.recovery().segmentsVerified()).isEqualTo(1);
      assertThat(s.recovery().damage()).singleElement().extracting(d -> d.file()).isEqualTo(victim);
    }
    assertThat(VerifiedSegments.read(Q, stamps.getParent()))
        .as("a damaged segment loses its stamp")
        .doesNotContainKey(base(victim))
        .hasSize(sealed - 1);
  }

  @Test
  void aChangeThatKeepsSizeAndTimeIsNotSeenBySealedOnceButByAllAndNeverReachesAReader()
      throws Exception {
    try (FileStorage s = open()) {
      assertThat(s.recovery().segmentsVerified()).isPositive();
    }
    FileTime before = Files.getLastModifiedTime(victim);
    flipPayloadByte();
    Files.setLastModifiedTime(victim, before); // as a bit flipped at rest by the device would
    try (FileStorage s = open()) {
      assertThat(s.recovery().damage()).as("the stamp still matches").isEmpty();
      assertThatThrownBy(() -> s.queues().read(Q, middle().base()))
          .as("reads verify every frame")
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining("CRC-32C mismatch");
    }
    try (FileStorage s = open(FileStoreConfig.VerifyOnOpen.ALL)) {
      assertThat(s.recovery().damage())
          .singleElement()
          .extracting(d -> d.position())
          .isEqualTo(middle().start());
    }
  }

  @Test
  void aDamagedStampFileOnlyCostsARescan() throws Exception {
    try (FileStorage s = open()) {
      assertThat(s.recovery().segmentsVerified()).isEqualTo(logs.size() - 1);
    }
    Path stamps = VerifiedSegments.file(logs.get(0).getParent());
    byte[] b = Files.readAllBytes(stamps);
    b[b.length - 1] ^= 1;
    Files.write(stamps, b);
    try (FileStorage s = open()) {
      assertThat(s.recovery().segmentsVerified()).isEqualTo(logs.size() - 1);
      assertThat(s.recovery().clean()).isTrue();
    }
  }

  @Test
  void verifyOnOpenNewestFindsNothingAtOpenAndReadsStillFailClosed() throws Exception {
    flipPayloadByte();
    try (FileStorage s = open(FileStoreConfig.VerifyOnOpen.NEWEST)) {
      assertThat(s.recovery().damage()).isEmpty();
      assertThat(s.recovery().segmentsVerified()).isZero();
      assertThatThrownBy(() -> s.queues().read(Q, middle().base()))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining(victim.toString())
          .hasMessageContaining("at byte " + middle().start());
    }
    assertThat(VerifiedSegments.file(victim.getParent())).doesNotExist();
  }

  @Test
  void verifyOnOpenIsValidatedByTheProvider() {
    FileStoreProvider p = new FileStoreProvider();
    p.validate(Map.of("path", "/x", "verify.on.open", "ALL"));
    p.validate(Map.of("path", "/x", "verify.on.open", " newest "));
    assertThatThrownBy(() -> p.validate(Map.of("path", "/x", "verify.on.open", "sometimes")))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("verify.on.open")
        .hasMessageContaining("'sometimes'")
        .hasMessageContaining("'sealed-once', 'all' or 'newest'");
    assertThat(FileStoreConfig.parse(Map.of("path", "/x", "verify.on.open", "all")).verifyOnOpen())
        .isEqualTo(FileStoreConfig.VerifyOnOpen.ALL);
    assertThat(FileStoreConfig.parse(Map.of("path", "/x")).verifyOnOpen())
        .isEqualTo(FileStoreConfig.VerifyOnOpen.SEALED_ONCE);
  }

  // ---------------------------------------------------------------- repair

  @Test
  void theDryRunChangesNoByteAndTheRepairCutsExactlyWhatItReported() throws Exception {
    try (FileStorage s = open()) {
      createGroups(s);
    }
    flipPayloadByte();
    Frame bad = middle();
    long victimSize = Files.size(victim);
    Map<String, String> before = hashes(dir);
    Map<String, String> otherBefore = hashes(dir.resolve("queues").resolve(OTHER));

    RepairReport dry = FileStores.repair(dir, true);
    assertThat(hashes(dir)).as("a dry run changes no byte").isEqualTo(before);
    assertThat(dry.dryRun()).isTrue();
    assertThat(dry.store()).isEqualTo(dir.toRealPath());
    RepairReport.QueueRepair q = dry.queues().get(0);
    assertThat(dry.queues()).hasSize(1);
    assertThat(q.queue()).isEqualTo(Q);
    assertThat(q.damage())
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.file()).isEqualTo(victim);
              assertThat(d.position()).isEqualTo(bad.start());
              assertThat(d.fromOffset()).isEqualTo(bad.base());
              assertThat(d.toOffset()).isEqualTo(nextBase);
            });
    assertThat(q.newTail()).isEqualTo(bad.base());
    assertThat(q.fromOffset()).isEqualTo(bad.base());
    assertThat(q.toOffset()).isEqualTo(tail);
    assertThat(q.messages()).isEqualTo(tail - bad.base());
    List<RepairReport.SegmentCut> expectedCuts = new ArrayList<>();
    expectedCuts.add(
        new RepairReport.SegmentCut(victim, bad.start(), victimSize - bad.start(), false));
    long bytes = victimSize - bad.start();
    for (Path p : logs.subList(2, logs.size())) {
      expectedCuts.add(new RepairReport.SegmentCut(p, 0, Files.size(p), true));
      bytes += Files.size(p);
    }
    assertThat(q.segments()).isEqualTo(expectedCuts);
    assertThat(q.bytes()).isEqualTo(bytes);
    assertThat(dry.bytesCut()).isEqualTo(bytes);
    assertThat(dry.messagesCut()).isEqualTo(tail - bad.base());
    assertThat(q.groups())
        .containsExactly(
            new RepairReport.GroupClamp(
                "reader", tail, bad.base(), tail - 2, bad.base(), List.of()),
            new RepairReport.GroupClamp(
                "workers", tail, bad.base(), 1, 1, List.of(bad.base(), bad.base() + 1, tail - 1)));

    RepairReport done = FileStores.repair(dir, false);
    assertThat(done.dryRun()).isFalse();
    assertThat(done.queues()).isEqualTo(dry.queues());
    assertThat(Files.size(victim)).isEqualTo(bad.start());
    assertThat(segmentFiles()).isEqualTo(logs.subList(0, 2));
    for (Path p : logs.subList(2, logs.size())) {
      String n = p.getFileName().toString().replace(".log", "");
      for (String ext : List.of(".idx", ".tix", ".cpt")) {
        assertThat(p.resolveSibling(n + ext)).doesNotExist();
      }
    }
    assertThat(hashes(dir.resolve("queues").resolve(OTHER)))
        .as("the other queue is left as it is")
        .isEqualTo(otherBefore);

    try (FileStorage s = open()) {
      RecoveryReport r = s.recovery();
      assertThat(r.damage()).as("opens clean").isEmpty();
      assertThat(r.logCuts()).isEmpty();
      DurableQueueStore qs = s.queues();
      assertThat(qs.tail(Q)).isEqualTo(bad.base());
      assertThat(qs.readBatch(Q, 0, 10_000))
          .as("the kept messages, record by record")
          .isEqualTo(appended.subList(0, (int) bad.base()));

      ConsumerGroupState workers = s.groups().getGroup(Q, "workers");
      assertThat(workers.cursor()).isEqualTo(bad.base());
      assertThat(workers.committed()).isEqualTo(1);
      assertThat(workers.pending())
          .extracting(PendingEntry::offset)
          .containsExactly(1L, bad.base() - 1);
      ConsumerGroupState reader = s.groups().getGroup(Q, "reader");
      assertThat(reader.cursor()).isEqualTo(bad.base());
      assertThat(reader.committed()).isEqualTo(bad.base());
      ConsumerGroupState early = s.groups().getGroup(Q, "early");
      assertThat(early.cursor()).isEqualTo(3);
      assertThat(early.committed()).isEqualTo(2);

      Message m = TestMessages.text("after the repair");
      long at = qs.appendAndSync(Q, m);
      assertThat(at).as("the cut offsets are reused").isEqualTo(bad.base());
      assertThat(qs.readBatch(Q, reader.cursor(), 10))
          .as("the groups' cursors point at the new message: none is skipped")
          .containsExactly(m.withOffset(at));
      assertThat(qs.readBatch(Q, workers.cursor(), 10)).containsExactly(m.withOffset(at));
    }
    try (FileStorage s = open(FileStoreConfig.VerifyOnOpen.ALL)) {
      assertThat(s.recovery().clean()).isTrue();
      assertThat(s.queues().read(Q, bad.base()))
          .isEqualTo(TestMessages.text("after the repair").withOffset(bad.base()));
    }
    assertThat(FileStores.repair(dir, true).clean()).as("nothing left to repair").isTrue();
  }

  @Test
  void theRepairOfAFirstSegmentDamagedAtItsFirstByteEmptiesTheQueue() throws Exception {
    Path first = logs.get(0);
    byte[] b = Files.readAllBytes(first);
    b[1] ^= 1;
    Files.write(first, b);
    RepairReport r = FileStores.repair(dir, false);
    assertThat(r.queues())
        .singleElement()
        .satisfies(
            q -> {
              assertThat(q.newTail()).isZero();
              assertThat(q.messages()).isEqualTo(tail);
              assertThat(q.segments().get(0))
                  .isEqualTo(new RepairReport.SegmentCut(first, 0, b.length, false));
            });
    try (FileStorage s = open()) {
      assertThat(s.recovery().clean()).isTrue();
      assertThat(s.queues().head(Q)).isZero();
      assertThat(s.queues().tail(Q)).isZero();
      Message m = TestMessages.text("first again");
      assertThat(s.queues().append(Q, m)).isZero();
      assertThat(s.queues().read(Q, 0)).isEqualTo(m.withOffset(0));
    }
  }

  @Test
  void theRepairOfASegmentTruncatedMidFrameCutsAtThatFrame() throws Exception {
    Frame bad = middle();
    byte[] b = Files.readAllBytes(victim);
    Files.write(victim, java.util.Arrays.copyOf(b, (int) bad.start() + 20));
    RepairReport r = FileStores.repair(dir, false);
    assertThat(r.queues().get(0).segments().get(0))
        .isEqualTo(new RepairReport.SegmentCut(victim, bad.start(), 20, false));
    try (FileStorage s = open()) {
      assertThat(s.recovery().clean()).isTrue();
      assertThat(s.queues().readBatch(Q, 0, 10_000))
          .isEqualTo(appended.subList(0, (int) bad.base()));
    }
  }

  @Test
  void theRepairIsRefusedWhileTheStoreIsOpenAndChangesNothing() throws Exception {
    flipPayloadByte();
    try (FileStorage s = open()) {
      Map<String, String> before = hashes(dir);
      for (boolean dryRun : new boolean[] {true, false}) {
        assertThatThrownBy(() -> FileStores.repair(dir, dryRun))
            .isInstanceOf(StoreLockedException.class)
            .hasMessageContaining(dir.toRealPath().toString());
      }
      assertThat(hashes(dir)).isEqualTo(before);
      assertThat(s.recovery().damage()).hasSize(1);
    }
    assertThat(FileStores.repair(dir, false).queues()).hasSize(1);
  }

  @Test
  void theRepairOfWhatIsNotAStoreIsStoreNotFoundAndCreatesNothing() throws Exception {
    Path absent = tmp.resolve("absent").resolve("store");
    assertThatThrownBy(() -> FileStores.repair(absent, true))
        .isInstanceOf(StoreNotFoundException.class)
        .hasMessageContaining(absent.toString());
    assertThat(tmp.resolve("absent")).doesNotExist();
    Path empty = Files.createDirectory(tmp.resolve("empty"));
    assertThatThrownBy(() -> FileStores.repair(empty, false))
        .isInstanceOf(StoreNotFoundException.class)
        .hasMessageContaining("no qb-store marker");
    try (Stream<Path> files = Files.list(empty)) {
      assertThat(files).isEmpty();
    }
    assertThatThrownBy(() -> FileStores.repair(Map.of("path", dir.toString(), "x", "1"), true))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("invalid x: '1'");
  }

  @Test
  void aCleanStoreNeedsNoRepairAndTheRepairLeavesItAsItIs() throws Exception {
    Map<String, String> before = hashes(dir);
    RepairReport r = FileStores.repair(dir, false);
    assertThat(r.clean()).isTrue();
    assertThat(r.messagesCut()).isZero();
    assertThat(hashes(dir)).isEqualTo(before);
  }

  // ---------------------------------------------------------------- helpers

  private List<Path> segmentFiles() throws IOException {
    try (Stream<Path> s = Files.list(dir.resolve("queues").resolve(Q))) {
      return s.filter(p -> p.getFileName().toString().endsWith(".log")).sorted().toList();
    }
  }

  private static long base(Path log) {
    return Long.parseLong(log.getFileName().toString().substring(0, 20));
  }

  /** Every regular file under {@code root} by relative path, with the SHA-256 of its bytes. */
  static Map<String, String> hashes(Path root) throws Exception {
    Map<String, String> out = new TreeMap<>();
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    try (Stream<Path> files = Files.walk(root)) {
      for (Path p : files.sorted().toList()) {
        String rel = root.relativize(p).toString();
        if (Files.isDirectory(p)) {
          out.put(rel + "/", "dir");
        } else {
          out.put(rel, HexFormat.of().formatHex(sha.digest(Files.readAllBytes(p))));
        }
      }
    }
    return out;
  }

  /** Walks a pristine segment's frames (independently of the store's own scanner). */
  private static List<Frame> frames(byte[] b) {
    List<Frame> out = new ArrayList<>();
    int pos = 0;
    while (pos < b.length) {
      Frames.FrameHeader h = Frames.header(b, pos);
      assertThat(Frames.crc(b, pos, h.length())).isEqualTo(h.crc());
      out.add(new Frame(pos, pos + h.length(), h.baseOffset(), h.count()));
      pos += h.length();
    }
    return out;
  }
}
