package io.queuebridge.examples.quickstart;

import io.queuebridge.core.errors.StoreLockedException;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Reads a whole stream from a {@code file} store directory, once whoever had the store open let go
 * of it.
 *
 * <p>A Connect worker's copy of the plugin keeps the store open while any connector uses it, and a
 * file store can be open only once per JVM: the stream can be read from outside only after the
 * connectors that name the store are deleted (the store closes with its last user). Until then
 * {@link #read} waits.
 *
 * <p>Stateless and thread-safe.
 */
public final class StreamContents {
  private StreamContents() {}

  /**
   * Every message of {@code stream} in offset order, as snapshots.
   *
   * @param releaseTimeout how long to wait for another opener to close the store
   * @throws IllegalStateException if the store is still locked after {@code releaseTimeout}
   * @throws io.queuebridge.core.errors.QueueNotFoundException if the store has no such stream
   * @throws InterruptedException if interrupted while waiting
   */
  public static List<RecordSnapshot> read(Path storeDir, String stream, Duration releaseTimeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + releaseTimeout.toNanos();
    while (true) {
      try (Storage storage = QueueStores.file(storeDir)) {
        return readAll(storage.queues(), stream);
      } catch (StoreLockedException e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "the store at "
                  + storeDir
                  + " is still open elsewhere after "
                  + releaseTimeout.toSeconds()
                  + " s: "
                  + e.getMessage(),
              e);
        }
        TimeUnit.MILLISECONDS.sleep(200);
      }
    }
  }

  private static List<RecordSnapshot> readAll(DurableQueueStore queues, String stream) {
    List<RecordSnapshot> out = new ArrayList<>();
    long next = queues.head(stream);
    long tail = queues.tail(stream);
    while (next < tail) {
      List<Message> batch = queues.readBatch(stream, next, 1000);
      if (batch.isEmpty()) {
        break;
      }
      batch.forEach(m -> out.add(RecordSnapshot.stored(m)));
      next = batch.get(batch.size() - 1).offset() + 1;
    }
    return out;
  }
}
