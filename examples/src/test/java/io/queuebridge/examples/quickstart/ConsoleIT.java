package io.queuebridge.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.store.postgres.PostgresTestDatabase;
import io.queuebridge.web.Browser;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;

/**
 * The console as an operator runs it beside a bridge: {@code bin/queue-bridge serve} in a process
 * of its own, over the shipped postgres connector configs, while a Connect worker (the plugin
 * archive on {@code plugin.path}) runs the sink and the source, driven in headless Chromium.
 *
 * <ul>
 *   <li>a pause clicked in the console stops the source connector of a stream (another process),
 *       stays paused across a restart of the console, and a resume clicked after it delivers the
 *       rest, every message once and in order;
 *   <li>the bridge-lag page shows each hop with its connector's state from Connect's REST API, and
 *       no page shows the store password.
 * </ul>
 */
class ConsoleIT {
  private static final Duration TIMEOUT = Duration.ofMinutes(3);
  private static final String CLUSTER = "console-it";
  private static final String TOKEN = "console-it-token-0123456789abcdef";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path temp;
  private static PostgresTestDatabase database;
  private static Map<String, String> store;
  private static Map<String, String> placeholders;
  private static EmbeddedConnectCluster cluster;

  @BeforeAll
  static void start() throws IOException {
    database = PostgresTestDatabase.create();
    store = database.config();
    Path secrets = temp.resolve("queue-bridge-secrets.properties");
    Files.writeString(secrets, "password=" + store.get("password") + "\n");
    placeholders =
        Map.of(
            "PG_URL", store.get("url"),
            "PG_USER", store.get("user"),
            "PG_SECRETS_FILE", secrets.toString());
    Map<String, String> worker = new HashMap<>();
    worker.put("config.providers", "file");
    worker.put(
        "config.providers.file.class",
        "org.apache.kafka.common.config.provider.FileConfigProvider");
    cluster = PluginUnderTest.startWorkers(CLUSTER, 1, worker);
  }

