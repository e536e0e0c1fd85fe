package io.queuebridge.examples.quickstart;

import io.queuebridge.core.QueueBridgeVersion;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;

/**
 * One quickstart run, step by step:
 *
 * <ol>
 *   <li>check the plugin directory (manifest, {@code lib/}, the example configs in {@code etc/});
 *   <li>start a one-broker KRaft cluster and one Connect worker ({@link EmbeddedConnectCluster},
 *       free ports) with {@code plugin.path} = the directory holding the plugin and {@code
 *       plugin.discovery=service_load}, and check that {@code GET /connector-plugins} lists both
 *       connectors with this build's version;
 *   <li>create the input topic and produce the {@link SampleRecords};
 *   <li>{@code POST /connectors} the three example configs from the plugin's {@code etc/}, exactly
 *       as shipped but for {@code ${STORE_DIR}}: the sink into the protected stream, the source
 *       replaying the stream into a new topic, the source restoring the original records;
 *   <li>print the counts every second until everything arrived (or the timeout): the records the
 *       sink has made durable in the stream (its committed consumer offsets: the sink commits only
 *       durable offsets), and the records read back from each output topic ({@code
 *       read_committed});
 *   <li>compare record by record: the restored topic must equal the input (key, value, headers,
 *       timestamp, partition, order within each partition), the replay topic must hold every
 *       input's key, value and headers once;
 *   <li>delete the connectors, which closes the store (the worker's copy of the plugin holds it
 *       open, and a file store can be open once per JVM), then open the store here and compare each
 *       stream message with the record it was captured from; end with the operator command lines
 *       ({@link CliHints}) to try on the store it leaves in the work directory ({@code store/});
 *   <li>with {@code --follow}: instead of step 7, print those command lines (they read the store
 *       beside the worker), then keep sending one record a second and printing counts until Ctrl-C.
 * </ol>
 *
 * <p>Not thread-safe; one run per instance.
 */
final class QuickstartRun {
  static final String SINK_EXAMPLE = "sink-protected-stream.json";
  static final String REPLAY_EXAMPLE = "source-replay.json";
  static final String RESTORE_EXAMPLE = "source-restore.json";

  private static final String SINK_CLASS = "io.queuebridge.connect.sink.QueueSinkConnector";
  private static final String SOURCE_CLASS = "io.queuebridge.connect.source.QueueSourceConnector";
  private static final long BASE_TIMESTAMP = 1_767_225_600_000L; // 2026-01-01T00:00:00Z
  private static final Duration CONNECTOR_START_TIMEOUT = Duration.ofSeconds(90);
  private static final Duration STORE_RELEASE_TIMEOUT = Duration.ofSeconds(60);

  private final PrintStream out;
  private final Path pluginDir;
  private final Path workDir;
  private final Path storeDir;
  private final int recordCount;
  private final int rate;
  private final Duration timeout;
  private final int show;
  private final boolean follow;
  private final CliHints cliHints;
  private final long startNanos = System.nanoTime();

  private EmbeddedConnectCluster cluster;
  private volatile boolean stopRequested;
  private final CountDownLatch stopped = new CountDownLatch(1);

  // from the example configs
  private String inputTopic;
  private String streamName;
  private String sinkName;
  private String replayName;
  private String replayTopic;
  private String restoreName;
  private String restoreTopic;
  private int partitions;

  QuickstartRun(
      PrintStream out,
      Path pluginDir,
      Path workDir,
      int recordCount,
      int rate,
      Duration timeout,
      int show,
      boolean follow,
      CliHints cliHints) {
    this.out = out;
    this.pluginDir = pluginDir;
    this.workDir = workDir;
    this.storeDir = workDir.resolve("store");
    this.recordCount = recordCount;
    this.rate = rate;
    this.timeout = timeout;
    this.show = show;
    this.follow = follow;
    this.cliHints = cliHints;
  }

