package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.StoreLockedException;
import io.queuebridge.core.errors.StoreNotFoundException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PendingEntry;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The file store's read-only open beside a writer in this JVM: what it refuses to open, that it
 * takes no lock, that it never changes a byte of the directory (torn tails and missing indexes
 * included), and that it follows a writer that appends, rolls and deletes segments concurrently.
 * The contract kit's read-only rules ({@link FileStoreContractTest}) and a writer in another
 * process ({@link ReadOnlyBesideAnotherProcessTest}) cover the rest.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ReadOnlyFileStoreTest {
  private static final String Q = "q";
  private static final Instant T0 = Instant.parse("2024-05-01T00:00:00Z");

  @TempDir Path tmp;
  private final List<AutoCloseable> open = new ArrayList<>();
  private final ExecutorService executor = Executors.newCachedThreadPool();

  @AfterEach
  void closeEverything() throws Exception {
    executor.shutdownNow();
    assertThat(executor.awaitTermination(30, TimeUnit.SECONDS)).as("test threads ended").isTrue();
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  private Path dir() {
    return tmp.resolve("store");
  }

  private static Map<String, String> small(Path dir) {
    return Map.of("path", dir.toString(), "segment.bytes", "1024", "index.interval.bytes", "128");
  }

  private Storage writer(Map<String, String> config) {
    Storage s = QueueStores.open("file", config);
    open.add(s);
    return s;
  }

  private Storage reader(Map<String, String> config) {
    Storage s = QueueStores.provider("file").openReadOnly(config);
    open.add(s);
    return s;
  }

  /** The message appended at {@code offset} by the tests here: every field from the offset. */
  private static Message expected(long offset) {
    return TestMessages.random(new Random(offset * 7919 + 13), 200);
  }

  // ---------------------------------------------------------------- what it opens

  @Test
  void aPathThatIsNoStoreIsStoreNotFoundNamingItAndWhatWasFoundAndNothingIsCreated()
      throws Exception {
    Path missing = tmp.resolve("missing");
    assertThatThrownBy(() -> reader(Map.of("path", missing.toString())))
        .isInstanceOf(StoreNotFoundException.class)
        .hasMessageContaining(missing.toString())
        .hasMessageContaining("does not exist");
    assertThat(missing).doesNotExist();

    Path file = Files.writeString(tmp.resolve("file"), "x");
    assertThatThrownBy(() -> reader(Map.of("path", file.toString())))
        .isInstanceOf(StoreNotFoundException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("a file, not a directory");

    Path empty = Files.createDirectory(tmp.resolve("empty"));
    assertThatThrownBy(() -> reader(Map.of("path", empty.toString())))
        .isInstanceOf(StoreNotFoundException.class)
        .hasMessageContaining(empty.toRealPath().toString())
        .hasMessageContaining("no qb-store marker");
    try (Stream<Path> s = Files.list(empty)) {
      assertThat(s).as("no lock file, no queues directory").isEmpty();
    }
    try (Stream<Path> s = Files.list(tmp)) {
      assertThat(s).extracting(p -> p.getFileName().toString()).containsOnly("file", "empty");
    }
  }

  @Test
  void aReadOnlyOpenSucceedsWhileTheWriterHoldsTheLockAndTakesNoLockItself() throws Exception {
    Storage w = writer(small(dir()));
    w.queues().createQueue(QueueConfig.durable(Q).build());
    w.queues().append(Q, expected(0));
    Storage r = reader(small(dir()));
    assertThat(r.queues().read(Q, 0)).isEqualTo(expected(0).withOffset(0));
    assertThatThrownBy(() -> QueueStores.file(dir()))
        .as("the writer still holds the store alone")
        .isInstanceOf(StoreLockedException.class);
    w.close();
    Storage second = writer(small(dir()));
    assertThat(second.queues().tail(Q)).as("the reader holds no lock").isEqualTo(1);
    second.queues().append(Q, expected(1));
    assertThat(r.queues().tail(Q)).as("the same reader follows the next writer").isEqualTo(2);
  }

  // ---------------------------------------------------------------- never writes

  @Test
  void aTornTailIsInvisibleAndReadingChangesNoByteOfTheDirectory() throws Exception {
    Storage w = writer(small(dir()));
    DurableQueueStore q = w.queues();
    q.createQueue(QueueConfig.durable(Q).topics("t/#").build());
    for (long o = 0; o < 40; o += 4) {
      q.appendBatch(Q, List.of(expected(o), expected(o + 1), expected(o + 2), expected(o + 3)));
    }
    q.truncate(Q, 5);
    w.groups().createGroup(ConsumerGroupState.create(Q, "g", "", GroupMode.QUEUE, true, T0));
    w.groups().claimPending(Q, "g", List.of(entry(5), entry(6)), 7, T0);
    ConsumerGroupState group = w.groups().getGroup(Q, "g");
    w.close();

    Path qdir = dir().resolve("queues").resolve(Q);
    List<Path> logs;
    try (Stream<Path> s = Files.list(qdir)) {
      logs = s.filter(p -> p.toString().endsWith(".log")).sorted().toList();
    }
    assertThat(logs.size()).as("segments rolled").isGreaterThan(3);
    // the writer died inside its last frame: cut the newest segment mid-frame
    Path newest = logs.get(logs.size() - 1);
    long size = Files.size(newest);
    try (FileChannel ch = FileChannel.open(newest, StandardOpenOption.WRITE)) {
      ch.truncate(size - 7);
    }
    // ... and inside a group record
    Files.write(
        qdir.resolve("groups").resolve("g.grp"), new byte[] {0, 0, 0}, StandardOpenOption.APPEND);
    // and an older segment's index is missing: a reader rebuilds it in memory only
    Path index = Path.of(logs.get(1).toString().replace(".log", ".idx"));
    Files.delete(index);
    long lastFrameBase = Long.parseLong(newest.getFileName().toString().substring(0, 20));
    Map<String, String> before = snapshot(dir());

    Storage r = reader(small(dir()));
    DurableQueueStore rq = r.queues();
    long tail = rq.tail(Q);
    assertThat(tail)
        .as("the torn frame is not there")
        .isLessThan(40)
        .isGreaterThanOrEqualTo(lastFrameBase);
    assertThat(rq.head(Q)).isEqualTo(5);
    List<Message> all = rq.readBatch(Q, 0, 100);
    assertThat(all).hasSize((int) (tail - 5));
    for (Message m : all) {
      assertThat(m).isEqualTo(expected(m.offset()).withOffset(m.offset()));
    }
    assertThat(rq.read(Q, 10)).isEqualTo(expected(10).withOffset(10));
    assertThat(rq.listQueues()).extracting(QueueConfig::name).containsExactly(Q);
    assertThat(rq.findMatchingQueues("t/x")).containsExactly(Q);
    assertThat(rq.timeOffset(Q, Instant.EPOCH)).hasValue(5);
    assertThat(rq.sizeOffset(Q, 1 << 30)).hasValue(5);
    assertThat(rq.bytes(Q)).isPresent();
    assertThat(rq.awaitAppend(Q, tail, Duration.ofMillis(50))).isFalse();
    assertThat(r.groups().getGroup(Q, "g")).isEqualTo(group);
    assertThat(r.groups().listGroups(Q)).containsExactly(group);
    r.close();

    assertThat(snapshot(dir())).as("not a byte changed, nothing created").isEqualTo(before);
    assertThat(index).as("the rebuilt index was not saved").doesNotExist();
    try (Storage again = QueueStores.file(dir())) {
      assertThat(again.queues().tail(Q)).as("the writer's recovery agrees").isEqualTo(tail);
    }
  }

  /** Relative path -> size and SHA-256 of every file, "dir" for every directory. */
  private static Map<String, String> snapshot(Path root) throws IOException {
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> s = Files.walk(root)) {
      s.forEach(
          p -> {
            String key = root.relativize(p).toString();
            try {
              out.put(
                  key,
                  Files.isDirectory(p)
                      ? "dir"
                      : Files.size(p) + " " + HexFormat.of().formatHex(sha256(p)));
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
          });
    }
    return out;
  }

  private static byte[] sha256(Path p) throws IOException {
    try {
      return MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static PendingEntry entry(long offset) {
    return new PendingEntry(offset, "c1", T0, 1, T0, T0.plusSeconds(30));
  }

  // ---------------------------------------------------------------- following a live writer

  @Test
  void aReaderFollowsAWriterThatAppendsRollsAndTruncatesConcurrently() throws Exception {
    Map<String, String> config =
        Map.of("path", dir().toString(), "segment.bytes", "4096", "index.interval.bytes", "256");
    Storage w = writer(config);
    w.queues().createQueue(QueueConfig.durable(Q).build());
    Storage r = reader(config);
    DurableQueueStore rq = r.queues();
    int total = 4000;
    AtomicBoolean writing = new AtomicBoolean(true);
    Future<Long> writerDone =
        executor.submit(
            () -> {
              try {
                Random rnd = new Random(1);
                long next = 0;
                int batches = 0;
                while (next < total) {
                  int n = (int) Math.min(1 + rnd.nextInt(5), total - next);
                  List<Message> batch = new ArrayList<>(n);
                  for (int i = 0; i < n; i++) {
                    batch.add(expected(next + i));
                  }
                  assertThat(w.queues().appendBatch(Q, batch)).isEqualTo(next);
                  next += n;
                  if (++batches % 25 == 0) {
                    w.queues().truncate(Q, next - 1 - rnd.nextInt(60)); // inside a segment
                  }
                }
                return w.queues().head(Q);
              } finally {
                writing.set(false);
              }
            });
    Future<Long> pointReads =
        executor.submit(
            () -> {
              Random rnd = new Random(2);
              long reads = 0;
              while (writing.get()) {
                long h = rq.head(Q);
                long t = rq.tail(Q);
                if (t > h) {
                  long o = h + rnd.nextInt((int) (t - h));
                  try {
                    assertThat(rq.read(Q, o)).isEqualTo(expected(o).withOffset(o));
                    reads++;
                  } catch (io.queuebridge.core.errors.OffsetOutOfRangeException truncated) {
                    assertThat(rq.head(Q)).as("only truncated offsets vanish").isGreaterThan(o);
                  }
                }
              }
              return reads;
            });

    long next = 0;
    long lastTail = 0;
    long lastHead = 0;
    long seen = 0;
    while (true) {
      long head = rq.head(Q);
      long tail = rq.tail(Q);
      assertThat(tail).as("the tail never goes back").isGreaterThanOrEqualTo(lastTail);
      assertThat(head).as("the head never goes back").isGreaterThanOrEqualTo(lastHead);
      lastTail = tail;
      lastHead = head;
      List<Message> batch = rq.readBatch(Q, next, 50);
      for (Message m : batch) {
        assertThat(m.offset()).as("offsets in order").isGreaterThanOrEqualTo(next);
        assertThat(m).isEqualTo(expected(m.offset()).withOffset(m.offset()));
        next = m.offset() + 1;
        seen++;
      }
      if (batch.isEmpty()) {
        if (!writing.get() && next >= rq.tail(Q)) {
          break;
        }
        rq.awaitAppend(Q, next, Duration.ofMillis(20));
      }
    }
    long finalHead = writerDone.get(1, TimeUnit.MINUTES);
    assertThat(pointReads.get(1, TimeUnit.MINUTES)).isPositive();
    assertThat(next).isEqualTo(total);
    assertThat(seen).as("a reader never ahead of retention saw most messages").isPositive();
    assertThat(rq.head(Q)).isEqualTo(finalHead).isEqualTo(w.queues().head(Q));
    assertThat(rq.bytes(Q)).isEqualTo(w.queues().bytes(Q));
    assertThat(rq.readBatch(Q, 0, total)).isEqualTo(w.queues().readBatch(Q, 0, total));
  }

  @Test
  void groupChangesAndCompactionsOfTheGroupLogAreFollowed() throws Exception {
    Storage w = writer(small(dir()));
    w.queues().createQueue(QueueConfig.durable(Q).build());
    w.groups().createGroup(ConsumerGroupState.create(Q, "g", "", GroupMode.QUEUE, true, T0));
    Storage r = reader(small(dir()));
    Path file = dir().resolve("queues").resolve(Q).resolve("groups").resolve("g.grp");
    Object firstFile =
        Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
    int compactions = 0;
    Object lastFile = firstFile;
    for (int i = 1; i <= 60_000; i++) {
      w.groups().updateCursor(Q, "g", i, T0.plusMillis(i));
      if (i % 5_000 == 0) {
        assertThat(r.groups().getGroup(Q, "g")).isEqualTo(w.groups().getGroup(Q, "g"));
        Object now =
            Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
        if (!now.equals(lastFile)) {
          compactions++;
          lastFile = now;
        }
      }
    }
    assertThat(compactions).as("the writer compacted the group log").isPositive();
    assertThat(r.groups().getGroup(Q, "g").cursor()).isEqualTo(60_000);
    w.groups().deleteGroup(Q, "g");
    assertThat(r.groups().findGroup(Q, "g")).isEmpty();
  }
}