  @AfterAll
  static void stop() {
    try {
      if (cluster != null) {
        cluster.stop();
      }
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }

  @Test
  void aPauseClickedInTheConsoleStopsTheSourceHoldsAcrossARestartAndAResumeDeliversTheRest()
      throws Exception {
    String stream = "console-jobs";
    String group = "console-readers";
    String output = "console-jobs-out";
    String connector = "console-jobs-to-kafka";
    Map<String, String> source = new LinkedHashMap<>(example("source-postgres.json"));
    source.put("tasks.max", "1");
    source.put("queue.names", stream);
    source.put("queue.group", group);
    source.put("restore.mode", "false");
    source.put("topic", output);
    source.put("topic.creation.default.partitions", "1");
    source.put("queue.commit.interval.ms", "200");
    cluster.kafka().createTopic(output, 1, 1, Map.of());
    Path sourceFile = configFile(connector, source);

    try (Storage operator = QueueStores.open("postgres", store)) {
      QueueManager app = new QueueManager(operator, QueueManagerConfig.defaults());
      app.start();
      ChromeDriver browser = Browser.start();
      Console console = Console.start(List.of(sourceFile), List.of());
      try {
        app.createQueue(
            QueueConfig.durable(stream).type(QueueType.STREAM).topics(stream + "/#").build());
        PostgresDistributedIT.publishNumbered(app, stream, 0, 100);
        cluster.configureConnector(connector, source);
        cluster
            .assertions()
            .assertConnectorAndExactlyNumTasksAreRunning(connector, 1, "stream source running");
        await("the first 100 written")
            .atMost(TIMEOUT)
            .pollInterval(Duration.ofMillis(500))
            .until(() -> committed(output).size() == 100);

        login(browser, console, "/queue?s=1&q=" + stream);
        By groupRow = By.cssSelector("tr[data-group='" + group + "']");
        Browser.clickThrough(
            browser, By.cssSelector("tr[data-group='" + group + "'] button.pause"));
        await("the group shown paused")
            .ignoreExceptions()
            .atMost(Duration.ofSeconds(30))
            .untilAsserted(
                () -> assertThat(browser.findElement(groupRow).getText()).contains("paused"));
        assertThat(app.consumerGroups().group(stream, group).orElseThrow().paused())
            .as("the pause as another process reads the store")
            .isTrue();
        PostgresDistributedIT.publishNumbered(app, stream, 100, 300);
        await("the source stopped with messages left unread")
            .atMost(TIMEOUT)
            .pollInterval(Duration.ofMillis(500))
            .during(Duration.ofSeconds(5))
            .until(() -> committed(output).size() < 300);

        // a new console process: the pause is in the store, not in the console
        console.close();
        console = Console.start(List.of(sourceFile), List.of());
        browser.get(console.url + "queue?s=1&q=" + stream);
        await("the group shown paused")
            .ignoreExceptions()
            .atMost(Duration.ofSeconds(30))
            .untilAsserted(
                () -> assertThat(browser.findElement(groupRow).getText()).contains("paused"));
        assertThat(committed(output).size()).isLessThan(300);

        login(browser, console, "/queue?s=1&q=" + stream);
        Browser.clickThrough(
            browser, By.cssSelector("tr[data-group='" + group + "'] button.resume"));
        await("the group shown delivering")
            .ignoreExceptions()
            .atMost(Duration.ofSeconds(30))
            .untilAsserted(
                () -> assertThat(browser.findElement(groupRow).getText()).contains("delivering"));
        await("the rest written after the resume")
            .atMost(TIMEOUT)
            .pollInterval(Duration.ofMillis(500))
            .until(() -> committed(output).size() >= 300);
        cluster.deleteConnector(connector);
        List<String> keys =
            committed(output).stream()
                .map(r -> new String(r.key(), StandardCharsets.UTF_8))
                .toList();
        assertThat(keys)
            .as("every message once, in stream order")
            .containsExactlyElementsOf(IntStream.range(0, 300).mapToObj(i -> "m-" + i).toList());
      } finally {
        console.close();
        browser.quit();
        app.stop();
      }
    }
  }

  @Test
  void theLagPageShowsEveryHopWithItsConnectorsStateAndNoPageShowsThePassword() throws Exception {
    String input = "console-orders";
    String sinkName = "console-orders-to-stream";
    Map<String, String> sink = new LinkedHashMap<>(example("sink-postgres.json"));
    sink.put("topics", input);
    sink.put("queue.name", input);
    sink.put("queue.topics", input + "/#");
    sink.put("tasks.max", "1");
    cluster.kafka().createTopic(input, 1, 1, Map.of());
    for (int i = 0; i < 50; i++) {
      cluster.kafka().produce(input, "k-" + i, "v-" + i);
    }
    cluster.configureConnector(sinkName, sink);
    cluster.assertions().assertConnectorAndExactlyNumTasksAreRunning(sinkName, 1, "sink running");
    Path sinkFile = configFile(sinkName, sink);
    ChromeDriver browser = Browser.start();
    Console console =
        Console.start(
            List.of(sinkFile),
            List.of(
                "--bootstrap-server",
                cluster.kafka().bootstrapServers(),
                "--connect-url",
                cluster.endpointForResource("").replaceAll("/$", "")));
    try {
      await("the sink wrote the 50 records")
          .atMost(TIMEOUT)
          .pollInterval(Duration.ofSeconds(1))
          .untilAsserted(
              () -> {
                browser.get(console.url + "lag");
                WebElement row =
                    browser.findElement(
                        By.xpath("//table[@class='lag']//tr[td[2][text()='" + sinkName + "']]"));
                List<String> cells =
                    row.findElements(By.tagName("td")).stream().map(WebElement::getText).toList();
                // hop, connector, state, from, partition, to, end, committed, lag, watermark, lag
                assertThat(cells)
                    .containsExactly(
                        "sink", sinkName, "RUNNING", input, "0", input, "50", "50", "0", "50", "0");
              });
      Browser.screenshot(browser, "lag");
      String password = store.get("password");
      for (String page : List.of("", "lag", "queue?s=1&q=" + input, "messages?s=1&q=" + input)) {
        browser.get(console.url + page);
        assertThat(browser.getPageSource()).as("page /%s", page).doesNotContain(password);
      }
      assertThat(browser.getPageSource()).contains("v-0");
    } finally {
      console.close();
      browser.quit();
      cluster.deleteConnector(sinkName);
    }
  }

  // ---- helpers

  /** The shipped example's config map, its placeholders filled, its password still a reference. */
  private static Map<String, String> example(String file) {
    return ExampleConfig.read(PluginUnderTest.dir().resolve("etc").resolve(file))
        .config(placeholders);
  }

  private static Path configFile(String name, Map<String, String> config) throws IOException {
    Path file = temp.resolve(name + ".json");
    Files.writeString(file, JSON.writeValueAsString(Map.of("name", name, "config", config)));
    return file;
  }

  /** Every committed record of the one-partition {@code topic}, read_committed. */
  private static List<ConsumerRecord<byte[], byte[]>> committed(String topic) throws Exception {
    TopicPartition p = new TopicPartition(topic, 0);
    long stable;
    try (Admin admin = cluster.kafka().createAdminClient()) {
      stable =
          admin
              .listOffsets(
                  Map.of(p, OffsetSpec.latest()),
                  new org.apache.kafka.clients.admin.ListOffsetsOptions(
                      IsolationLevel.READ_COMMITTED))
              .partitionResult(p)
              .get()
              .offset();
    }
    return ReadCommitted.upTo(cluster.kafka(), topic, Map.of(p, stable), Duration.ofSeconds(30));
  }

  private static void login(ChromeDriver browser, Console console, String next) {
    browser.get(
        console.url + "login?next=" + java.net.URLEncoder.encode(next, StandardCharsets.UTF_8));
    browser.findElement(By.id("token")).sendKeys(TOKEN);
    Browser.clickThrough(browser, By.id("login"));
  }

  /** {@code bin/queue-bridge serve} of the repository, in a process of its own. */
  private static final class Console {
    final Process process;
    final String url;

    private Console(Process process, String url) {
      this.process = process;
      this.url = url;
    }

    static Console start(List<Path> configs, List<String> extra) throws IOException {
      Path tokenFile = temp.resolve("console-token");
      Files.writeString(tokenFile, TOKEN + "\n");
      List<String> command =
          new ArrayList<>(
              List.of(
                  PluginUnderTest.repo().resolve("bin/queue-bridge").toString(),
                  "serve",
                  "--port",
                  "0",
                  "--allow-changes",
                  "--token-file",
                  tokenFile.toString(),
                  "--sample-interval",
                  "1s"));
      for (Path c : configs) {
        command.add("--config");
        command.add(c.toString());
      }
      command.addAll(extra);
      Process p =
          new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      BufferedReader out = p.inputReader(StandardCharsets.UTF_8);
      String first = out.readLine();
      assertThat(first).as("serve's first line").startsWith("Queue Bridge console: ");
      return new Console(p, first.substring("Queue Bridge console: ".length()));
    }

    /** Stops it as Ctrl-C would (SIGTERM), and waits for it to exit. */
    void close() throws InterruptedException {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }
}
