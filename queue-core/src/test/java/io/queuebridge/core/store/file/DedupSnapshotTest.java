package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.message.MessageProperties;
import io.queuebridge.core.store.AppendResult;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.support.DedupIndex.Remembered;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The saved deduplication ids of truncated messages (BEHAVIOUR Q-DEDUP, {@link DedupSnapshot}): a
 * truncation writes only the ids it removes, merges keep the files few and bounded, and reading
 * them gives the same answer whatever a crash left between a merge and its deleted chunks.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class DedupSnapshotTest {
  private static final String Q = "q";
  private static final Instant T0 = Instant.parse("2024-05-01T00:00:00Z");
  private static final Duration WINDOW = Duration.ofMinutes(5);

  @TempDir Path tmp;
  private FileStorage storage;

  private DurableQueueStore open() {
    storage =
        FileStorage.open(
            FileStoreConfig.defaults(tmp.resolve("store")),
            Clock.fixed(T0, ZoneOffset.UTC),
            new FaultyIo());
    if (storage.queues.get(Q) == null) {
      storage.queues().createQueue(QueueConfig.durable(Q).dedupWindow(WINDOW).build());
    }
    return storage.queues();
  }

  private DurableQueueStore reopen() {
    storage.close();
    return open();
  }

  @AfterEach
  void close() {
    if (storage != null) {
      storage.close();
    }
  }

  private Path queueDir() {
    return tmp.resolve("store").resolve("queues").resolve(Q);
  }

  private static Message message(String id, Instant at) {
    return Message.builder()
        .value(id.getBytes(StandardCharsets.UTF_8))
        .createdAt(at)
        .property(MessageProperties.DEDUP_ID, id)
        .build();
  }

  private static AppendResult append(DurableQueueStore q, String id, Instant at) {
    return q.appendDeduplicated(Q, message(id, at), at.minus(WINDOW));
  }

  private List<Remembered> saved() throws Exception {
    return DedupSnapshot.read(Q, queueDir());
  }

  @Test
  void aTruncationSavesOnlyTheIdsOfTheMessagesItRemoves() throws Exception {
    DurableQueueStore q = open();
    for (int i = 0; i < 10; i++) {
      append(q, "id-" + i, T0);
    }
    q.truncate(Q, 4);
    q.truncate(Q, 7);

    assertThat(DedupSnapshot.readFile(Q, DedupSnapshot.chunk(queueDir(), 0)))
        .extracting(Remembered::id)
        .containsExactly("id-0", "id-1", "id-2", "id-3");
    assertThat(DedupSnapshot.readFile(Q, DedupSnapshot.chunk(queueDir(), 4)))
        .extracting(Remembered::id)
        .containsExactly("id-4", "id-5", "id-6");
    assertThat(Files.exists(DedupSnapshot.file(queueDir()))).as("no base yet").isFalse();
  }

  @Test
  void aTruncationThatRemovesNothingWritesNothing() throws Exception {
    DurableQueueStore q = open();
    for (int i = 0; i < 3; i++) {
      append(q, "id-" + i, T0);
    }
    q.truncate(Q, 2);
    Path chunk = DedupSnapshot.chunk(queueDir(), 0);
    Files.delete(chunk); // a write would bring it (or another file) back

    q.truncate(Q, 2);
    q.truncate(Q, 1);

    assertThat(DedupSnapshot.chunks(queueDir())).isEmpty();
    assertThat(Files.exists(DedupSnapshot.file(queueDir()))).isFalse();
  }

  /** The base and the chunks, as {@code save} keeps them. */
  private List<Path> files() throws Exception {
    List<Path> out = new java.util.ArrayList<>(DedupSnapshot.chunks(queueDir()));
    if (Files.exists(DedupSnapshot.file(queueDir()))) {
      out.add(DedupSnapshot.file(queueDir()));
    }
    return out;
  }

  /** At most about log2(ids) files: each merge at least doubles what a file holds. */
  private static int bound(int ids) {
    return 2 + (32 - Integer.numberOfLeadingZeros(ids));
  }

  @Test
  void manyTruncationsMergeIntoFewFilesAndEveryIdIsStillRefusedAfterAReopen() throws Exception {
    DurableQueueStore q = open();
    int truncations = 200;
    for (int t = 0; t < truncations; t++) {
      append(q, "id-" + t, T0.plusMillis(t));
      q.truncate(Q, q.tail(Q));
      assertThat(files()).as("after %d truncations", t + 1).hasSizeLessThanOrEqualTo(bound(t + 1));
    }
    assertThat(Files.exists(DedupSnapshot.file(queueDir()))).as("merged into the base").isTrue();
    assertThat(saved()).extracting(Remembered::offset).doesNotHaveDuplicates().hasSize(truncations);

    q = reopen();
    Instant later = T0.plusSeconds(10);
    for (int t = 0; t < truncations; t++) {
      assertThat(append(q, "id-" + t, later)).as("id-" + t).isEqualTo(AppendResult.duplicateOf(t));
    }
    assertThat(q.tail(Q)).as("nothing stored").isEqualTo(truncations);
  }

  @Test
  void smallChunksAreMergedAmongThemselvesAndALargerOlderFileIsLeftAsItIs() throws Exception {
    DurableQueueStore q = open();
    for (int i = 0; i < 200; i++) {
      append(q, "first-" + i, T0);
    }
    q.truncate(Q, q.tail(Q)); // one chunk of 200 ids
    Path first = DedupSnapshot.chunk(queueDir(), 0);
    long firstBytes = Files.size(first);
    int later = 64; // one id each: 64 together are still smaller than the first chunk
    for (int t = 0; t < later; t++) {
      append(q, "more-" + t, T0);
      q.truncate(Q, q.tail(Q));
      assertThat(files()).hasSizeLessThanOrEqualTo(1 + bound(t + 1));
    }
    assertThat(Files.size(first))
        .as("the small chunks are merged among themselves, the large one is not rewritten")
        .isEqualTo(firstBytes);
    assertThat(files()).as("64 one-id truncations merged into one chunk").hasSize(2);
    assertThat(saved()).extracting(Remembered::offset).doesNotHaveDuplicates().hasSize(200 + later);

    q = reopen();
    long stored = q.tail(Q);
    for (int i = 0; i < 200; i++) {
      assertThat(append(q, "first-" + i, T0.plusSeconds(1))).isEqualTo(AppendResult.duplicateOf(i));
    }
    for (int t = 0; t < later; t++) {
      assertThat(append(q, "more-" + t, T0.plusSeconds(1)).duplicate()).as("more-" + t).isTrue();
    }
    assertThat(q.tail(Q)).as("nothing stored").isEqualTo(stored);
  }

  @Test
  void aMergeDropsTheIdsTheWindowNoLongerHolds() throws Exception {
    DurableQueueStore q = open();
    append(q, "old", T0);
    q.truncate(Q, 1);
    Instant late = T0.plus(WINDOW).plusSeconds(1); // "old" has left the window
    for (int t = 0; t < 4; t++) {
      append(q, "new-" + t, late);
      q.truncate(Q, q.tail(Q));
    }
    assertThat(Files.exists(DedupSnapshot.file(queueDir()))).isTrue();
    assertThat(saved()).extracting(Remembered::id).doesNotContain("old").hasSize(4);
  }

  @Test
  void aChunkACrashLeftBesideTheFileItWasMergedIntoDoesNotHideALaterStoreOfItsIds()
      throws Exception {
    DurableQueueStore q = open();
    append(q, "x", T0); // offset 0
    q.truncate(Q, 1);
    Path stale = tmp.resolve("stale-chunk");
    Files.copy(DedupSnapshot.chunk(queueDir(), 0), stale);
    // "x" leaves its window and is stored anew; then truncations that merge it into the base
    Instant late = T0.plus(WINDOW).plusSeconds(1);
    assertThat(append(q, "x", late)).isEqualTo(AppendResult.stored(1));
    for (int t = 0; t < 4; t++) {
      append(q, "y-" + t, late);
      q.truncate(Q, q.tail(Q));
    }
    assertThat(Files.exists(DedupSnapshot.file(queueDir()))).isTrue();
    assertThat(DedupSnapshot.chunks(queueDir())).doesNotContain(DedupSnapshot.chunk(queueDir(), 0));
    // a crash after the merge, before the chunk was deleted: the old chunk is back
    Files.copy(stale, DedupSnapshot.chunk(queueDir(), 0), StandardCopyOption.REPLACE_EXISTING);

    q = reopen();
    // a window reaching back to both stores of x: the later one answers, as it does from the log
    assertThat(q.appendDeduplicated(Q, message("x", late), T0.minus(WINDOW)))
        .as("the later store of x answers, not the one the stale chunk holds")
        .isEqualTo(AppendResult.duplicateOf(1));
  }

  @Test
  void aChunkSavedBeforeATruncationThatNeverRanChangesNoAnswer() throws Exception {
    DurableQueueStore q = open();
    for (int i = 0; i < 4; i++) {
      append(q, "id-" + i, T0);
    }
    q.truncate(Q, 2);
    // a crash after the next chunk was made durable, before its truncation: the messages stay
    Files.copy(DedupSnapshot.chunk(queueDir(), 0), DedupSnapshot.chunk(queueDir(), 2));

    q = reopen();
    assertThat(q.head(Q)).isEqualTo(2);
    for (int i = 0; i < 4; i++) {
      assertThat(append(q, "id-" + i, T0.plusSeconds(1))).isEqualTo(AppendResult.duplicateOf(i));
    }
    q.truncate(Q, 4); // from head 2 again: replaces the chunk the crash left, then merges
    assertThat(saved()).extracting(Remembered::id).containsExactly("id-0", "id-1", "id-2", "id-3");
  }
}
