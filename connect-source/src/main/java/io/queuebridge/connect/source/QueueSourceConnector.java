package io.queuebridge.connect.source;

import io.queuebridge.connect.common.ConfigErrors;
import io.queuebridge.connect.source.QueueSourceConfig.ConsumerMode;
import io.queuebridge.connect.source.QueueSourceConfig.StartPosition;
import io.queuebridge.core.QueueBridgeVersion;
import io.queuebridge.core.SharedStores;
import io.queuebridge.core.config.CursorOption;
import io.queuebridge.core.config.GroupMode;
import io.queuebridge.core.config.Names;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.group.ConsumerGroups;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streams and queues out to Kafka topics. See {@link QueueSourceTask} for how a task reads, and
 * {@link QueueSourceConfig} for the keys.
 *
 * <p><b>Queue set.</b> Resolved at {@link #start} from {@code queue.names} or {@code queue.filter}
 * ({@link QueueSelection}), and re-resolved every {@code queue.refresh.interval.ms} by a background
 * thread that asks Connect to reconfigure the tasks when the set changed.
 *
 * <p><b>Exactly once</b> (KIP-618): {@link #exactlyOnceSupport} is SUPPORTED for streams — the read
 * position is Connect's source offset, written in the same transaction as the records. In {@code
 * consumer.mode=shared} (classic queues only) it is UNSUPPORTED: a classic-queue message is
 * acknowledged after the transaction committed, so a crash between the two redelivers it. Both
 * {@code poll} and connector-defined boundaries work ({@link TransactionBoundaries}).
 *
 * <p>Connect calls a connector from one thread at a time; the monitor thread only reads the store
 * and calls {@code requestTaskReconfiguration}.
 */
public class QueueSourceConnector extends SourceConnector {
  private static final Logger log = LoggerFactory.getLogger(QueueSourceConnector.class);

  private Map<String, String> props;
  private QueueSourceConfig config;
  private SharedStores.Lease lease;
  private volatile List<String> queues = List.of();
  private ScheduledExecutorService monitor;

  @Override
  public String version() {
    return QueueBridgeVersion.get();
  }

  @Override
  public void start(Map<String, String> props) {
    QueueSourceConfig parsed = new QueueSourceConfig(props);
    Map<String, List<String>> errors = crossFieldErrors(parsed);
    if (!errors.isEmpty()) {
      throw new ConnectException("invalid configuration: " + errors);
    }
    this.config = parsed;
    this.props = Map.copyOf(props);
    try {
      lease = parsed.acquireStore();
    } catch (RuntimeException e) {
      throw SourceErrors.toConnect("cannot open the store", e);
    }
    try {
      queues = resolve();
    } catch (RuntimeException e) {
      lease.close();
      lease = null;
      throw SourceErrors.toConnect("cannot resolve the queues to read", e);
    }
    log.info(
        "Source connector {} reads {} queue(s) {} from store {}",
        parsed.connectorName(),
        queues.size(),
        queues,
        lease.storage().description());
    long interval = parsed.queueRefreshInterval().toMillis();
    if (interval > 0) {
      monitor =
          Executors.newSingleThreadScheduledExecutor(
              r -> {
                Thread t = new Thread(r, "qb-source-" + parsed.connectorName() + "-monitor");
                t.setDaemon(true);
                return t;
              });
      monitor.scheduleWithFixedDelay(this::refresh, interval, interval, TimeUnit.MILLISECONDS);
    }
  }

  /** The selected queues, sorted; fails for streams in shared mode. */
  private List<String> resolve() {
    Map<String, Boolean> resolved = QueueSelection.resolve(config, lease.manager());
    List<String> streams = QueueSelection.streams(resolved);
    if (config.consumerMode() == ConsumerMode.SHARED && !streams.isEmpty()) {
      throw new ConnectException(
          "consumer.mode=shared reads classic queues only, but "
              + streams
              + " are streams; use consumer.mode=dedicated or select only classic queues");
    }
    return List.copyOf(resolved.keySet());
  }

  private void refresh() {
    try {
      List<String> now = resolve();
      if (!now.equals(queues)) {
        log.info(
            "Source connector {}: the queue set changed from {} to {}; reconfiguring the tasks",
            config.connectorName(),
            queues,
            now);
        queues = now;
        context.requestTaskReconfiguration();
      }
    } catch (ConnectException e) {
      context.raiseError(e);
    } catch (RuntimeException e) {
      log.warn(
          "Source connector {}: re-resolving the queues failed: {}",
          config.connectorName(),
          e.toString());
    }
  }

  @Override
  public Class<? extends Task> taskClass() {
    return QueueSourceTask.class;
  }

  @Override
  public List<Map<String, String>> taskConfigs(int maxTasks) {
    List<List<String>> assignment = QueueSelection.assign(queues, maxTasks, config.consumerMode());
    List<Map<String, String>> out = new ArrayList<>(assignment.size());
    for (int i = 0; i < assignment.size(); i++) {
      Map<String, String> task = new HashMap<>(props);
      task.put(QueueSourceConfig.TASK_QUEUES_CONFIG, String.join(",", assignment.get(i)));
      task.put(QueueSourceConfig.TASK_INDEX_CONFIG, Integer.toString(i));
      out.add(task);
    }
    return out;
  }

  @Override
  public void stop() {
    if (monitor != null) {
      monitor.shutdownNow();
      try {
        monitor.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      monitor = null;
    }
    if (lease != null) {
      lease.close();
      lease = null;
    }
  }

  @Override
  public ConfigDef config() {
    return QueueSourceConfig.CONFIG_DEF;
  }

  // ------------------------------------------------------------------ validation

  /**
   * Field-by-field validation plus the checks that need more than one field or the value as given
   * ({@code queue.deliver.at.header} before Connect trims it), each reported on the key to change:
   * one of {@code queue.names} / {@code queue.filter}, one of {@code topic} / {@code
   * topic.template}, the field a start position needs, the store's own keys (on their {@code
   * queue.store.*} key), and, in shared mode, no streams among the selected queues.
   *
   * <p>The shared-mode check reads the store opened read-only ({@link
   * io.queuebridge.connect.common.StoreSettings#checkWithStore}): validating creates, locks and
   * changes nothing, also beside running tasks; a store that does not exist yet has no queues to
   * select, so it passes.
   */
  @Override
  public Config validate(Map<String, String> connectorConfigs) {
    Config result = super.validate(connectorConfigs);
    ConfigErrors.dropNullFollowUps(result, connectorConfigs);
    if (ConfigErrors.any(result)) {
      return result;
    }
    String headerError = QueueSourceConfig.rawHeaderError(connectorConfigs);
    if (headerError != null) {
      ConfigErrors.add(result, QueueSourceConfig.DELIVER_AT_HEADER_CONFIG, headerError);
      return result;
    }
    QueueSourceConfig parsed = new QueueSourceConfig(connectorConfigs);
    crossFieldErrors(parsed)
        .forEach((key, messages) -> messages.forEach(m -> ConfigErrors.add(result, key, m)));
    if (!parsed.validateStoreKeys(result)) {
      return result;
    }
    if (parsed.consumerMode() == ConsumerMode.SHARED && !ConfigErrors.any(result)) {
      parsed.checkWithStore(
          result,
          manager -> {
            List<String> streams = QueueSelection.streams(QueueSelection.resolve(parsed, manager));
            if (!streams.isEmpty()) {
              ConfigErrors.add(
                  result,
                  QueueSourceConfig.CONSUMER_MODE_CONFIG,
                  "shared mode reads classic queues only, but the selected queues "
                      + streams
                      + " are streams; use consumer.mode=dedicated");
            }
          });
    }
    return result;
  }

  /** The cross-field errors of a parsed configuration, per key; empty when there are none. */
  static Map<String, List<String>> crossFieldErrors(QueueSourceConfig c) {
    Map<String, List<String>> errors = new LinkedHashMap<>();
    boolean names = !c.queueNames().isEmpty();
    boolean filter = !c.queueFilter().isEmpty();
    if (!names && !filter) {
      String m = "set queue.names (a list of queues) or queue.filter (a filter over queue names)";
      add(errors, QueueSourceConfig.QUEUE_NAMES_CONFIG, m);
      add(errors, QueueSourceConfig.QUEUE_FILTER_CONFIG, m);
    } else if (names && filter) {
      String m = "set only one of queue.names and queue.filter";
      add(errors, QueueSourceConfig.QUEUE_NAMES_CONFIG, m);
      add(errors, QueueSourceConfig.QUEUE_FILTER_CONFIG, m);
    }
    for (String name : c.queueNames()) {
      if (name.isBlank()) {
        add(errors, QueueSourceConfig.QUEUE_NAMES_CONFIG, "queue names must not be empty");
      }
    }
    // the value as given (Kafka's parse trims, which drops a NUL at either end), else the default
    String given = c.originalsStrings().get(QueueSourceConfig.QUEUE_GROUP_CONFIG);
    String group = given == null ? "" : given.strip();
    try {
      Names.encode(QueueSourceConfig.QUEUE_GROUP_CONFIG, group.isEmpty() ? c.group() : group);
    } catch (InvalidConfigException e) {
      add(errors, QueueSourceConfig.QUEUE_GROUP_CONFIG, e.getMessage());
    }
    boolean topic = !c.topic().isEmpty();
    boolean template = !c.topicTemplate().isEmpty();
    if (!topic && !template) {
      String m = "set topic (one Kafka topic) or topic.template (with ${queue} / ${topic})";
      add(errors, QueueSourceConfig.TOPIC_CONFIG, m);
      add(errors, QueueSourceConfig.TOPIC_TEMPLATE_CONFIG, m);
    } else if (topic && template) {
      String m = "set only one of topic and topic.template";
      add(errors, QueueSourceConfig.TOPIC_CONFIG, m);
      add(errors, QueueSourceConfig.TOPIC_TEMPLATE_CONFIG, m);
    }
    Long offset = c.getLong(QueueSourceConfig.START_OFFSET_CONFIG);
    if (offset != null && offset < 0) {
      add(
          errors,
          QueueSourceConfig.START_OFFSET_CONFIG,
          "start.offset must be a queue offset >= 0, got " + offset);
    } else if (c.startPosition() == StartPosition.OFFSET && c.startOffset() < 0) {
      add(
          errors,
          QueueSourceConfig.START_OFFSET_CONFIG,
          "start.position=offset needs start.offset (a queue offset >= 0)");
    }
    Long timestamp = c.getLong(QueueSourceConfig.START_TIMESTAMP_MS_CONFIG);
    if (timestamp != null && timestamp < 0) {
      add(
          errors,
          QueueSourceConfig.START_TIMESTAMP_MS_CONFIG,
          "start.timestamp.ms must be epoch milliseconds >= 0, got " + timestamp);
    } else if (c.startPosition() == StartPosition.TIMESTAMP && c.startTimestamp() == null) {
      add(
          errors,
          QueueSourceConfig.START_TIMESTAMP_MS_CONFIG,
          "start.position=timestamp needs start.timestamp.ms (epoch milliseconds)");
    }
    return errors;
  }

  private static void add(Map<String, List<String>> errors, String key, String message) {
    errors.computeIfAbsent(key, k -> new ArrayList<>()).add(message);
  }

  // ------------------------------------------------------------------ exactly once

  /**
   * SUPPORTED, except in shared mode: streams are exactly once because their read position is the
   * source offset Connect commits in the record transaction; classic queues acknowledge after the
   * commit, which is at least once.
   */
  @Override
  public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> connectorConfig) {
    String mode = connectorConfig.get(QueueSourceConfig.CONSUMER_MODE_CONFIG);
    return mode != null && mode.trim().equalsIgnoreCase("shared")
        ? ExactlyOnceSupport.UNSUPPORTED
        : ExactlyOnceSupport.SUPPORTED;
  }

  /** SUPPORTED: see {@link TransactionBoundaries}. */
  @Override
  public ConnectorTransactionBoundaries canDefineTransactionBoundaries(
      Map<String, String> connectorConfig) {
    return ConnectorTransactionBoundaries.SUPPORTED;
  }

  // ------------------------------------------------------------------ offsets

  /**
   * Validates offsets for the REST offsets API and applies them where the store keeps the position
   * itself. Partitions must be exactly {@code {queue, group}} with this connector's group; offsets
   * exactly {@code {offset}}, an integer &gt;= 0 and at most the queue's tail. For a stream the new
   * source offset is what the tasks resume from. For a classic queue, whose consumer group is the
   * truth, the group's cursor is moved there too. A reset (null offset) deletes the consumer group
   * of that queue, so the queue is read from {@code start.position} again (for a classic queue this
   * also forgets its unacknowledged claims).
   *
   * @throws ConnectException naming the partition and the problem
   */
  @Override
  public boolean alterOffsets(
      Map<String, String> connectorConfig, Map<Map<String, ?>, Map<String, ?>> offsets) {
    QueueSourceConfig parsed = new QueueSourceConfig(connectorConfig);
    String group = parsed.group();
    for (Map.Entry<Map<String, ?>, Map<String, ?>> e : offsets.entrySet()) {
      SourceOffsets.validatePartition(e.getKey(), group);
      if (e.getValue() != null) {
        SourceOffsets.validateOffset(e.getKey(), e.getValue());
      }
    }
    try (SharedStores.Lease l = parsed.acquireStore()) {
      ConsumerGroups groups = l.manager().consumerGroups();
      for (Map.Entry<Map<String, ?>, Map<String, ?>> e : offsets.entrySet()) {
        String queue = SourceOffsets.queueOf(e.getKey());
        QueueConfig qc;
        try {
          qc = l.manager().getQueue(queue);
        } catch (QueueNotFoundException absent) {
          log.info(
              "alterOffsets: queue '{}' does not exist yet; only Connect keeps its offset", queue);
          continue;
        }
        if (e.getValue() == null) {
          groups.deleteGroup(queue, group);
          log.info("alterOffsets: reset queue '{}': deleted its group {}", queue, group);
          continue;
        }
        long next = SourceOffsets.nextOffset(e.getKey(), e.getValue());
        long tail = l.storage().queues().tail(queue);
        if (next > tail) {
          throw new ConnectException(
              "source offset "
                  + next
                  + " of partition "
                  + e.getKey()
                  + " is beyond the tail "
                  + tail
                  + " of queue '"
                  + queue
                  + "'; expected 0 .. "
                  + tail);
        }
        if (!qc.isStream()) {
          String admin = parsed.connectorName() + "-offsets";
          groups.join(queue, null, group, admin, CursorOption.atOffset(GroupMode.QUEUE, next));
          groups.leave(queue, null, group, admin);
          log.info("alterOffsets: moved group {} of queue '{}' to offset {}", group, queue, next);
        }
      }
    } catch (QueueException ex) {
      throw new ConnectException("cannot apply the offsets to the store: " + ex.getMessage(), ex);
    }
    return true;
  }
}
