package io.queuebridge.examples.quickstart;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;

/**
 * Where the reactor put the plugin this module tests (failsafe passes the paths as system
 * properties), and a worker that loads it the way a deployment does.
 */
final class PluginUnderTest {
  static final String SINK_CLASS = "io.queuebridge.connect.sink.QueueSinkConnector";
  static final String SOURCE_CLASS = "io.queuebridge.connect.source.QueueSourceConnector";

  private PluginUnderTest() {}

  /** The project version the reactor builds. */
  static String version() {
    return property("queuebridge.version");
  }

  /**
   * The version of a third-party dependency the archive ships, as the root pom manages it ({@code
   * postgresql}, {@code hikaricp}).
   */
  static String dependencyVersion(String name) {
    return property("queuebridge." + name + ".version");
  }

  /** The unpacked archive, {@code connect-plugin/target/plugin/queue-bridge-<version>}. */
  static Path dir() {
    Path dir = Path.of(property("queuebridge.plugin.dir"));
    if (!Files.isDirectory(dir)) {
      throw new IllegalStateException(
          "no unpacked plugin at " + dir + ": connect-plugin must be packaged first (mvn verify)");
    }
    return dir;
  }

  /** The archive, {@code connect-plugin/target/queue-bridge-<version>.zip}. */
  static Path zip() {
    return Path.of(property("queuebridge.plugin.zip"));
  }

  /** {@code examples/connectors}, the source of the archive's {@code etc/}. */
  static Path exampleSources() {
    return Path.of(property("queuebridge.examples.dir")).resolve("connectors");
  }

  /** The repository root. */
  static Path repo() {
    return Path.of(property("queuebridge.repo.dir")).normalize();
  }

  /** {@code examples/target}, where test output that outlives a run goes (worker logs). */
  static Path examplesTarget() {
    return Path.of(property("queuebridge.examples.dir")).resolve("target");
  }

  /** {@code examples/target/quickstart.classpath}. */
  static Path quickstartClasspath() {
    return Path.of(property("queuebridge.quickstart.classpath"));
  }

  /**
   * A one-broker cluster and one worker with {@code plugin.path} = the directory holding the
   * unpacked archive (as after {@code unzip queue-bridge-<version>.zip -d <plugin.path>}) and
   * {@code plugin.discovery=service_load}, started.
   */
  static EmbeddedConnectCluster startWorker(String name) {
    return startWorkers(name, 1, Map.of());
  }

  /**
   * Like {@link #startWorker}, with {@code workers} workers in one Connect group and {@code
   * extraWorkerProps} on top of the defaults. A departed worker's tasks are reassigned after 3 s
   * ({@code scheduled.rebalance.max.delay.ms}), not the default 5 minutes.
   */
  static EmbeddedConnectCluster startWorkers(
      String name, int workers, Map<String, String> extraWorkerProps) {
    Map<String, String> worker = new HashMap<>();
    worker.put("plugin.path", dir().getParent().toString());
    worker.put("plugin.discovery", "service_load");
    worker.put("offset.flush.interval.ms", "1000");
    worker.put("exactly.once.source.support", "enabled");
    worker.put("scheduled.rebalance.max.delay.ms", "3000");
    worker.putAll(extraWorkerProps);
    Properties broker = new Properties();
    broker.put("transaction.state.log.replication.factor", "1");
    broker.put("transaction.state.log.min.isr", "1");
    broker.put("offsets.topic.replication.factor", "1");
    broker.put("group.initial.rebalance.delay.ms", "0");
    // Test records carry fixed timestamps in the past; the broker's first retention check (30 s
    // after it starts, then every 5 minutes) would delete them from any topic with the default
    // 7-day retention.
    broker.put("log.retention.ms", "-1");
    EmbeddedConnectCluster cluster =
        new EmbeddedConnectCluster.Builder()
            .name(name)
            .numWorkers(workers)
            .numBrokers(1)
            .brokerProps(broker)
            .workerProps(worker)
            .build();
    cluster.start();
    return cluster;
  }

  private static String property(String key) {
    String value = System.getProperty(key);
    if (value == null) {
      throw new IllegalStateException(
          "system property " + key + " is not set: run this test through failsafe (mvn verify)");
    }
    return value;
  }
}
