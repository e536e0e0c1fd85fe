package io.queuebridge.web;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How a console runs.
 *
 * @param configs the connector config files whose stores it shows, in the order given
 * @param bind the address it listens on
 * @param port the port; 0 for any free one
 * @param allowChanges whether the forms that change a store are offered and accepted
 * @param token the login token a change needs; null when changes are not allowed
 * @param sampleInterval how often the server samples every queue for the charts
 * @param history how far back the charts go (older samples are dropped)
 * @param lag what the bridge-lag page needs beyond the configs; null when it is off
 */
record ConsoleSettings(
    List<Path> configs,
    String bind,
    int port,
    boolean allowChanges,
    String token,
    Duration sampleInterval,
    Duration history,
    LagSettings lag) {

  /**
   * What {@code queue-bridge lag} needs beyond the connector configs.
   *
   * @param bootstrapServer the Kafka cluster the sink reads
   * @param connectUrl the Connect worker's REST address; null for none
   * @param commandConfig the Admin client's properties file; null for none
   */
  record LagSettings(String bootstrapServer, String connectUrl, Path commandConfig) {
    LagSettings {
      Objects.requireNonNull(bootstrapServer, "bootstrapServer");
    }
  }

  ConsoleSettings {
    configs = List.copyOf(configs);
    Objects.requireNonNull(bind, "bind");
    Objects.requireNonNull(sampleInterval, "sampleInterval");
    Objects.requireNonNull(history, "history");
    if (allowChanges && (token == null || token.isEmpty())) {
      throw new IllegalArgumentException("changes are allowed but no login token is set");
    }
  }

  /** How many samples the history holds. */
  int samplesKept() {
    return (int) Math.max(2, history.toMillis() / sampleInterval.toMillis() + 1);
  }
}