  /** Runs the quickstart; returns the process exit status. */
  int execute() {
    out.println("Queue Bridge quickstart " + QueueBridgeVersion.get());
    out.println("  plugin   " + pluginDir);
    out.println("  work dir " + workDir + "  (store: store/, broker and worker log: worker.log)");
    Map<String, ExampleConfig> examples;
    try {
      examples = checkPlugin();
    } catch (SetupException e) {
      return fail(Quickstart.SETUP_FAILED, e.getMessage());
    }
    Thread hook = new Thread(this::onShutdown, "quickstart-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      return run(examples);
    } catch (SetupException e) {
      return fail(Quickstart.SETUP_FAILED, e.getMessage());
    } catch (FlowException e) {
      return fail(Quickstart.FLOW_FAILED, e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return fail(Quickstart.FLOW_FAILED, "interrupted");
    } catch (RuntimeException e) {
      if (stopRequested) {
        return fail(Quickstart.FLOW_FAILED, "stopped (Ctrl-C)");
      }
      e.printStackTrace(out);
      return fail(Quickstart.FLOW_FAILED, "unexpected error: " + e);
    } finally {
      stopCluster();
      stopped.countDown();
      if (!stopRequested) {
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
          // the JVM is already exiting
        }
      }
    }
  }

  private int run(Map<String, ExampleConfig> examples) throws InterruptedException {
    Map<String, String> placeholders = Map.of("STORE_DIR", storeDir.toString());
    ExampleConfig sink = examples.get(SINK_EXAMPLE);
    ExampleConfig replay = examples.get(REPLAY_EXAMPLE);
    ExampleConfig restore = examples.get(RESTORE_EXAMPLE);
    readNames(sink, replay, restore, placeholders);

    step(
        1,
        "Starting a single-node KRaft broker and a Connect worker (plugin.path="
            + pluginDir.getParent()
            + ", plugin.discovery=service_load)");
    startCluster();
    ConnectRestClient rest = new ConnectRestClient(restUrl());
    detail("broker " + cluster.kafka().bootstrapServers() + ", Connect REST " + rest.base());
    checkPlugins(rest);

    step(
        2,
        "Creating topic '" + inputTopic + "' (" + partitions + " partitions) with sample records");
    // The sample records carry fixed 2026 timestamps: keep them whatever their age (Kafka's
    // default 7-day retention would delete them at the broker's next retention check).
    cluster.kafka().createTopic(inputTopic, partitions, 1, Map.of("retention.ms", "-1"));
    List<RecordSnapshot> produced;
    Map<String, List<RecordSnapshot>> outputs;
    try (SampleFeed feed = new SampleFeed()) {
      produced = feed.produced;
      // the first second's worth now, the rest while the connectors run
      feed.produceUpTo(Math.min(recordCount, rate));
      detail(
          "records: keys, JSON values, headers (repeated, null, binary), a tombstone, one without a"
              + " key; "
              + produced.size()
              + " now, the rest at "
              + rate
              + "/s while the connectors run ("
              + recordCount
              + " in all)");
      table(produced, false);
      outputs = postAndWatch(rest, feed, sink, replay, restore, placeholders);
    }
    step(5, "Back out to Kafka");
    List<RecordSnapshot> restored = outputs.get(restoreTopic);
    List<RecordSnapshot> replayed = outputs.get(replayTopic);
    detail(restoreTopic + " (restore mode):");
    table(restored, false);
    List<String> restoreProblems = compareRestored(produced, restored);
    List<String> replayProblems = compareReplayed(produced, replayed);
    report(
        restoreTopic,
        produced.size(),
        restored.size(),
        restoreProblems,
        "key, value, headers, timestamp, partition and order per partition");
    report(replayTopic, produced.size(), replayed.size(), replayProblems, "key, value and headers");

    if (follow) {
      requireNoProblems(restoreProblems, replayProblems, List.of());
      suggestCommands(
          "While it runs, look at its store from another terminal with the operator command line"
              + " (it only reads, beside the worker):");
      Process console = startConsole(rest, List.of(sink, replay, restore), placeholders);
      try {
        followUntilStopped(rest, produced.size());
      } finally {
        if (console != null) {
          console.destroy();
        }
      }
      return Quickstart.OK;
    }

    step(6, "What reached the stream (read from the store after deleting the connectors)");
    for (String name : List.of(restoreName, replayName, sinkName)) {
      rest.deleteConnector(name);
    }
    List<RecordSnapshot> stream = readStream();
    detail("stream '" + streamName + "' in " + storeDir + ": " + stream.size() + " messages");
    table(stream, true);
    List<String> streamProblems = compareStream(produced, stream);
    report(
        "stream '" + streamName + "'",
        produced.size(),
        stream.size(),
        streamProblems,
        "key, value, headers, timestamp and Kafka coordinates");

    requireNoProblems(restoreProblems, replayProblems, streamProblems);
    out.println();
    out.println(
        "RESULT: OK - "
            + produced.size()
            + " records "
            + inputTopic
            + " -> stream '"
            + streamName
            + "' ("
            + stream.size()
            + " messages) -> "
            + restoreTopic
            + " ("
            + restored.size()
            + " identical) and "
            + replayTopic
            + " ("
            + replayed.size()
            + " identical) in "
            + elapsedSeconds()
            + " s");
    suggestCommands(
        "Look at the store it left with the operator command line (it only reads; ./quickstart"
            + " built it):");
    return Quickstart.OK;
  }

