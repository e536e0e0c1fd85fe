package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Recovery against damage (BEHAVIOUR F-RECOVER): thousands of random truncations and byte flips of
 * a store's files, each followed by a reopen.
 *
 * <p>The fixture is a queue whose log has several sealed segments and a newest segment of about
 * twenty frames of varying size, some carrying checkpoints. Every case restores the pristine file,
 * damages it, reopens the store and checks the rule: damage in the newest segment cuts exactly the
 * frames from the damaged one on (the valid prefix stays, byte for byte and with its checkpoints)
 * and appends continue at the new tail; damage in an older segment never reaches a reader as data:
 * the damaged frame fails with a {@link StoreCorruptedException} naming the file and the position.
 */
class TornTailFuzzTest {
  private static final String Q = "q";
  private static final long SEED = 20240501L;

  @TempDir Path tmp;
  private Path storeDir;
  private FileStoreConfig config;
  private final MutableClock clock = new MutableClock(Instant.parse("2024-05-01T00:00:00Z"));

  /** Every appended message by offset. */
  private final List<Message> appended = new ArrayList<>();

  /** Frames of a segment file: [start, end) byte ranges and their offsets. */
  private record Frame(long start, long end, long base, int count, Map<String, String> cpAfter) {}

  private List<Frame> newestFrames;
  private List<Frame> olderFrames;
  private Path newestFile;
  private Path olderFile;
  private byte[] newestBytes;
  private byte[] olderBytes;
  private Map<String, String> cpAtNewestBase;

