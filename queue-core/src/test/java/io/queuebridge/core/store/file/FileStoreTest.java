package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.OffsetOutOfRangeException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.QueueStores;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The file store's own rules beyond the contract kit: configuration, layout, format, recovery. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FileStoreTest {
  private static final String Q = "q";
  @TempDir Path tmp;
  private final MutableClock clock = new MutableClock(Instant.parse("2024-05-01T00:00:00Z"));
  private final FaultyIo io = new FaultyIo();
  private FileStorage storage;

  private Path dir() {
    return tmp.resolve("store");
  }

  private FileStoreConfig small() {
    return FileStoreConfig.defaults(dir())
        .withSegmentBytes(1024)
        .withIndexIntervalBytes(128)
        .withSyncIntervalMs(60_000);
  }

  private DurableQueueStore open(FileStoreConfig config) {
    storage = FileStorage.open(config, clock, io);
    if (storage.queues.get(Q) == null) {
      storage.queues().createQueue(QueueConfig.durable(Q).build());
    }
    return storage.queues();
  }

  private DurableQueueStore reopen(FileStoreConfig config) {
    storage.close();
    return open(config);
  }

  @AfterEach
  void close() {
    if (storage != null) {
      storage.close();
    }
  }

  private static String big(int i) {
    return "m" + i + "-" + "x".repeat(150);
  }

  private List<Path> files(String suffix) throws Exception {
    try (Stream<Path> s = Files.list(dir().resolve("queues").resolve(Q))) {
      return s.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
    }
  }

  // ---------------------------------------------------------------- configuration

  @Test
  void providerIsFoundByNameAndValidatesEveryKey() {
    QueueStoreProvider p = QueueStores.provider("file");
    assertThat(p).isInstanceOf(FileStoreProvider.class);
    p.validate(Map.of("path", "/x"));
    assertThatThrownBy(() -> p.validate(Map.of()))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("path");
    assertThatThrownBy(() -> p.validate(Map.of("path", "/x", "segment.size", "1")))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("segment.size")
        .hasMessageContaining("segment.bytes");
    assertThatThrownBy(() -> p.validate(Map.of("path", "/x", "segment.bytes", "ten")))
        .hasMessageContaining("segment.bytes")
        .hasMessageContaining("'ten'")
        .hasMessageContaining("an integer in [1024, 1073741824]");
    assertThatThrownBy(() -> p.validate(Map.of("path", "/x", "sync.interval.ms", "-1")))
        .hasMessageContaining("sync.interval.ms");
    assertThatThrownBy(() -> p.validate(Map.of("path", "/x", "max.open.read.files", "0")))
        .hasMessageContaining("max.open.read.files");
    assertThatThrownBy(() -> p.validate(Map.of("path", "/x", "group.sync", "sometimes")))
        .hasMessageContaining("group.sync")
        .hasMessageContaining("'interval' or 'always'");
    FileStoreConfig c =
        FileStoreConfig.parse(
            Map.of(
                "path", "/x",
                "segment.bytes", "2048",
                "segment.ms", "0",
                "index.interval.bytes", "512",
                "time.index.interval.ms", "10",
                "sync.interval.ms", "0",
                "max.open.read.files", "3",
                "group.sync", "ALWAYS"));
    assertThat(c)
        .isEqualTo(
            new FileStoreConfig(
                Path.of("/x"),
                2048,
                0,
                512,
                10,
                0,
                3,
                FileStoreConfig.GroupSync.ALWAYS,
                FileStoreConfig.VerifyOnOpen.SEALED_ONCE));
    assertThat(FileStoreConfig.parse(Map.of("path", "/x")))
        .isEqualTo(FileStoreConfig.defaults(Path.of("/x")));
  }

  @Test
  void identityIsTheRealAbsolutePathEvenBeforeTheDirectoryExists() throws Exception {
    Path real = Files.createDirectories(tmp.resolve("real"));
    Path link = Files.createSymbolicLink(tmp.resolve("link"), real);
    FileStoreProvider p = new FileStoreProvider();
    String expected = "file:" + real.toRealPath().resolve("store");
    assertThat(p.identity(Map.of("path", link.resolve("store").toString()))).isEqualTo(expected);
    assertThat(p.identity(Map.of("path", real.resolve("x/../store").toString())))
        .isEqualTo(expected);
    try (var s = p.open(Map.of("path", link.resolve("store").toString()))) {
      assertThat(s.description()).isEqualTo(expected);
      assertThat(p.identity(Map.of("path", link.resolve("store").toString()))).isEqualTo(expected);
    }
  }

  @Test
  void theStoreDirectoryIsCreatedOwnerOnlyWithItsMissingParents() throws Exception {
    Path deep = tmp.resolve("a").resolve("b").resolve("store");
    try (var s = QueueStores.file(deep)) {
      assertThat(Files.getPosixFilePermissions(deep))
          .isEqualTo(PosixFilePermissions.fromString("rwx------"));
      assertThat(Files.exists(deep.resolve("qb-store"))).isTrue();
      assertThat(s.description()).isEqualTo("file:" + deep.toRealPath());
    }
  }

  @Test
  void aNonEmptyDirectoryThatIsNotAStoreIsRefused() throws Exception {
    Files.createDirectories(dir());
    Files.writeString(dir().resolve("precious.txt"), "mine");
    assertThatThrownBy(() -> QueueStores.file(dir()))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("precious.txt")
        .hasMessageContaining("qb-store");
    assertThat(Files.readString(dir().resolve("precious.txt"))).isEqualTo("mine");
    assertThat(QueueStores.file(tmp.resolve("other"))).isNotNull().satisfies(s -> s.close());
  }

  // format versions: FormatVersionsTest (every versioned file kind, on a copy of the fixture)

  @Test
  void aDamagedQueueConfigurationFailsClosedNamingTheFile() throws Exception {
    open(small());
    storage.close();
    storage = null;
    Path cfg = dir().resolve("queues").resolve(Q).resolve("queue.cfg");
    byte[] b = Files.readAllBytes(cfg);
    b[b.length - 3] ^= 0x20;
    Files.write(cfg, b);
    assertThatThrownBy(() -> FileStorage.open(small(), clock, io))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining(cfg.toString())
        .hasMessageContaining("CRC");
  }

  // ---------------------------------------------------------------- segments

  @Test
  void segmentsRollBySizeWithZeroPaddedBaseOffsetNamesAndEachRollSyncsTheOutgoingSegment()
      throws Exception {
    DurableQueueStore q = open(small());
    for (int i = 0; i < 30; i++) {
      q.append(Q, TestMessages.text(big(i)));
    }
    List<Path> logs = files(".log");
    assertThat(logs).hasSizeGreaterThan(3);
    assertThat(logs.get(0).getFileName().toString()).isEqualTo("00000000000000000000.log");
    for (Path log : logs.subList(0, logs.size() - 1)) {
      assertThat(Files.size(log)).isLessThanOrEqualTo(1024);
      assertThat(io.forcesOf(log)).as("outgoing segment fsynced at roll: %s", log).isNotEmpty();
      String base = log.getFileName().toString().substring(0, 20);
      assertThat(files(".idx")).contains(log.resolveSibling(base + ".idx"));
      assertThat(files(".tix")).contains(log.resolveSibling(base + ".tix"));
      assertThat(files(".cpt")).contains(log.resolveSibling(base + ".cpt"));
    }
    for (int i = 0; i < 30; i++) {
      assertThat(TestMessages.text(q.read(Q, i))).isEqualTo(big(i));
    }
  }

  @Test
  void segmentsRollByAgeOnTheInjectedClock() throws Exception {
    DurableQueueStore q = open(small().withSegmentBytes(1 << 20).withSegmentMs(60_000));
    q.append(Q, TestMessages.text("a"));
    clock.advance(Duration.ofSeconds(59));
    q.append(Q, TestMessages.text("b"));
    assertThat(files(".log")).hasSize(1);
    clock.advance(Duration.ofSeconds(1));
    q.append(Q, TestMessages.text("c"));
    assertThat(files(".log"))
        .extracting(p -> p.getFileName().toString())
        .containsExactly("00000000000000000000.log", "00000000000000000002.log");
    // the age of the reopened active segment is its first batch's append time
    q = reopen(small().withSegmentBytes(1 << 20).withSegmentMs(60_000));
    clock.advance(Duration.ofSeconds(60));
    q.append(Q, TestMessages.text("d"));
    assertThat(files(".log")).hasSize(3);
  }

  @Test
  void openingReadsTheNewestSegmentAndTheSealedOnesNotVerifiedBefore() throws Exception {
    DurableQueueStore q = open(small());
    for (int i = 0; i < 40; i++) {
      q.append(Q, TestMessages.text(big(i)));
    }
    List<Path> logs = files(".log");
    storage.close();
    io.readOpens.clear();
    storage = FileStorage.open(small(), clock, io);
    assertThat(io.readOpens.keySet())
        .as("the first open verifies every sealed segment")
        .containsExactlyInAnyOrderElementsOf(logs);
    storage.close();
    io.readOpens.clear();
    storage = FileStorage.open(small(), clock, io);
    assertThat(io.readOpens.keySet())
        .as("then only the newest is read: the others are stamped verified")
        .containsExactly(logs.get(logs.size() - 1));
    storage.close();
    Files.delete(dir().resolve("queues").resolve(Q).resolve(VerifiedSegments.FILE));
    io.readOpens.clear();
    storage =
        FileStorage.open(small().withVerifyOnOpen(FileStoreConfig.VerifyOnOpen.NEWEST), clock, io);
    assertThat(io.readOpens.keySet()).containsExactly(logs.get(logs.size() - 1));
    assertThat(storage.queues().tail(Q)).isEqualTo(40);
    assertThat(TestMessages.text(storage.queues().read(Q, 0))).isEqualTo(big(0));
  }

  @Test
  void missingOrDamagedIndexesAreRebuiltNeverFatal() throws Exception {
    DurableQueueStore q = open(small());
    for (int i = 0; i < 40; i++) {
      q.append(Q, TestMessages.text(big(i)));
    }
    storage.close();
    List<Path> idx = files(".idx");
    List<Path> tix = files(".tix");
    Files.delete(idx.get(0));
    Files.write(idx.get(1), new byte[] {0, 1, 2});
    Files.write(tix.get(1), new byte[0]);
    byte[] third = Files.readAllBytes(idx.get(2)); // a valid envelope pointing at wrong positions
    byte[] payload = Blobs.unwrap(Blobs.OFFSET_INDEX_MAGIC, "idx", idx.get(2), third, Q);
    ByteSource src = new ByteSource(payload, 0, payload.length);
    long base = src.getLong();
    ByteSink bad = new ByteSink(64).putLong(base).putInt(1).putLong(base).putLong(7);
    Files.write(idx.get(2), Blobs.wrap(Blobs.OFFSET_INDEX_MAGIC, bad.array(), bad.position()));
    storage = FileStorage.open(small(), clock, io);
    for (int i = 0; i < 40; i++) {
      assertThat(TestMessages.text(storage.queues().read(Q, i))).isEqualTo(big(i));
    }
    assertThat(storage.queues().timeOffset(Q, Instant.EPOCH)).hasValue(0);
    assertThat(storage.indexRebuilds()).isGreaterThanOrEqualTo(3);
    assertThat(Files.exists(idx.get(0))).as("rebuilt index saved").isTrue();
  }

  @Test
  void checkpointsAreRecoveredFromTheNewestSegmentsSnapshotAndDeltasAlone() throws Exception {
    DurableQueueStore q = open(small());
    Map<String, String> expected = new HashMap<>();
    for (int i = 0; i < 40; i++) {
      Map<String, String> cp = Map.of("topic-" + (i % 3), Integer.toString(i));
      q.appendBatchAndSync(Q, List.of(TestMessages.text(big(i))), cp);
      expected.putAll(cp);
    }
    assertThat(files(".log")).hasSizeGreaterThan(3);
    storage.close();
    List<Path> cpts = files(".cpt");
    for (Path p : cpts.subList(0, cpts.size() - 1)) {
      Files.delete(p); // O(newest segment): older snapshots are not needed
    }
    storage = FileStorage.open(small(), clock, io);
    assertThat(storage.queues().checkpoints(Q)).isEqualTo(expected);
  }

  @Test
  void aRollInterruptedBeforeItsSnapshotLeavesTheOldSegmentActive() throws Exception {
    DurableQueueStore q = open(small());
    for (int i = 0; i < 20; i++) {
      q.appendBatchAndSync(Q, List.of(TestMessages.text(big(i))), Map.of("p", "" + i));
    }
    storage.close();
    Path qdir = dir().resolve("queues").resolve(Q);
    // a roll that crashed after creating the next segment file but before its snapshot and the
    // directory sync reached the disk: an empty newest .log without .cpt
    Path torn = qdir.resolve(Segment.fileName(20) + ".log");
    Files.createFile(torn);
    // and a snapshot written for a segment whose .log was never created
    Path orphanCpt = qdir.resolve(Segment.fileName(99) + ".cpt");
    Files.write(orphanCpt, new byte[] {1});
    storage = FileStorage.open(small(), clock, io);
    assertThat(storage.recovery().removedFiles()).contains(torn, orphanCpt);
    assertThat(torn).doesNotExist();
    assertThat(storage.queues().tail(Q)).isEqualTo(20);
    assertThat(storage.queues().checkpoints(Q)).containsEntry("p", "19");
    assertThat(storage.queues().append(Q, TestMessages.text("after"))).isEqualTo(20);
    assertThat(TestMessages.text(storage.queues().read(Q, 20))).isEqualTo("after");
  }

  // ---------------------------------------------------------------- queues

  @Test
  void anInterruptedQueueCreationIsRepairedByTheNextCreate() throws Exception {
    DurableQueueStore q = open(small());
    q.append(Q, TestMessages.text("keep"));
    storage.close();
    storage = null;
    // a creation that crashed before its commit marker (queue.cfg): directory and segment only
    Path torn = dir().resolve("queues").resolve("torn");
    Files.createDirectories(torn.resolve("groups"));
    Files.write(torn.resolve("00000000000000000000.log"), new byte[] {9, 9, 9});
    storage = FileStorage.open(small(), clock, io);
    assertThat(storage.queues().listQueues()).extracting(QueueConfig::name).containsExactly(Q);
    storage.queues().createQueue(QueueConfig.durable("torn").build());
    assertThat(storage.queues().tail("torn")).isZero();
    storage.queues().append("torn", TestMessages.text("fresh"));
    DurableQueueStore again = reopen(small());
    assertThat(TestMessages.text(again.read("torn", 0))).isEqualTo("fresh");
    assertThat(again.tail("torn")).isEqualTo(1);
  }

  @Test
  void aDeletionInterruptedAfterItsRenameIsFinishedAtOpen() throws Exception {
    open(small());
    storage.close();
    Path trash = dir().resolve("trash").resolve("old.123");
    Files.createDirectories(trash);
    Files.write(trash.resolve("00000000000000000000.log"), new byte[] {1});
    storage = FileStorage.open(small(), clock, io);
    assertThat(trash).doesNotExist();
    assertThat(storage.recovery().removedFiles()).contains(trash);
  }

  // ---------------------------------------------------------------- retention

  @Test
  void
      truncationIsExactDeletesWholeSegmentsAndTheEverythingDeletedCaseStartsAFreshSegmentAtTheTail()
          throws Exception {
    DurableQueueStore q = open(small());
    for (int i = 0; i < 30; i++) {
      q.append(Q, TestMessages.text(big(i)));
    }
    List<Path> logs = files(".log");
    long secondBase = Long.parseLong(logs.get(1).getFileName().toString().substring(0, 20));
    q.truncate(Q, secondBase + 1);
    assertThat(q.head(Q)).isEqualTo(secondBase + 1);
    assertThat(q.count(Q)).isEqualTo(30 - secondBase - 1);
    assertThatThrownBy(() -> q.read(Q, secondBase)).isInstanceOf(OffsetOutOfRangeException.class);
    assertThat(q.readBatch(Q, 0, 1).get(0).offset()).isEqualTo(secondBase + 1);
    assertThat(logs.get(0)).doesNotExist();
    assertThat(logs.get(1)).as("the segment holding the new head stays").exists();
    assertThat(LogHead.read(Q, dir().resolve("queues").resolve(Q))).hasValue(secondBase + 1);
    DurableQueueStore again = reopen(small());
    assertThat(again.head(Q)).as("the head survives a reopen").isEqualTo(secondBase + 1);
    assertThatThrownBy(() -> again.read(Q, secondBase))
        .isInstanceOf(OffsetOutOfRangeException.class);
    again.truncate(Q, 1000);
    assertThat(again.head(Q)).isEqualTo(30);
    assertThat(again.tail(Q)).isEqualTo(30);
    assertThat(again.count(Q)).isZero();
    assertThat(files(".log"))
        .extracting(p -> p.getFileName().toString())
        .containsExactly("00000000000000000030.log");
    DurableQueueStore third = reopen(small());
    assertThat(third.head(Q)).isEqualTo(30);
    assertThat(third.append(Q, TestMessages.text("next"))).isEqualTo(30);
  }

  @Test
  void aStoreWithoutHeadFilesOpensAsBeforeWithTheHeadAtTheFirstSegment() throws Exception {
    DurableQueueStore q = open(small());
    for (int i = 0; i < 30; i++) {
      q.append(Q, TestMessages.text(big(i)));
    }
    long secondBase =
        Long.parseLong(files(".log").get(1).getFileName().toString().substring(0, 20));
    q.truncate(Q, secondBase); // a segment boundary: no head file needed
    assertThat(LogHead.file(dir().resolve("queues").resolve(Q))).doesNotExist();
    storage.close();
    // a store written before the head file existed has none
    Files.deleteIfExists(LogHead.file(dir().resolve("queues").resolve(Q)));
    DurableQueueStore again = open(small());
    assertThat(again.head(Q)).isEqualTo(secondBase);
    assertThat(TestMessages.text(again.read(Q, secondBase))).isEqualTo(big((int) secondBase));
    assertThat(storage.recovery().clean()).isTrue();
  }

  @Test
  void segmentsLeftWhollyBelowThePersistedHeadAreDeletedAtOpen() throws Exception {
    DurableQueueStore q = open(small());
    for (int i = 0; i < 30; i++) {
      q.append(Q, TestMessages.text(big(i)));
    }
    List<Path> logs = files(".log");
    long thirdBase = Long.parseLong(logs.get(2).getFileName().toString().substring(0, 20));
    storage.close();
    // a truncation that stopped after writing its head file, before deleting the segments
    LogHead.write(StoreIo.DEFAULT, dir().resolve("queues").resolve(Q), thirdBase + 1);
    DurableQueueStore again = open(small());
    assertThat(again.head(Q)).isEqualTo(thirdBase + 1);
    assertThat(logs.get(0)).doesNotExist();
    assertThat(logs.get(1)).doesNotExist();
    assertThat(logs.get(2)).exists();
    assertThat(storage.recovery().removedFiles()).contains(logs.get(0), logs.get(1));
    assertThat(again.readBatch(Q, 0, 100)).hasSize((int) (30 - thirdBase - 1));
  }

  @Test
  void aDamagedHeadFileFailsTheOpenNamingIt() throws Exception {
    DurableQueueStore q = open(small());
    q.append(Q, TestMessages.text("a"));
    q.append(Q, TestMessages.text("b"));
    q.truncate(Q, 1);
    storage.close();
    storage = null;
    Path head = LogHead.file(dir().resolve("queues").resolve(Q));
    byte[] content = Files.readAllBytes(head);
    content[content.length - 1] ^= 0x40;
    Files.write(head, content);
    assertThatThrownBy(() -> FileStorage.open(small(), clock, io))
        .isInstanceOf(StoreCorruptedException.class)
        .hasMessageContaining(head.toString())
        .hasMessageContaining("CRC");
  }

  @Test
  void bytesIsTheSizeOfTheSegmentFiles() throws Exception {
    DurableQueueStore q = open(small());
    assertThat(q.bytes(Q)).hasValue(0);
    for (int i = 0; i < 30; i++) {
      q.append(Q, TestMessages.text(big(i)));
    }
    long onDisk = 0;
    for (Path p : files(".log")) {
      onDisk += Files.size(p);
    }
    assertThat(q.bytes(Q)).hasValue(onDisk);
    q.truncate(Q, 1000);
    assertThat(q.bytes(Q)).hasValue(0);
  }

  @Test
  void timeOffsetIsCoarseButNeverLaterThanExact() {
    DurableQueueStore q = open(small().withTimeIndexIntervalMs(1000));
    Random rnd = new Random(7);
    List<Instant> times = new ArrayList<>();
    Instant t = Instant.parse("2024-05-01T00:00:00Z");
    for (int i = 0; i < 200; i++) {
      t = t.plusMillis(rnd.nextInt(400));
      times.add(t);
      q.append(Q, Message.builder().value(new byte[rnd.nextInt(100)]).createdAt(t).build());
    }
    for (int k = 0; k < 300; k++) {
      Instant probe = times.get(0).plusMillis(rnd.nextInt(90_000) - 1000);
      long exact = 0;
      while (exact < times.size() && times.get((int) exact).isBefore(probe)) {
        exact++;
      }
      long answer = q.timeOffset(Q, probe).orElseThrow();
      assertThat(answer).as("probe %s", probe).isBetween(q.head(Q), exact);
      if (exact == times.size()) {
        assertThat(answer).as("after everything: the tail").isEqualTo(times.size());
      }
    }
    // coarse, not useless: a probe in the middle is answered within one index step of the truth
    Instant mid = times.get(100);
    assertThat(q.timeOffset(Q, mid).orElseThrow()).isGreaterThan(50);
  }

  @Test
  void sizeOffsetCountsWholeSegmentsAndNeverOverTrims() throws Exception {
    DurableQueueStore q = open(small());
    for (int i = 0; i < 60; i++) {
      q.append(Q, TestMessages.text(big(i)));
    }
    List<Path> logs = files(".log");
    long total = 0;
    for (Path p : logs) {
      total += Files.size(p);
    }
    assertThat(q.sizeOffset(Q, total)).hasValue(0);
    assertThat(q.sizeOffset(Q, Long.MAX_VALUE)).hasValue(0);
    for (long budget = 0; budget < total; budget += 97) {
      long answer = q.sizeOffset(Q, budget).orElseThrow();
      // exact = first offset from which the newest bytes fit: the answer must not be above it,
      // i.e. the kept range [answer, tail) holds at least `budget` bytes (or everything)
      long kept = 0;
      for (Path p : logs) {
        long base = Long.parseLong(p.getFileName().toString().substring(0, 20));
        if (base >= answer) {
          kept += Files.size(p);
        }
      }
      assertThat(kept)
          .as("budget %d answer %d", budget, answer)
          .isGreaterThanOrEqualTo(Math.min(budget, total));
    }
  }

  // ---------------------------------------------------------------- readers

  @Test
  void readHandlesStayBoundedAndEvictionNeverBreaksAConcurrentRead() throws Exception {
    DurableQueueStore q = open(small().withMaxOpenReadFiles(2));
    int n = 200;
    for (int i = 0; i < n; i++) {
      q.append(Q, TestMessages.text(big(i)));
    }
    assertThat(storage.queues.get(Q).log.segmentCount()).isGreaterThan(20);
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int seed = t;
        fs.add(
            pool.submit(
                () -> {
                  Random rnd = new Random(seed);
                  for (int k = 0; k < 2000; k++) {
                    int o = rnd.nextInt(n);
                    assertThat(TestMessages.text(q.read(Q, o))).isEqualTo(big(o));
                  }
                  return null;
                }));
      }
      for (Future<?> f : fs) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    storage.readHandles().cleanUp();
    assertThat(storage.readHandles().openCount()).isLessThanOrEqualTo(2);
    assertThat(storage.readHandles().openedCount()).as("evictions happened").isGreaterThan(20);
  }

  @Test
  void anInterruptedReaderReadsAndKeepsItsInterruptWithoutBreakingOthers() {
    DurableQueueStore q = open(small());
    for (int i = 0; i < 30; i++) {
      q.append(Q, TestMessages.text(big(i)));
    }
    Thread.currentThread().interrupt();
    try {
      for (int i = 0; i < 30; i++) {
        assertThat(TestMessages.text(q.read(Q, i))).isEqualTo(big(i));
      }
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
    for (int i = 0; i < 30; i++) {
      assertThat(TestMessages.text(q.read(Q, i))).isEqualTo(big(i));
    }
  }
}