  /** Steps 3 and 4: posts the connectors, feeds the rest of the records, prints progress. */
  private Map<String, List<RecordSnapshot>> postAndWatch(
      ConnectRestClient rest,
      SampleFeed feed,
      ExampleConfig sink,
      ExampleConfig replay,
      ExampleConfig restore,
      Map<String, String> placeholders)
      throws InterruptedException {
    step(3, "Posting the example connector configs (from " + pluginDir.resolve("etc") + ")");
    // the sink first: its task declares the stream, which the sources then find at once (a source
    // posted earlier would pick the stream up at its next queue.refresh.interval.ms)
    post(rest, sink, placeholders);
    awaitRunning(rest, sinkName);
    detail(
        sinkName + ": " + rest.stateSummary(sinkName) + ", stream '" + streamName + "' declared");
    post(rest, replay, placeholders);
    post(rest, restore, placeholders);

    step(
        4,
        "Records flowing: "
            + inputTopic
            + " -> sink -> stream '"
            + streamName
            + "' -> source -> "
            + replayTopic
            + ", "
            + restoreTopic);
    try (Admin admin = cluster.kafka().createAdminClient();
        OutputReader reader = new OutputReader(List.of(replayTopic, restoreTopic))) {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (true) {
        reader.pollFor(Duration.ofSeconds(1), admin);
        feed.produceUpTo(Math.min(recordCount, feed.produced.size() + rate));
        int produced = feed.produced.size();
        long inStream = sinkCommitted(admin);
        progress(produced, inStream, reader, notRunning(rest));
        if (produced == recordCount
            && inStream >= produced
            && reader.count(replayTopic) >= produced
            && reader.count(restoreTopic) >= produced) {
          break;
        }
        if (System.nanoTime() > deadline || stopRequested) {
          throw new FlowException(
              (stopRequested ? "stopped" : "timed out after " + timeout.toSeconds() + " s")
                  + " before every record came through: "
                  + describeFailures(rest)
                  + " (worker log: "
                  + workDir.resolve("worker.log")
                  + ")");
        }
        checkNoneFailed(rest);
      }
      reader.pollFor(Duration.ofSeconds(2), admin); // a duplicate would show up now
      return reader.records();
    }
  }

  // ---- plugin and examples

  private Map<String, ExampleConfig> checkPlugin() {
    if (!Files.isRegularFile(pluginDir.resolve("manifest.json"))
        || !Files.isDirectory(pluginDir.resolve("lib"))) {
      throw new SetupException(
          "no plugin at "
              + pluginDir
              + " (expected manifest.json and lib/). Build it with `mvn -DskipTests package`"
              + " (./quickstart does), or pass --plugin-dir.");
    }
    Map<String, ExampleConfig> examples = new LinkedHashMap<>();
    for (String file : List.of(SINK_EXAMPLE, REPLAY_EXAMPLE, RESTORE_EXAMPLE)) {
      Path path = pluginDir.resolve("etc").resolve(file);
      if (!Files.isRegularFile(path)) {
        throw new SetupException("the plugin has no etc/" + file + " (looked at " + path + ")");
      }
      examples.put(file, ExampleConfig.read(path));
    }
    return examples;
  }

