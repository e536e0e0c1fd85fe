package io.queuebridge.core.store.file;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PendingEntry;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * I/O failures injected at the seam: the caller gets the error, nothing unacknowledged is reported
 * durable, and the store is consistent after a reopen with the real I/O.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FaultInjectionTest {
  private static final String Q = "q";
  private static final Instant T0 = Instant.parse("2024-05-01T12:00:00Z");
  @TempDir Path tmp;
  private final FaultyIo io = new FaultyIo();
  private FileStorage storage;

  private FileStoreConfig config() {
    return FileStoreConfig.defaults(tmp.resolve("store"))
        .withSegmentBytes(1024)
        .withSyncIntervalMs(60_000);
  }

  private DurableQueueStore open() {
    storage = FileStorage.open(config(), Clock.systemUTC(), io);
    if (storage.queues.get(Q) == null) {
      storage.queues().createQueue(QueueConfig.durable(Q).build());
    }
    return storage.queues();
  }

  /** Reopens with the real I/O and returns every message's text. */
  private List<String> reopenAndReadAll() {
    storage.close();
    storage = FileStorage.open(config(), Clock.systemUTC(), StoreIo.DEFAULT);
    List<String> out = new ArrayList<>();
    for (Message m : storage.queues().readBatch(Q, 0, 10_000)) {
      out.add(TestMessages.text(m));
    }
    return out;
  }

  @AfterEach
  void close() {
    if (storage != null) {
      storage.close();
    }
  }

  @Test
  void aFailedWriteIsReportedAndTheNextAppendTakesItsOffset() {
    DurableQueueStore q = open();
    int at = io.segmentWrites.get() + 3;
    io.beforeWrite =
        (f, n) -> {
          if (n == at) {
            throw new IOException("injected write failure");
          }
        };
    assertThat(q.append(Q, TestMessages.text("m0"))).isZero();
    assertThat(q.append(Q, TestMessages.text("m1"))).isEqualTo(1);
    assertThatThrownBy(() -> q.append(Q, TestMessages.text("failed")))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("injected write failure")
        .hasMessageContaining(Q);
    assertThat(q.tail(Q)).isEqualTo(2);
    assertThat(q.append(Q, TestMessages.text("m2"))).isEqualTo(2);
    assertThat(reopenAndReadAll()).containsExactly("m0", "m1", "m2");
  }

  @Test
  void aTornWriteIsCutBackSoTheLogStaysContiguous() throws Exception {
    DurableQueueStore q = open();
    io.tornWriteAt = io.segmentWrites.get() + 2;
    assertThat(q.appendAndSync(Q, TestMessages.text("m0"))).isZero();
    assertThatThrownBy(() -> q.appendAndSync(Q, TestMessages.text("torn " + "x".repeat(200))))
        .isInstanceOf(QueueStoreException.class);
    assertThat(q.appendAndSync(Q, TestMessages.text("m1"))).isEqualTo(1);
    assertThat(q.read(Q, 1)).extracting(TestMessages::text).isEqualTo("m1");
    assertThat(reopenAndReadAll()).containsExactly("m0", "m1");
    assertThat(storage.recovery().logCuts()).as("nothing torn was left behind").isEmpty();
  }

  @Test
  void aFailedFsyncFailsTheDurableAppendAndTheStoreReopensConsistent() throws Exception {
    DurableQueueStore q = open();
    assertThat(q.appendAndSync(Q, TestMessages.text("m0"))).isZero();
    int at = io.segmentForces.get() + 1;
    io.beforeForce =
        (f, n) -> {
          if (n == at || n == at + 1) {
            throw new IOException("injected fsync failure #" + n);
          }
        };
    assertThatThrownBy(
            () -> q.appendBatchAndSync(Q, List.of(TestMessages.text("m1")), Map.of("p", "1")))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("must not be acknowledged");
    // sticky: the retry under the lock fails too (#2), so this append is refused before writing
    assertThatThrownBy(() -> q.appendAndSync(Q, TestMessages.text("refused")))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("previous sync failure persists");
    // #3 works: appends resume
    assertThat(q.appendBatchAndSync(Q, List.of(TestMessages.text("m2")), Map.of("p", "2")))
        .isEqualTo(2);
    List<String> all = reopenAndReadAll();
    // the unacknowledged m1 may or may not be there (it is: the page cache kept it); the refused
    // append is not; everything acknowledged is
    assertThat(all).containsExactly("m0", "m1", "m2");
    assertThat(storage.queues().checkpoints(Q)).containsEntry("p", "2");
  }

  @Test
  void aFailedRollLeavesTheOldSegmentActiveAndLosesNothing() {
    DurableQueueStore q = open();
    List<String> written = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      q.append(Q, TestMessages.text("m" + i + "-" + "x".repeat(150)));
      written.add("m" + i + "-" + "x".repeat(150));
    }
    int segments = storage.queues.get(Q).log.segmentCount();
    io.beforeDirSync =
        (d, n) -> {
          throw new IOException("injected directory sync failure");
        };
    // appends until one needs a roll, which fails
    QueueStoreException failure = null;
    for (int i = 5; i < 20 && failure == null; i++) {
      String text = "m" + i + "-" + "x".repeat(150);
      try {
        q.append(Q, TestMessages.text(text));
        written.add(text);
      } catch (QueueStoreException e) {
        failure = e;
      }
    }
    assertThat(failure).isNotNull().hasMessageContaining("rolling a new segment");
    assertThat(storage.queues.get(Q).log.segmentCount()).isEqualTo(segments);
    io.beforeDirSync = (d, n) -> {};
    String last = "after-" + "y".repeat(150);
    q.append(Q, TestMessages.text(last));
    written.add(last);
    assertThat(storage.queues.get(Q).log.segmentCount()).isEqualTo(segments + 1);
    assertThat(reopenAndReadAll()).containsExactlyElementsOf(written);
  }

  @Test
  void aFailedGroupWriteLeavesTheGroupAsItWas() {
    open();
    storage.groups().createGroup(ConsumerGroupState.create(Q, "g", "", GroupMode.QUEUE, true, T0));
    PendingEntry e1 = new PendingEntry(1, "c", T0, 1, T0, T0.plusSeconds(30));
    storage.groups().addPending(Q, "g", e1);
    io.beforeWrite =
        (f, n) -> {
          if (f.getFileName().toString().endsWith(".grp")) {
            throw new IOException("injected group write failure");
          }
        };
    PendingEntry e2 = new PendingEntry(2, "c", T0, 1, T0, T0.plusSeconds(30));
    assertThatThrownBy(() -> storage.groups().addPending(Q, "g", e2))
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("consumer group g");
    assertThatThrownBy(() -> storage.groups().updateCursor(Q, "g", 9, T0))
        .isInstanceOf(QueueStoreException.class);
    assertThat(storage.groups().getGroup(Q, "g").pending()).containsExactly(e1);
    assertThat(storage.groups().getGroup(Q, "g").cursor()).isZero();
    io.beforeWrite = (f, n) -> {};
    storage.groups().updateCursor(Q, "g", 2, T0);
    ConsumerGroupState before = storage.groups().getGroup(Q, "g");
    storage.close();
    storage = FileStorage.open(config(), Clock.systemUTC(), StoreIo.DEFAULT);
    assertThat(storage.groups().getGroup(Q, "g")).isEqualTo(before);
  }
}
