package io.queuebridge.connect.sink;

import io.queuebridge.connect.common.ConfigErrors;
import io.queuebridge.connect.common.ConfigValidators;
import io.queuebridge.core.QueueBridgeVersion;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException;
import io.queuebridge.core.errors.QueueNotFoundException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.sink.SinkConnector;

/**
 * Bridges Kafka topics into a protected durable stream, exactly once, for any {@code tasks.max}.
 * See {@link QueueSinkTask} for how, and {@link QueueSinkConfig} for the keys.
 */
public class QueueSinkConnector extends SinkConnector {
  private Map<String, String> props;

  @Override
  public String version() {
    return QueueBridgeVersion.get();
  }

  @Override
  public void start(Map<String, String> props) {
    new QueueSinkConfig(props); // fail fast on a bad config
    this.props = Map.copyOf(props);
  }

  @Override
  public Class<? extends Task> taskClass() {
    return QueueSinkTask.class;
  }

  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    List<Map<String, String>> out = new ArrayList<>(maxTasks);
    for (int i = 0; i < maxTasks; i++) {
      Map<String, String> task = new HashMap<>(props);
      task.put(QueueSinkConfig.TASK_INDEX_CONFIG, Integer.toString(i));
      out.add(task);
    }
    return out;
  }

  @Override
  public void stop() {}

  @Override
  public ConfigDef config() {
    return QueueSinkConfig.CONFIG_DEF;
  }

  /**
   * Field-by-field validation plus the checks that need more than one field or the value as given
   * ({@link QueueSinkConfig#crossKeyErrors}: the delay header keys), the store's own keys (unknown
   * or bad {@code queue.store.*} values are reported on their key), and contract drift of an
   * existing stream, reported on the connector key that sets each differing field.
   *
   * <p>The drift check reads the store opened read-only ({@link
   * io.queuebridge.connect.common.StoreSettings#checkWithStore}): validating creates nothing (no
   * {@code file} store directory, no {@code postgres} schema), takes no lock and changes nothing,
   * also beside a running task. A store or a stream that does not exist yet passes: the task
   * creates it. Whether the store can make appends durable is left to the task's start, which
   * refuses a store that cannot: a read-only view cannot tell for every store.
   */
  @Override
  public Config validate(Map<String, String> connectorConfigs) {
    Config config = super.validate(connectorConfigs);
    ConfigErrors.dropNullFollowUps(config, connectorConfigs);
    if (ConfigErrors.any(config)) {
      return config;
    }
    Map<String, String> crossKey = QueueSinkConfig.crossKeyErrors(connectorConfigs);
    if (!crossKey.isEmpty()) {
      crossKey.forEach((key, message) -> ConfigErrors.add(config, key, message));
      return config;
    }
    QueueSinkConfig parsed = new QueueSinkConfig(connectorConfigs);
    if (!checkContract(config, parsed, connectorConfigs)) {
      return config;
    }
    if (parsed.validateStoreKeys(config)) {
      parsed.checkWithStore(config, manager -> reportDrift(config, parsed, manager));
    }
    return config;
  }

  /**
   * Refuses, on its key, a value every key accepts alone but the stream's configuration does not
   * (BEHAVIOUR Q-VAL): a retention, a TTL or a maximum delay over 100 years, which the task's
   * declaration would refuse at start.
   *
   * @return whether the contract is valid
   */
  private static boolean checkContract(
      Config config, QueueSinkConfig parsed, Map<String, String> props) {
    try {
      parsed.streamContract().validate();
      return true;
    } catch (InvalidConfigException e) {
      String key =
          switch (e.field()) {
            case "retention.retentionTime" -> QueueSinkConfig.QUEUE_RETENTION_MS_CONFIG;
            case "messageTtl" -> QueueSinkConfig.QUEUE_MESSAGE_TTL_MS_CONFIG;
            case "maxDelay" -> QueueSinkConfig.QUEUE_MAX_DELAY_MS_CONFIG;
            case "maxMessageSize" -> QueueSinkConfig.QUEUE_MAX_MESSAGE_BYTES_CONFIG;
            case "topic filter" -> QueueSinkConfig.QUEUE_TOPICS_CONFIG;
            case "retention" -> QueueSinkConfig.QUEUE_RETENTION_BYTES_CONFIG;
            default -> QueueSinkConfig.QUEUE_NAME_CONFIG;
          };
      ConfigErrors.add(
          config,
          key,
          key + " = " + ConfigValidators.shown(props.get(key)) + " is refused: " + e.getMessage());
      return false;
    }
  }

  /**
   * Compares the stored stream, if there is one, with the contract the configuration asks for, the
   * comparison the task's declaration makes. Not {@link QueueManager#checkProtectedStream}: that
   * first requires the store to make appends durable, which a read-only {@code postgres} view never
   * claims, and would hide the drift behind that refusal.
   */
  private static void reportDrift(Config config, QueueSinkConfig parsed, QueueManager manager) {
    QueueConfig contract = parsed.streamContract();
    QueueConfig stored;
    try {
      stored = manager.getQueue(contract.name());
    } catch (QueueNotFoundException absent) {
      return; // declared by the task when it starts
    }
    try {
      QueueManager.validateProtectedQueueContract(contract, stored);
    } catch (ProtectedQueueContractDriftException e) {
      if (e.mismatches().isEmpty()) {
        ConfigErrors.add(config, QueueSinkConfig.QUEUE_NAME_CONFIG, e.getMessage());
      }
      for (ProtectedQueueContractDriftException.FieldMismatch m : e.mismatches()) {
        ConfigErrors.add(
            config,
            QueueSinkConfig.configKeyOfContractField(m.field()),
            "the stored stream '"
                + parsed.queueName()
                + "' has "
                + m.field()
                + " = "
                + m.stored()
                + " but the configuration asks for "
                + m.wanted()
                + "; a declared stream is never changed: restore the stored value or use a new"
                + " queue.name");
      }
    }
  }

  /**
   * Refused: this sink keeps its Kafka offsets in the stream itself, atomically with the data, and
   * rewinds to them on every partition assignment, so moving the consumer group's offsets would
   * have no effect.
   */
  @Override
  public boolean alterOffsets(
      Map<String, String> connectorConfig, Map<TopicPartition, Long> offsets) {
    throw new ConnectException(
        "the offsets of this sink are stored in the stream '"
            + connectorConfig.get(QueueSinkConfig.QUEUE_NAME_CONFIG)
            + "' together with the data and win over the consumer group's offsets on every"
            + " restart; altering or resetting them through Connect is not supported");
  }
}