  private void readNames(
      ExampleConfig sink,
      ExampleConfig replay,
      ExampleConfig restore,
      Map<String, String> placeholders) {
    Map<String, String> sinkConfig = sink.config(placeholders);
    sinkName = sink.name();
    inputTopic = required(sink, sinkConfig, "topics");
    streamName = required(sink, sinkConfig, "queue.name");
    replayName = replay.name();
    replayTopic = required(replay, replay.config(placeholders), "topic");
    restoreName = restore.name();
    Map<String, String> restoreConfig = restore.config(placeholders);
    restoreTopic = required(restore, restoreConfig, "topic");
    // restore mode writes each record to its original partition: the input topic gets as many
    // partitions as the example creates the restored topic with
    String restorePartitions = restoreConfig.getOrDefault("topic.creation.default.partitions", "3");
    try {
      partitions = Integer.parseInt(restorePartitions.trim());
    } catch (NumberFormatException e) {
      partitions = -1;
    }
    if (partitions < 1) {
      throw new SetupException(
          "etc/"
              + restore
              + ": topic.creation.default.partitions must be a positive number: "
              + restorePartitions);
    }
  }

  private static String required(ExampleConfig example, Map<String, String> config, String key) {
    String value = config.get(key);
    if (value == null || value.isBlank() || value.contains(",")) {
      throw new SetupException(
          "etc/" + example + ": the quickstart needs one value for '" + key + "': " + value);
    }
    return value.trim();
  }

  // ---- cluster

  private void startCluster() {
    Map<String, String> worker = new HashMap<>();
    worker.put("plugin.path", pluginDir.getParent().toString());
    worker.put("plugin.discovery", "service_load");
    worker.put("offset.flush.interval.ms", "1000");
    worker.put("exactly.once.source.support", "enabled");
    Properties broker = new Properties();
    broker.put("transaction.state.log.replication.factor", "1");
    broker.put("transaction.state.log.min.isr", "1");
    broker.put("offsets.topic.replication.factor", "1");
    broker.put("group.initial.rebalance.delay.ms", "0");
    try {
      cluster =
          new EmbeddedConnectCluster.Builder()
              .name("queue-bridge-quickstart")
              .numWorkers(1)
              .numBrokers(1)
              .brokerProps(broker)
              .workerProps(worker)
              .build();
      cluster.start();
    } catch (RuntimeException e) {
      throw new SetupException(
          "the broker and worker did not start: "
              + e.getMessage()
              + " (log: "
              + workDir.resolve("worker.log")
              + ")");
    }
  }

  private URI restUrl() {
    return cluster.workers().iterator().next().url();
  }

  private void checkPlugins(ConnectRestClient rest) {
    String version = QueueBridgeVersion.get();
    List<ConnectRestClient.Plugin> plugins = rest.connectorPlugins();
    for (String expected : List.of(SINK_CLASS, SOURCE_CLASS)) {
      ConnectRestClient.Plugin found =
          plugins.stream().filter(p -> p.className().equals(expected)).findFirst().orElse(null);
      if (found == null) {
        throw new SetupException(
            "the worker did not load "
                + expected
                + " from plugin.path "
                + pluginDir.getParent()
                + "; it lists "
                + plugins.stream().map(ConnectRestClient.Plugin::className).toList());
      }
      if (!found.version().equals(version)) {
        throw new SetupException(
            "the worker loaded "
                + expected
                + " version "
                + found.version()
                + ", this build is "
                + version
                + ": rebuild the plugin (mvn -DskipTests package)");
      }
      detail(
          "GET /connector-plugins: "
              + found.className()
              + " "
              + found.version()
              + " ("
              + found.type()
              + ")");
    }
  }

  private void awaitRunning(ConnectRestClient rest, String name) throws InterruptedException {
    long deadline = System.nanoTime() + CONNECTOR_START_TIMEOUT.toNanos();
    while (!rest.isRunning(name)) {
      String trace = rest.failureTrace(name);
      if (!trace.isEmpty()) {
        throw new FlowException("connector " + name + " failed: " + firstLines(trace, 3));
      }
      if (System.nanoTime() > deadline || stopRequested) {
        throw new FlowException(
            "connector "
                + name
                + " is not running after "
                + CONNECTOR_START_TIMEOUT.toSeconds()
                + " s: "
                + rest.stateSummary(name));
      }
      TimeUnit.MILLISECONDS.sleep(200);
    }
  }

