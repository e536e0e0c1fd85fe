package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code lag} without a cluster: what it refuses, and how it fails when Kafka does not answer.
 * LagCommandIT runs it against a broker and a worker.
 */
class LagCommandTest {
  @TempDir Path dir;

  private Path write(String name, String json) throws IOException {
    return Files.writeString(dir.resolve(name), json);
  }

  private Path sinkConfig() throws IOException {
    return write(
        "sink.json",
        """
        {"name": "orders-sink", "config": {"topics": "orders", "queue.name": "orders",
          "queue.store.type": "file", "queue.store.path": "%s"}}
        """
            .formatted(dir.resolve("store")));
  }

  @Test
  void aBootstrapServerThatAcceptsButNeverAnswersIsAOneLineErrorNamingItWithinTheTimeout()
      throws Exception {
    Path sink = sinkConfig();
    List<Socket> held = new ArrayList<>();
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread acceptor =
          new Thread(
              () -> {
                try {
                  while (true) {
                    held.add(silent.accept()); // never read, never answered
                  }
                } catch (IOException closed) {
                  // the test is over
                }
              });
      acceptor.setDaemon(true);
      acceptor.start();
      String address = "127.0.0.1:" + silent.getLocalPort();

      long started = System.nanoTime();
      Cli.Run run =
          Cli.run(
              "lag",
              "--config",
              sink.toString(),
              "--bootstrap-server",
              address,
              "--timeout",
              "1500");
      Duration took = Duration.ofNanos(System.nanoTime() - started);

      assertThat(run.status()).isEqualTo(1);
      assertThat(run.out()).isEmpty();
      assertThat(run.err())
          .isEqualTo(
              "queue-bridge: Kafka at "
                  + address
                  + " (--bootstrap-server) did not answer within 1500 ms while describing topic"
                  + " 'orders' (expected a reachable Kafka cluster: check the address and that the"
                  + " brokers are up, or raise --timeout)\n");
      assertThat(took).isLessThan(Duration.ofSeconds(10));
    } finally {
      for (Socket s : held) {
        s.close();
      }
    }
  }

  @Test
  void aBootstrapServerNobodyListensOnIsTheSameError() throws Exception {
    Path sink = sinkConfig();
    int port;
    try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = free.getLocalPort();
    }
    String address = "127.0.0.1:" + port;

    Cli.Run run =
        Cli.run(
            "lag", "--config", sink.toString(), "--bootstrap-server", address, "--timeout", "1000");

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err())
        .hasLineCount(1)
        .startsWith("queue-bridge: Kafka at " + address + " (--bootstrap-server) did not answer");
  }

  @Test
  void aBootstrapServerThatIsNotAnAddressIsNamed() throws Exception {
    Cli.Run run =
        Cli.run("lag", "--config", sinkConfig().toString(), "--bootstrap-server", "no-port-here");

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err())
        .hasLineCount(1)
        .startsWith("queue-bridge: --bootstrap-server no-port-here: ")
        .endsWith("(expected HOST:PORT[,HOST:PORT...] of Kafka brokers)\n");
  }

  @Test
  void theSinkConfigMustNameTopicsAStreamAndAConnector() throws IOException {
    Path noTopics = write("a.json", "{\"name\": \"s\", \"queue.name\": \"orders\"}");
    Path both =
        write(
            "b.json",
            "{\"name\": \"s\", \"queue.name\": \"o\", \"topics\": \"a\", \"topics.regex\": \"a.*\"}");
    Path noStream = write("c.json", "{\"name\": \"s\", \"topics\": \"orders\"}");
    Path noName = write("d.json", "{\"topics\": \"orders\", \"queue.name\": \"orders\"}");
    Path badRegex =
        write("e.json", "{\"name\": \"s\", \"queue.name\": \"o\", \"topics.regex\": \"(\"}");

    assertThat(lagError(noTopics))
        .isEqualTo(
            "queue-bridge: --config "
                + noTopics
                + " sets neither topics nor topics.regex (expected a sink connector config: the"
                + " topics the sink reads)\n");
    assertThat(lagError(both))
        .isEqualTo(
            "queue-bridge: --config "
                + both
                + " sets both topics and topics.regex (expected one of them, as Connect does)\n");
    assertThat(lagError(noStream))
        .isEqualTo(
            "queue-bridge: --config "
                + noStream
                + " has no queue.name (expected a sink connector config: the stream the sink"
                + " writes)\n");
    assertThat(lagError(noName))
        .isEqualTo(
            "queue-bridge: --config "
                + noName
                + " has no connector name (expected \"name\": the sink's consumer group is"
                + " connect-<name>; or set consumer.override.group.id)\n");
    assertThat(lagError(badRegex))
        .hasLineCount(1)
        .startsWith(
            "queue-bridge: topics.regex in " + badRegex + ": '(' is not a regular expression");
  }

  @Test
  void aSourceConfigMustNameItsStreams() throws IOException {
    Path source = write("source.json", "{\"name\": \"src\", \"topic\": \"out\"}");

    Cli.Run run =
        Cli.run(
            "lag",
            "--config",
            sinkConfig().toString(),
            "--bootstrap-server",
            "127.0.0.1:9",
            "--source-config",
            source.toString());

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err())
        .isEqualTo(
            "queue-bridge: --source-config "
                + source
                + " sets neither queue.names nor queue.filter (expected a source connector config:"
                + " the streams the source reads)\n");
  }

  @Test
  void aConnectUrlThatIsNotHttpIsNamed() throws IOException {
    Cli.Run run =
        Cli.run(
            "lag",
            "--config",
            sinkConfig().toString(),
            "--bootstrap-server",
            "127.0.0.1:9",
            "--connect-url",
            "connect:8083");

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err())
        .isEqualTo(
            "queue-bridge: --connect-url connect:8083: not an http or https URL with a host"
                + " (expected the REST address of a Connect worker, such as"
                + " http://connect:8083)\n");
  }

  @Test
  void usageErrorsExitWithTwo() throws IOException {
    String sink = sinkConfig().toString();

    Cli.Run noBootstrap = Cli.run("lag", "--config", sink);
    Cli.Run noConfig = Cli.run("lag", "--bootstrap-server", "127.0.0.1:9");
    Cli.Run zeroTimeout =
        Cli.run("lag", "--config", sink, "--bootstrap-server", "127.0.0.1:9", "--timeout", "0");

    assertThat(noBootstrap.status()).isEqualTo(2);
    assertThat(noBootstrap.err()).contains("--bootstrap-server");
    assertThat(noConfig.status()).isEqualTo(2);
    assertThat(noConfig.err()).contains("--config");
    assertThat(zeroTimeout.status()).isEqualTo(2);
    assertThat(zeroTimeout.err())
        .startsWith("queue-bridge: --timeout 0: expected a number of milliseconds > 0\n");
  }

  private String lagError(Path sink) {
    Cli.Run run = Cli.run("lag", "--config", sink.toString(), "--bootstrap-server", "127.0.0.1:9");
    assertThat(run.status()).as("status of lag --config %s", sink).isEqualTo(1);
    return run.err();
  }
}
