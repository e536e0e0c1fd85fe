package io.queuebridge.cli;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The writer of {@link LiveStoreTest}, in a child JVM, doing to a file store what a sink worker and
 * a reader do: opens {@code args[0]} writable (holding its lock), declares the protected stream
 * {@code orders}, appends batches of 10 records with the sink's per-partition watermark ({@code
 * kafka/orders/0}) in the same barrier until {@code args[1]} are in, lets the stream group {@code
 * archiver} read the first {@code args[2]} and commit {@code args[3]}, and prints {@code ready
 * tail=.. cursor=.. committed=..}. Then, for every {@code more} line on its standard input, it
 * appends 10 more and prints {@code appended <tail>}, until its standard input closes.
 */
public final class StreamWriterProcess {
  private StreamWriterProcess() {}

  public static void main(String[] args) throws Exception {
    int records = Integer.parseInt(args[1]);
    int read = Integer.parseInt(args[2]);
    int committed = Integer.parseInt(args[3]);
    try (Storage s = QueueStores.file(Path.of(args[0]))) {
      QueueManager manager = new QueueManager(s, QueueManagerConfig.defaults());
      manager.declareProtectedStream(
          QueueConfig.reservedStream("orders").topics("orders/#").build());
      while (s.queues().tail("orders") < records) {
        append(manager, s);
      }
      manager
          .consumerGroups()
          .join("orders", "", "archiver", "archiver-1", CursorOption.earliest(GroupMode.STREAM));
      manager.consumerGroups().commitCursor("orders", "archiver", read);
      manager.consumerGroups().commitOffset("orders", "archiver", committed);
      var g = manager.consumerGroups().group("orders", "archiver").orElseThrow();
      say(
          "ready tail="
              + s.queues().tail("orders")
              + " cursor="
              + g.cursor()
              + " committed="
              + g.committed());
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.equals("more")) {
          append(manager, s);
          say("appended " + s.queues().tail("orders"));
        }
      }
    }
  }

  private static void append(QueueManager manager, Storage s) throws InterruptedException {
    long tail = s.queues().tail("orders");
    List<PublishRequest> batch = new ArrayList<>(10);
    for (int k = 0; k < 10; k++) {
      batch.add(
          PublishRequest.builder("orders")
              .key(("order-" + (tail + k)).getBytes(StandardCharsets.UTF_8))
              .value(("{\"n\":" + (tail + k) + "}").getBytes(StandardCharsets.UTF_8))
              .build());
    }
    manager.publishBatchToDurableStream(
        "orders", batch, Map.of("kafka/orders/0", Long.toString(tail + 10)));
  }

  private static void say(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