  private void checkNoneFailed(ConnectRestClient rest) {
    for (String name : List.of(sinkName, replayName, restoreName)) {
      String trace = rest.failureTrace(name);
      if (!trace.isEmpty()) {
        throw new FlowException("connector " + name + " failed: " + firstLines(trace, 3));
      }
    }
  }

  private String describeFailures(ConnectRestClient rest) {
    List<String> states = new ArrayList<>();
    for (String name : List.of(sinkName, replayName, restoreName)) {
      try {
        states.add(name + " " + rest.stateSummary(name));
      } catch (RuntimeException e) {
        states.add(name + " (status unavailable: " + e.getMessage() + ")");
      }
    }
    return String.join(", ", states);
  }

  private KafkaProducer<byte[], byte[]> producer() {
    Map<String, Object> cfg = new HashMap<>();
    cfg.put(ProducerConfig.ACKS_CONFIG, "all");
    cfg.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
    return cluster.kafka().createProducer(cfg);
  }

  private static RecordMetadata send(
      KafkaProducer<byte[], byte[]> producer, ProducerRecord<byte[], byte[]> r)
      throws InterruptedException {
    try {
      return producer.send(r).get(30, TimeUnit.SECONDS);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new FlowException("could not produce to " + r.topic() + ": " + e);
    }
  }

  /** The records the sink has made durable: the sum of its committed offsets on the input topic. */
  private long sinkCommitted(Admin admin) throws InterruptedException {
    try {
      Map<TopicPartition, OffsetAndMetadata> offsets =
          admin
              .listConsumerGroupOffsets("connect-" + sinkName)
              .partitionsToOffsetAndMetadata()
              .get(10, TimeUnit.SECONDS);
      return offsets.entrySet().stream()
          .filter(e -> e.getKey().topic().equals(inputTopic) && e.getValue() != null)
          .mapToLong(e -> e.getValue().offset())
          .sum();
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      return -1;
    }
  }

  // ---- follow mode

