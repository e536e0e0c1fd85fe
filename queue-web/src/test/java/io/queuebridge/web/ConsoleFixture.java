package io.queuebridge.web;

import io.queuebridge.cli.CommandRunner;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.group.GroupDelivery;
import io.queuebridge.core.message.PublishRequest;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A file store for the console's tests, written through the public API, and the connector config
 * that names it:
 *
 * <ul>
 *   <li>{@code jobs}: a classic queue of {@value #JOBS} messages ({@code job-0} ...), keys {@code
 *       job-N}; group {@code workers}: 0 acknowledged, 1 and 2 rejected into {@code $dlq/jobs}, 3
 *       held by member {@code w-1};
 *   <li>{@code $dlq/jobs}: the two rejected messages;
 *   <li>{@code blobs}: one message whose value is {@value #BIG} characters (cut on the page).
 * </ul>
 */
final class ConsoleFixture {
  static final int JOBS = 6;
  static final int BIG = 5000;

  private ConsoleFixture() {}

  /** Fills a new file store in {@code dir} and returns a source connector config naming it. */
  static Path create(Path dir) throws IOException, InterruptedException {
    Path store = Files.createDirectories(dir.resolve("store"));
    try (Storage storage = QueueStores.provider("file").open(Map.of("path", store.toString()))) {
      QueueManager manager =
          new QueueManager(storage, QueueManagerConfig.builder().clock(Clock.systemUTC()).build());
      manager.createQueue(QueueConfig.durable("jobs").topics("jobs/#").build());
      for (int i = 0; i < JOBS; i++) {
        manager.publishTo(
            "jobs",
            PublishRequest.builder("jobs/mail")
                .key(utf8("job-" + i))
                .value(utf8("send mail " + i))
                .header("trace", utf8("t-" + i))
                .build());
      }
      manager.subscribeExisting("jobs", null, "w-1", "workers");
      List<GroupDelivery> claimed =
          manager.consumerGroups().claimBatch("jobs", "workers", "w-1", 4);
      claimed.get(0).ack();
      claimed.get(1).reject("malformed address");
      claimed.get(2).reject("mailbox full");
      manager.createQueue(QueueConfig.durable("blobs").topics("blobs/#").build());
      manager.publishTo(
          "blobs", PublishRequest.builder("blobs/x").value(utf8("x".repeat(BIG))).build());
      manager.stop();
    }
    Path config = dir.resolve("source.json");
    Files.writeString(
        config,
        "{\"name\": \"jobs-source\", \"config\": {"
            + "\"connector.class\": \"io.queuebridge.connect.source.QueueSourceConnector\","
            + " \"queue.store.type\": \"file\", \"queue.store.path\": \""
            + store.toString().replace("\\", "\\\\")
            + "\", \"queue.names\": \"jobs\", \"topic\": \"jobs-out\"}}");
    return config;
  }

  /** Publishes one message to {@code queue} of the store {@link #create} made in {@code dir}. */
  static void publish(Path dir, String queue, String key) throws InterruptedException {
    try (Storage storage =
        QueueStores.provider("file").open(Map.of("path", dir.resolve("store").toString()))) {
      QueueManager manager =
          new QueueManager(storage, QueueManagerConfig.builder().clock(Clock.systemUTC()).build());
      manager.publishTo(
          queue, PublishRequest.builder(queue + "/x").key(utf8(key)).value(utf8("late")).build());
      manager.stop();
    }
  }

  /** A console over {@code config}, on a free port of 127.0.0.1. */
  static Console start(Path config, String token) {
    ConsoleSettings settings =
        new ConsoleSettings(
            List.of(config),
            "127.0.0.1",
            0,
            token != null,
            token,
            Duration.ofSeconds(1),
            Duration.ofMinutes(5),
            null);
    return Console.start(
        settings,
        Bridge.of(List.of(config), CommandRunner.create(Clock.systemUTC())),
        Clock.systemUTC());
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