  @BeforeEach
  void buildFixture() throws Exception {
    storeDir = tmp.resolve("store");
    config =
        FileStoreConfig.defaults(storeDir)
            .withSegmentBytes(16384)
            .withIndexIntervalBytes(256)
            .withSyncIntervalMs(60_000);
    Random rnd = new Random(SEED);
    Map<String, String> cp = new HashMap<>();
    try (FileStorage s = FileStorage.open(config, clock, StoreIo.DEFAULT)) {
      DurableQueueStore qs = s.queues();
      qs.createQueue(QueueConfig.durable(Q).build());
      while (s.queues().tail(Q) < 60 || segments(s).size() < 3 || newestFrameCount(s) < 20) {
        int n = 1 + rnd.nextInt(3);
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          batch.add(TestMessages.random(rnd, 120));
        }
        long base;
        if (rnd.nextInt(3) == 0) {
          Map<String, String> delta = Map.of("p" + rnd.nextInt(4), Long.toString(rnd.nextLong()));
          base = qs.appendBatchAndSync(Q, batch, delta);
          cp.putAll(delta);
        } else {
          base = qs.appendBatch(Q, batch);
        }
        for (int i = 0; i < n; i++) {
          appended.add(batch.get(i).withOffset(base + i));
        }
      }
    }
    List<Path> logs = segmentFiles();
    newestFile = logs.get(logs.size() - 1);
    olderFile = logs.get(logs.size() - 2);
    newestBytes = Files.readAllBytes(newestFile);
    olderBytes = Files.readAllBytes(olderFile);
    cpAtNewestBase = readCheckpointSnapshot(newestFile);
    newestFrames = frames(newestBytes, cpAtNewestBase);
    olderFrames = frames(olderBytes, Map.of());
    assertThat(newestFrames).hasSizeGreaterThanOrEqualTo(20);
    assertThat(newestFrames.get(newestFrames.size() - 1).cpAfter()).isEqualTo(cp);
  }

  private int newestFrameCount(FileStorage s) {
    List<Segment> segs = s.queues.get(Q).log.segmentsForTest();
    Segment newest = segs.get(segs.size() - 1);
    return newest.offsetIndex == null ? 0 : framesIn(newest);
  }

  private static int framesIn(Segment seg) {
    // the active segment indexes every frame with a 256-byte interval only roughly; count frames
    // by walking the file instead
    try {
      return frames(Files.readAllBytes(seg.logFile), Map.of()).size();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static List<Segment> segments(FileStorage s) {
    return s.queues.get(Q).log.segmentsForTest();
  }

  @Test
  void tornOrCorruptNewestSegmentIsCutToExactlyItsValidPrefix() throws Exception {
    Random rnd = new Random(SEED + 1);
    int cases = 1200;
    int cuts = 0;
    for (int c = 0; c < cases; c++) {
      Files.write(newestFile, newestBytes);
      boolean flip = rnd.nextBoolean();
      int p = rnd.nextInt(newestBytes.length);
      byte[] damaged;
      if (flip) {
        damaged = newestBytes.clone();
        damaged[p] ^= (byte) (1 + rnd.nextInt(255));
      } else {
        damaged = java.util.Arrays.copyOf(newestBytes, p);
      }
      Files.write(newestFile, damaged);
      List<Frame> kept = newestFrames.stream().filter(f -> f.end() <= p).toList();
      long validBytes = kept.isEmpty() ? 0 : kept.get(kept.size() - 1).end();
      long expectedTail =
          kept.isEmpty()
              ? newestFrames.get(0).base()
              : kept.get(kept.size() - 1).base() + kept.get(kept.size() - 1).count();
      Map<String, String> expectedCp =
          kept.isEmpty() ? cpAtNewestBase : kept.get(kept.size() - 1).cpAfter();
      String what = (flip ? "flip" : "truncation") + " at byte " + p + " (case " + c + ")";

      try (FileStorage s = FileStorage.open(config, clock, StoreIo.DEFAULT)) {
        DurableQueueStore qs = s.queues();
        assertThat(qs.tail(Q)).as(what).isEqualTo(expectedTail);
        assertThat(Files.size(newestFile)).as(what).isEqualTo(validBytes);
        if (validBytes < damaged.length) {
          cuts++;
          assertThat(s.recovery().logCuts())
              .as(what)
              .singleElement()
              .satisfies(
                  cut -> {
                    assertThat(cut.keptBytes()).isEqualTo(validBytes);
                    assertThat(cut.cutBytes()).isEqualTo(damaged.length - validBytes);
                    assertThat(cut.file()).isEqualTo(newestFile);
                  });
        } else {
          assertThat(s.recovery().logCuts()).as(what).isEmpty();
        }
        assertThat(qs.checkpoints(Q)).as(what).isEqualTo(expectedCp);
        long from = newestFrames.get(0).base();
        List<Message> read = qs.readBatch(Q, from, 1000);
        assertThat(read).as(what).isEqualTo(appended.subList((int) from, (int) expectedTail));
        assertThat(qs.read(Q, 0)).as(what).isEqualTo(appended.get(0));
        long next = qs.append(Q, TestMessages.text("after " + c));
        assertThat(next).as(what).isEqualTo(expectedTail);
        assertThat(TestMessages.text(qs.read(Q, next))).isEqualTo("after " + c);
      }
    }
    assertThat(cuts).as("cases that needed a cut").isGreaterThan(cases / 2);
  }

  @Test
  void withVerifyOnOpenNewestDamageInAnOlderSegmentIsFoundOnlyByTheReadThatMeetsIt()
      throws Exception {
    config = config.withVerifyOnOpen(FileStoreConfig.VerifyOnOpen.NEWEST);
    Random rnd = new Random(SEED + 3);
    for (int c = 0; c < 60; c++) {
      Files.write(olderFile, olderBytes);
      int p = rnd.nextInt(olderBytes.length);
      byte[] damaged = olderBytes.clone();
      damaged[p] ^= (byte) (1 + rnd.nextInt(255));
      Files.write(olderFile, damaged);
      Frame hit =
          olderFrames.stream().filter(f -> f.start() <= p && p < f.end()).findFirst().orElseThrow();
      String what = "flip at byte " + p + " (case " + c + ")";
      try (FileStorage s = FileStorage.open(config, clock, StoreIo.DEFAULT)) {
        DurableQueueStore qs = s.queues();
        assertThat(s.recovery().damage()).as(what).isEmpty();
        for (long o = olderFrames.get(0).base(); o < hit.base() + hit.count(); o++) {
          final long offset = o;
          StoreCorruptedException e =
              catchThrowableOfType(StoreCorruptedException.class, () -> qs.read(Q, offset));
          if (o < hit.base()) {
            assertThat(e).as("offset %d before the damaged frame: %s", o, what).isNull();
            assertThat(qs.read(Q, o)).isEqualTo(appended.get((int) o));
          } else {
            assertThat(e).as("offset %d in the damaged frame: %s", o, what).isNotNull();
            assertThat(e.file()).isEqualTo(olderFile.toString());
            assertThat(e.position()).as(what).isBetween(hit.start(), hit.end());
          }
        }
      }
    }
  }

  @Test
  void damageInAnOlderSegmentFailsClosedOnReadNamingFileAndPosition() throws Exception {
    Random rnd = new Random(SEED + 2);
    long segBase = olderFrames.get(0).base();
    long segEnd =
        olderFrames.get(olderFrames.size() - 1).base()
            + olderFrames.get(olderFrames.size() - 1).count();
    byte[] pristineIndex = Files.readAllBytes(indexOf(olderFile));
    for (int c = 0; c < 300; c++) {
      Files.write(olderFile, olderBytes);
      switch (c % 4) { // the index: intact, missing, garbage, intact
        case 1 -> Files.deleteIfExists(indexOf(olderFile));
        case 2 -> Files.write(indexOf(olderFile), new byte[] {1, 2, 3});
        default -> Files.write(indexOf(olderFile), pristineIndex);
      }
      boolean flip = c % 3 != 0;
      int p = rnd.nextInt(olderBytes.length);
      byte[] damaged;
      if (flip) {
        damaged = olderBytes.clone();
        damaged[p] ^= (byte) (1 + rnd.nextInt(255));
      } else {
        damaged = java.util.Arrays.copyOf(olderBytes, p);
      }
      Files.write(olderFile, damaged);
      Frame hit =
          olderFrames.stream().filter(f -> f.start() <= p && p < f.end()).findFirst().orElseThrow();
      String what = (flip ? "flip" : "truncation") + " at byte " + p + " (case " + c + ")";

      try (FileStorage s = FileStorage.open(config, clock, StoreIo.DEFAULT)) {
        DurableQueueStore qs = s.queues();
        assertThat(s.recovery().logCuts())
            .as("older segments are never cut on open: " + what)
            .isEmpty();
        assertThat(s.recovery().damage())
            .as("found at open, from the damaged frame to the segment's end: " + what)
            .singleElement()
            .satisfies(
                d -> {
                  assertThat(d.file()).isEqualTo(olderFile);
                  assertThat(d.position()).isEqualTo(hit.start());
                  assertThat(d.fromOffset()).isEqualTo(hit.base());
                  assertThat(d.toOffset()).isEqualTo(segEnd);
                });
        for (long o = segBase; o < segEnd; o++) {
          boolean inDamaged = o >= hit.base() && (flip ? o < hit.base() + hit.count() : true);
          final long offset = o;
          StoreCorruptedException e =
              catchThrowableOfType(StoreCorruptedException.class, () -> qs.read(Q, offset));
          if (e == null) {
            assertThat(inDamaged).as("offset %d read although damaged: %s", o, what).isFalse();
            assertThat(qs.read(Q, o)).as(what).isEqualTo(appended.get((int) o));
          } else {
            assertThat(e.file()).as(what).isEqualTo(olderFile.toString());
            assertThat(e.getMessage()).contains(olderFile.toString());
            if (flip) {
              assertThat(e.position()).as(what).isBetween(hit.start(), hit.end());
            } else {
              assertThat(e.position()).as(what).isLessThanOrEqualTo(hit.end());
            }
          }
        }
      }
    }
  }

  private static Path indexOf(Path log) {
    String n = log.getFileName().toString();
    return log.resolveSibling(n.substring(0, n.length() - 4) + ".idx");
  }

  private List<Path> segmentFiles() throws Exception {
    Path qdir = storeDir.resolve("queues").resolve(Q);
    try (var s = Files.list(qdir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".log")).sorted().toList();
    }
  }

  private static Map<String, String> readCheckpointSnapshot(Path log) throws Exception {
    String n = log.getFileName().toString();
    Path cpt = log.resolveSibling(n.substring(0, n.length() - 4) + ".cpt");
    byte[] payload = Blobs.unwrap(Blobs.CHECKPOINT_MAGIC, "cpt", cpt, Files.readAllBytes(cpt), Q);
    ByteSource src = new ByteSource(payload, 0, payload.length);
    src.getLong();
    int k = src.getInt();
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < k; i++) {
      m.put(src.getString(), src.getString());
    }
    return m;
  }

  /** Walks a pristine segment's frames (independently of the store's own scanner). */
  private static List<Frame> frames(byte[] b, Map<String, String> cpStart) {
    List<Frame> out = new ArrayList<>();
    Map<String, String> cp = new HashMap<>(cpStart);
    int pos = 0;
    while (pos < b.length) {
      Frames.FrameHeader h = Frames.header(b, pos);
      assertThat(Frames.crc(b, pos, h.length())).isEqualTo(h.crc());
      cp.putAll(Frames.checkpoints(b, pos, h));
      out.add(new Frame(pos, pos + h.length(), h.baseOffset(), h.count(), Map.copyOf(cp)));
      pos += h.length();
    }
    return out;
  }
}