  /**
   * The web console ({@code bin/queue-bridge serve}, read-only) over the posted connector configs,
   * as a child process, its address printed; null, with a line saying why, when it does not start
   * (the command line not built, no free port): the quickstart goes on without it.
   */
  private Process startConsole(
      ConnectRestClient rest, List<ExampleConfig> configs, Map<String, String> placeholders) {
    try {
      List<String> command =
          new ArrayList<>(List.of(cliHints.launcher().toString(), "serve", "--port", "0"));
      for (ExampleConfig config : configs) {
        Path file = workDir.resolve(config.name() + ".json");
        Files.writeString(file, config.resolve(placeholders));
        command.add("--config");
        command.add(file.toString());
      }
      command.addAll(
          List.of(
              "--bootstrap-server",
              cluster.kafka().bootstrapServers(),
              "--connect-url",
              rest.base().toString().replaceAll("/+$", "")));
      Process console =
          new ProcessBuilder(command)
              .redirectError(workDir.resolve("console.log").toFile())
              .start();
      BufferedReader lines = console.inputReader(StandardCharsets.UTF_8);
      String first =
          CompletableFuture.supplyAsync(
                  () -> {
                    try {
                      return lines.readLine();
                    } catch (IOException e) {
                      return null;
                    }
                  })
              .get(60, TimeUnit.SECONDS);
      String prefix = "Queue Bridge console: ";
      if (first == null || !first.startsWith(prefix)) {
        console.destroyForcibly();
        out.println(
            "(the web console did not start: see "
                + workDir.resolve("console.log")
                + "; bin/queue-bridge serve is built by mvn -B -DskipTests -pl queue-web -am"
                + " package)");
        return null;
      }
      out.println();
      out.println(
          "Web console (read-only; the store, the lag of each hop, the connectors' states): "
              + first.substring(prefix.length()));
      return console;
    } catch (IOException | ExecutionException | TimeoutException e) {
      out.println("(the web console did not start: " + e + ")");
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  private void followUntilStopped(ConnectRestClient rest, int alreadySent)
      throws InterruptedException {
    out.println();
    out.println(
        "Following: one more record a second into '"
            + inputTopic
            + "'; Ctrl-C stops the worker and the broker. Connect REST: "
            + rest.base());
    int sent = alreadySent;
    try (Admin admin = cluster.kafka().createAdminClient();
        OutputReader reader = new OutputReader(List.of(replayTopic, restoreTopic));
        KafkaProducer<byte[], byte[]> producer = producer()) {
      while (!stopRequested) {
        send(producer, SampleRecords.record(inputTopic, sent, partitions, BASE_TIMESTAMP));
        sent++;
        reader.pollFor(Duration.ofSeconds(1), admin);
        if (!stopRequested) {
          progress(sent, sinkCommitted(admin), reader, notRunning(rest));
          checkNoneFailed(rest);
        }
      }
    } catch (RuntimeException e) {
      if (!stopRequested) {
        throw e;
      }
    }
    out.println("Stopped.");
  }

  private void onShutdown() {
    stopRequested = true;
    try {
      // let the main thread stop the cluster and print its last lines
      stopped.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private synchronized void stopCluster() {
    if (cluster != null) {
      try {
        cluster.stop();
      } catch (RuntimeException e) {
        out.println("  (stopping the worker and broker: " + e.getMessage() + ")");
      }
      cluster = null;
    }
  }

  // ---- the stream

  private List<RecordSnapshot> readStream() throws InterruptedException {
    try {
      return StreamContents.read(storeDir, streamName, STORE_RELEASE_TIMEOUT);
    } catch (IllegalStateException e) {
      throw new FlowException(
          "could not read the stream after deleting the connectors: " + e.getMessage());
    }
  }

  // ---- comparisons

  /** The restored topic must equal the input: per partition, the same records in the same order. */
  static List<String> compareRestored(
      List<RecordSnapshot> produced, List<RecordSnapshot> restored) {
    List<String> problems = new ArrayList<>();
    Map<Integer, List<RecordSnapshot>> in = byPartition(produced);
    Map<Integer, List<RecordSnapshot>> back = byPartition(restored);
    for (Integer p : union(in.keySet(), back.keySet())) {
      List<RecordSnapshot> a = in.getOrDefault(p, List.of());
      List<RecordSnapshot> b = back.getOrDefault(p, List.of());
      for (int i = 0; i < Math.max(a.size(), b.size()); i++) {
        if (i >= a.size()) {
          problems.add("extra record in partition " + p + ": " + b.get(i));
        } else if (i >= b.size()) {
          problems.add("missing in partition " + p + ": " + a.get(i));
        } else {
          List<String> diff = b.get(i).differencesFrom(a.get(i), true);
          if (!diff.isEmpty()) {
            problems.add(b.get(i).coordinates() + " vs " + a.get(i).coordinates() + ": " + diff);
          }
        }
      }
    }
    return problems;
  }

  /** The replay topic must hold each input's key, value and headers exactly once. */
  static List<String> compareReplayed(
      List<RecordSnapshot> produced, List<RecordSnapshot> replayed) {
    List<String> problems = new ArrayList<>();
    List<RecordSnapshot> left = new ArrayList<>(replayed);
    for (RecordSnapshot r : produced) {
      int match = indexOf(left, r::sameContent);
      if (match < 0) {
        problems.add("missing: " + r);
      } else {
        left.remove(match);
      }
    }
    left.forEach(r -> problems.add("extra (duplicate?): " + r));
    return problems;
  }

  /** Each stream message must equal the Kafka record whose coordinates it carries, once each. */
  static List<String> compareStream(List<RecordSnapshot> produced, List<RecordSnapshot> stream) {
    List<String> problems = new ArrayList<>();
    Map<String, RecordSnapshot> byCoordinates = new LinkedHashMap<>();
    produced.forEach(r -> byCoordinates.put(r.coordinates(), r));
    Set<String> seen = new java.util.HashSet<>();
    for (RecordSnapshot m : stream) {
      RecordSnapshot original = byCoordinates.get(m.coordinates());
      if (original == null) {
        problems.add("stream offset " + m.position() + " has no original record: " + m);
      } else if (!seen.add(m.coordinates())) {
        problems.add("stream offset " + m.position() + " duplicates " + m.coordinates());
      } else {
        List<String> diff = m.differencesFrom(original, true);
        if (!diff.isEmpty()) {
          problems.add("stream offset " + m.position() + " (" + m.coordinates() + "): " + diff);
        }
      }
    }
    byCoordinates.keySet().stream()
        .filter(c -> !seen.contains(c))
        .forEach(c -> problems.add("not in the stream: " + byCoordinates.get(c)));
    return problems;
  }

  private static Map<Integer, List<RecordSnapshot>> byPartition(List<RecordSnapshot> records) {
    return records.stream()
        .sorted(java.util.Comparator.comparingLong(RecordSnapshot::offset))
        .collect(
            Collectors.groupingBy(RecordSnapshot::partition, TreeMap::new, Collectors.toList()));
  }

  private static Set<Integer> union(Set<Integer> a, Set<Integer> b) {
    Set<Integer> all = new java.util.TreeSet<>(a);
    all.addAll(b);
    return all;
  }

  private static <T> int indexOf(List<T> list, Predicate<T> p) {
    for (int i = 0; i < list.size(); i++) {
      if (p.test(list.get(i))) {
        return i;
      }
    }
    return -1;
  }

  private static void requireNoProblems(
      List<String> restore, List<String> replay, List<String> stream) {
    int total = restore.size() + replay.size() + stream.size();
    if (total > 0) {
      throw new FlowException(total + " difference(s), listed above");
    }
  }

  // ---- output

  /** The operator command lines to try on the store, ready to paste: the run's last lines. */
  private void suggestCommands(String intro) {
    out.println();
    out.println(intro);
    for (String command : cliHints.commands(storeDir, streamName)) {
      out.println("  " + command);
    }
  }

  private void step(int n, String what) {
    out.println();
    out.printf("[%d] %s%n", n, what);
  }

  private void detail(String line) {
    out.println("    " + line);
  }

  private void progress(long produced, long inStream, OutputReader reader, String waiting) {
    out.printf(
        "    [%3ds] produced %d | in stream %s | %s %d | %s %d%s%n",
        elapsedSeconds(),
        produced,
        inStream < 0 ? "?" : Long.toString(inStream),
        replayTopic,
        reader.count(replayTopic),
        restoreTopic,
        reader.count(restoreTopic),
        waiting.isEmpty() ? "" : " | starting: " + waiting);
  }

  /** The connectors not running yet, with their states; empty when all run. */
  private String notRunning(ConnectRestClient rest) {
    List<String> waiting = new ArrayList<>();
    for (String name : List.of(sinkName, replayName, restoreName)) {
      try {
        if (!rest.isRunning(name)) {
          waiting.add(name + " " + rest.stateSummary(name));
        }
      } catch (ConnectRestClient.ConnectRestException e) {
        waiting.add(name + " (" + e.status() + ")");
      }
    }
    return String.join(", ", waiting);
  }

  private void post(ConnectRestClient rest, ExampleConfig example, Map<String, String> values) {
    String name = rest.createConnector(example.resolve(values));
    detail("POST /connectors  etc/" + example + "  ->  " + name);
  }

  private void report(
      String where, int expected, int actual, List<String> problems, String compared) {
    if (problems.isEmpty()) {
      out.printf("    OK   %s: %d/%d records identical (%s)%n", where, actual, expected, compared);
    } else {
      out.printf(
          "    FAIL %s: %d records, %d expected, %d difference(s):%n",
          where, actual, expected, problems.size());
      problems.stream().limit(20).forEach(p -> out.println("           " + p));
    }
  }

  private void table(Collection<RecordSnapshot> rows, boolean stream) {
    out.printf(
        "      %-6s %-22s %-9s %-38s %s%n",
        stream ? "offset" : "#", stream ? "captured from" : "at", "key", "value", "headers");
    int i = 0;
    for (RecordSnapshot r : rows) {
      if (i == show) {
        out.printf("      ... %d more%n", rows.size() - show);
        break;
      }
      out.printf(
          "      %-6s %-22s %-9s %-38s %s%n",
          stream ? Long.toString(r.position()) : Integer.toString(i),
          r.coordinates(),
          clip(r.showKey(), 9),
          clip(r.showValue(), 38),
          clip(r.showHeaders(), 60));
      i++;
    }
  }

  private static String clip(String s, int max) {
    return s.length() <= max ? s : s.substring(0, max - 1) + "~";
  }

  private static String firstLines(String trace, int n) {
    return trace.lines().limit(n).collect(Collectors.joining(" | "));
  }

  private long elapsedSeconds() {
    return TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNanos);
  }

  private int fail(int status, String message) {
    out.println();
    out.println("RESULT: FAILED - " + message);
    return status;
  }

  /** Reads the output topics from the beginning, read_committed, as they appear. */
  private final class OutputReader implements AutoCloseable {
    private final List<String> topics;
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Map<String, List<RecordSnapshot>> records = new LinkedHashMap<>();
    private boolean assigned;

    OutputReader(List<String> topics) {
      this.topics = topics;
      Map<String, Object> cfg = new HashMap<>();
      cfg.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
      cfg.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
      cfg.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      cfg.remove(ConsumerConfig.GROUP_ID_CONFIG);
      this.consumer = cluster.kafka().createConsumer(cfg);
      topics.forEach(t -> records.put(t, new ArrayList<>()));
    }

    void pollFor(Duration time, Admin admin) throws InterruptedException {
      long end = System.nanoTime() + time.toNanos();
      if (!assigned) {
        assignWhenCreated(admin);
      }
      while (System.nanoTime() < end) {
        if (!assigned) {
          TimeUnit.MILLISECONDS.sleep(100);
          assignWhenCreated(admin);
          continue;
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
          records.get(r.topic()).add(RecordSnapshot.consumed(r));
        }
      }
    }

    private void assignWhenCreated(Admin admin) throws InterruptedException {
      try {
        Set<String> existing = admin.listTopics().names().get(10, TimeUnit.SECONDS);
        if (!existing.containsAll(topics)) {
          return;
        }
        Map<String, TopicDescription> described =
            admin.describeTopics(topics).allTopicNames().get(10, TimeUnit.SECONDS);
        List<TopicPartition> all = new ArrayList<>();
        described
            .values()
            .forEach(
                d ->
                    d.partitions()
                        .forEach(p -> all.add(new TopicPartition(d.name(), p.partition()))));
        consumer.assign(all);
        consumer.seekToBeginning(all);
        assigned = true;
      } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
        // not there yet
      }
    }

    int count(String topic) {
      return records.get(topic).size();
    }

    Map<String, List<RecordSnapshot>> records() {
      Map<String, List<RecordSnapshot>> copy = new LinkedHashMap<>();
      records.forEach((k, v) -> copy.put(k, List.copyOf(v)));
      return copy;
    }

    @Override
    public void close() {
      consumer.close();
    }
  }

  /** Produces the sample records in order, keeping what the broker acknowledged. */
  private final class SampleFeed implements AutoCloseable {
    final List<RecordSnapshot> produced = new ArrayList<>();
    private final KafkaProducer<byte[], byte[]> producer = producer();

    /** Sends records up to number {@code n} (exclusive) and waits for their acknowledgements. */
    void produceUpTo(int n) throws InterruptedException {
      List<ProducerRecord<byte[], byte[]>> batch = new ArrayList<>();
      List<java.util.concurrent.Future<RecordMetadata>> acks = new ArrayList<>();
      for (int i = produced.size(); i < n; i++) {
        ProducerRecord<byte[], byte[]> r =
            SampleRecords.record(inputTopic, i, partitions, BASE_TIMESTAMP);
        batch.add(r);
        acks.add(producer.send(r));
      }
      producer.flush();
      for (int i = 0; i < batch.size(); i++) {
        try {
          produced.add(
              RecordSnapshot.produced(batch.get(i), acks.get(i).get(30, TimeUnit.SECONDS)));
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
          throw new FlowException("could not produce to " + inputTopic + ": " + e);
        }
      }
    }

    @Override
    public void close() {
      producer.close();
    }
  }

  /** Something the run needs is missing or did not start. */
  static final class SetupException extends RuntimeException {
    SetupException(String message) {
      super(message);
    }
  }

  /** The data did not flow as expected. */
  static final class FlowException extends RuntimeException {
    FlowException(String message) {
      super(message);
    }
  }
}
