package io.queuebridge.core;

import io.queuebridge.core.config.AckDurability;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueAlreadyExistsException;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The child JVM of {@link DedupCrashTest}: publishes {@code id-0}, {@code id-1}, ... with
 * deduplication ids to queue {@code q} (window one hour) of the file store at {@code args[0]} under
 * {@code FSYNC} acknowledgement, printing {@code ack <i> <offset>} after each publish returned,
 * until it is killed.
 */
public final class DedupCrashWriter {
  private DedupCrashWriter() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    Storage storage = QueueStores.file(Path.of(args[0]));
    QueueManager m =
        new QueueManager(
            storage, QueueManagerConfig.builder().ackDurability(AckDurability.FSYNC).build());
    try {
      m.createQueue(QueueConfig.durable("q").dedupWindow(Duration.ofHours(1)).build());
    } catch (QueueAlreadyExistsException e) {
      // a later cycle
    }
    out.println("ready");
    for (int i = 0; ; i++) {
      long offset =
          m.publishTo(
              "q",
              PublishRequest.builder("q")
                  .value(("v" + i).getBytes(StandardCharsets.UTF_8))
                  .deduplicationId("id-" + i)
                  .build());
      out.println("ack " + i + " " + offset);
    }
  }
}
