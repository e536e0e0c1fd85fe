package io.queuebridge.examples.quickstart;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;

/**
 * A one-broker KRaft cluster ({@link ConnectFlows#startBroker}) in a JVM of its own, for harnesses
 * that run the broker, the worker and themselves as separate processes. {@link #main} prints {@code
 * BOOTSTRAP <servers>} once the broker answers and stops it when its standard input ends (the
 * parent closed it, or died); {@link #start} runs it as a child process and waits for that line.
 */
final class ChildBroker implements AutoCloseable {
  private static final String READY = "BOOTSTRAP ";

  private final Process process;
  private final String bootstrapServers;

  private ChildBroker(Process process, String bootstrapServers) {
    this.process = process;
    this.bootstrapServers = bootstrapServers;
  }

  /** The broker: up, then down once standard input ends. */
  public static void main(String[] args) throws Exception {
    EmbeddedKafkaCluster kafka = ConnectFlows.startBroker(Map.of());
    System.out.println(READY + kafka.bootstrapServers());
    System.out.flush();
    while (System.in.read() >= 0) {
      // nothing: the parent only ever closes it
    }
    kafka.stop();
  }

  /**
   * Starts the broker in a child JVM on this JVM's class path with {@code jvmOptions}, its log in
   * {@code log}; returns once it printed its bootstrap servers.
   */
  static ChildBroker start(Path log, List<String> jvmOptions) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(ChildBroker.class.getName());
    Process p =
        new ProcessBuilder(command)
            .redirectError(ProcessBuilder.Redirect.to(log.toFile()))
            .redirectOutput(ProcessBuilder.Redirect.PIPE)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = out.readLine()) != null) {
      if (line.startsWith(READY)) {
        Thread drain =
            new Thread(
                () -> {
                  try {
                    while (out.readLine() != null) {
                      // the broker's standard output after the line: not needed
                    }
                  } catch (IOException ignored) {
                    // the broker is gone
                  }
                },
                "child-broker-stdout");
        drain.setDaemon(true);
        drain.start();
        return new ChildBroker(p, line.substring(READY.length()).trim());
      }
    }
    throw new IllegalStateException(
        "the broker exited before it printed its bootstrap servers; see " + log);
  }

  String bootstrapServers() {
    return bootstrapServers;
  }

  /** Closes the broker's standard input and waits for it to stop; kills it after a minute. */
  @Override
  public void close() throws IOException {
    process.getOutputStream().close();
    try {
      if (!process.waitFor(Duration.ofMinutes(1).toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
