package io.queuebridge.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.queuebridge.cli.ConnectorConfigFile.Connector;
import io.queuebridge.cli.KafkaOffsets.Partition;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.QueueNotFoundException;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.topic.TopicFilters;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code lag}: how far behind each hop of a bridge is, Kafka topic to sink to stream to source to
 * Kafka topic, in one table.
 *
 * <p><b>Where each number comes from.</b> The sink's side from Kafka (the Admin client of {@link
 * KafkaOffsets}: log-end offsets, the sink's consumer group offsets) and from the store (the
 * watermarks the sink stores as the stream's checkpoints, {@code kafka/<topic>/<partition>} to the
 * next offset, atomically with the records). The source's side from the store (the stream's tail
 * and the committed offset of the source's stream group) and, with {@code --connect-url}, from the
 * Connect worker ({@link ConnectRest}: the connectors' states and the source offsets Connect
 * stores).
 *
 * <p><b>Why the REST API for the source's offsets.</b> They live in a Kafka topic, but which one is
 * the worker's setting ({@code offset.storage.topic}, or the connector's own {@code
 * offsets.storage.topic} under exactly-once support), written with the worker's converter and
 * transactionally: the worker knows all three, the command line would have to guess them. Without
 * {@code --connect-url} the source's position is its stream group's committed offset, which the
 * source advances to what Kafka accepted every {@code queue.commit.interval.ms}.
 *
 * <p><b>Order of reads.</b> Every position is read before the end it is compared with, so a lag may
 * overstate but never understates: a hop that keeps up shows 0 once the flow pauses, never a
 * negative lag.
 */
@Command(
    name = "lag",
    mixinStandardHelpOptions = true,
    description = {
      "Shows how far behind each hop of a bridge is (topic, sink, stream, source).",
      "",
      "Sink rows, one per partition of the sink's topics (topics or topics.regex in --config): END"
          + " is the partition's log-end offset; COMMITTED the offset committed by the sink's"
          + " consumer group, connect-<name> unless consumer.override.group.id is set; WATERMARK"
          + " the next offset of the partition held by the stream, stored with the records (where"
          + " the sink resumes). With queue.routing=matching: one row per partition and queue that"
          + " holds a watermark of it.",
      "",
      "Source rows, one per stream each --source-config reads (queue.names or queue.filter): END"
          + " is the stream's tail; COMMITTED the committed offset of the source's stream group in"
          + " the store, named by queue.group or else connect-<name>, and advanced every"
          + " queue.commit.interval.ms; WATERMARK, with --connect-url, the source offset Connect"
          + " stores: where a restart resumes, under exactly-once support committed with the"
          + " records.",
      "",
      "Each LAG is END minus the position on its left. STATE is the connector's state on the"
          + " Connect worker (with --connect-url; absent: no such connector). Positions are read"
          + " before the ends they are compared with, so a lag may overstate, never understate. On"
          + " a topic written in transactions, END counts the commit marker after the last record:"
          + " there a sink that caught up shows a lag of 1. In the table, - means not available"
          + " (no offset committed or watermark stored yet, or no --connect-url).",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  queue-bridge lag --config sink.json --bootstrap-server kafka:9092",
      "  queue-bridge lag --config sink.json --bootstrap-server kafka:9092 \\",
      "      --source-config source.json --connect-url http://connect:8083",
      "  queue-bridge lag --config sink.json --bootstrap-server kafka:9092 \\",
      "      --command-config admin.properties -o json"
    })
final class LagCommand implements Callable<Integer> {
  static final String TOPICS = "topics";
  static final String TOPICS_REGEX = "topics.regex";
  static final String SINK_GROUP_OVERRIDE = "consumer.override.group.id";
  static final String QUEUE_NAME = "queue.name";
  static final String QUEUE_ROUTING = "queue.routing";
  static final String QUEUE_NAMES = "queue.names";
  static final String QUEUE_FILTER = "queue.filter";
  static final String QUEUE_GROUP = "queue.group";
  static final String TOPIC = "topic";
  static final String TOPIC_TEMPLATE = "topic.template";

  /** The keys of a source offset and its partition (the source connector's SourceOffsets). */
  static final String OFFSET_QUEUE = "queue";

  static final String OFFSET_GROUP = "group";
  static final String OFFSET_NEXT = "offset";

  @ParentCommand QueueBridgeCli root;

  @Spec CommandSpec spec;

  @Mixin Output output;

  @Option(
      names = "--config",
      required = true,
      paramLabel = "FILE",
      description =
          "The sink connector's config file (the JSON posted to Connect, or its bare config map):"
              + " its name, topics or topics.regex, queue.name, queue.routing and queue.store.*"
              + " keys (the store is opened as the other commands open it).")
  Path configFile;

  @Option(
      names = "--bootstrap-server",
      required = true,
      paramLabel = "HOST:PORT",
      description = "The Kafka cluster the sink reads: one or more brokers, comma-separated.")
  String bootstrapServer;

  @Option(
      names = "--source-config",
      paramLabel = "FILE",
      description =
          "A source connector's config file, read for its name, queue.names or queue.filter,"
              + " queue.group, topic or topic.template and queue.store.* keys. Repeat it for each"
              + " source.")
  List<Path> sourceConfigs = new ArrayList<>();

  @Option(
      names = "--connect-url",
      paramLabel = "URL",
      description =
          "The REST address of the Connect worker running the connectors, such as"
              + " http://connect:8083. Adds each connector's STATE and the source offsets Connect"
              + " stores (the WATERMARK of source rows).")
  String connectUrl;

  @Option(
      names = "--command-config",
      paramLabel = "FILE",
      description =
          "Java properties for the Kafka Admin client (security.protocol, sasl.*, ssl.*), as"
              + " Kafka's own tools take them.")
  Path commandConfig;

  @Option(
      names = "--timeout",
      paramLabel = "MS",
      defaultValue = "10000",
      description =
          "How long each request to Kafka or Connect may take before the command fails, in"
              + " milliseconds. Default: ${DEFAULT-VALUE}.")
  long timeoutMs;

  /** The stores opened, one session per store named (the sink's and the sources' may be one). */
  private final Map<StoreSpec, StoreSession> sessions = new LinkedHashMap<>();

  /** What {@code lag} reads of the sink's config. */
  private record SinkPlan(
      String name,
      String group,
      String queue,
      boolean matching,
      List<String> topics,
      Pattern regex,
      String topicsKey) {}

  /** What {@code lag} reads of a source's config. */
  private record SourcePlan(
      Connector config, String name, String group, List<String> names, String filter, String to) {}

  @Override
  public Integer call() {
    if (timeoutMs <= 0) {
      throw new ParameterException(
          spec.commandLine(), "--timeout " + timeoutMs + ": expected a number of milliseconds > 0");
    }
    Connector sink = ConnectorConfigFile.readConnector(configFile);
    List<Connector> sources =
        sourceConfigs.stream().map(ConnectorConfigFile::readConnector).toList();
    List<StoreSpec> stores = new ArrayList<>();
    stores.add(sink.store());
    sources.forEach(s -> stores.add(s.store()));
    try {
      List<LagRow> rows = rows(sink, sources);
      PrintWriter out = spec.commandLine().getOut();
      if (output.json()) {
        Output.printJson(out, rows);
      } else {
        Table table = new Table(LagRow.COLUMNS);
        rows.forEach(r -> table.row(r.cells()));
        table.print(out);
      }
      return QueueBridgeCli.OK;
    } catch (ParameterException e) {
      throw e;
    } catch (RuntimeException e) {
      String message = QueueBridgeCli.messageOf(e);
      for (StoreSpec store : stores) {
        message = store.redact(message);
      }
      throw new CliException(message);
    } finally {
      sessions.values().forEach(StoreSession::close);
      sessions.clear();
    }
  }

  private List<LagRow> rows(Connector sink, List<Connector> sources) {
    SinkPlan plan = sinkPlan(sink);
    List<SourcePlan> sourcePlans = sources.stream().map(LagCommand::sourcePlan).toList();
    Duration timeout = Duration.ofMillis(timeoutMs);
    ConnectRest rest = connectUrl == null ? null : ConnectRest.of(connectUrl, timeout);
    List<LagRow> rows = new ArrayList<>();
    try (KafkaOffsets kafka = KafkaOffsets.connect(bootstrapServer, commandConfig, timeout)) {
      List<String> topics =
          plan.regex() == null
              ? plan.topics()
              : kafka.topics().stream().filter(t -> plan.regex().matcher(t).matches()).toList();
      List<Partition> partitions =
          kafka.partitions(topics, plan.topicsKey() + " in " + sink.file());
      String state = plan.name() == null ? null : state(rest, plan.name());
      Map<Partition, Long> committed = kafka.committed(plan.group());
      Map<Partition, Map<String, Long>> watermarks =
          watermarks(session(sink.store()), plan, partitions);
      Map<Partition, Long> ends = kafka.logEnd(partitions);
      for (Partition p : partitions) {
        watermarks
            .get(p)
            .forEach(
                (queue, watermark) ->
                    rows.add(
                        LagRow.of(
                            LagRow.SINK,
                            plan.name(),
                            state,
                            plan.group(),
                            p.topic(),
                            p.partition(),
                            queue,
                            ends.get(p),
                            committed.get(p),
                            watermark)));
      }
    }
    for (SourcePlan source : sourcePlans) {
      rows.addAll(sourceRows(source, rest));
    }
    return rows;
  }

  private static SinkPlan sinkPlan(Connector sink) {
    String where = "--config " + sink.file();
    String queue = sink.get(QUEUE_NAME);
    if (queue == null) {
      throw new CliException(
          where
              + " has no "
              + QUEUE_NAME
              + " (expected a sink connector config: the stream the sink writes)");
    }
    List<String> topics = sink.list(TOPICS);
    String regex = sink.get(TOPICS_REGEX);
    if (!topics.isEmpty() && regex != null) {
      throw new CliException(
          where
              + " sets both "
              + TOPICS
              + " and "
              + TOPICS_REGEX
              + " (expected one of them, as Connect does)");
    }
    if (topics.isEmpty() && regex == null) {
      throw new CliException(
          where
              + " sets neither "
              + TOPICS
              + " nor "
              + TOPICS_REGEX
              + " (expected a sink connector config: the topics the sink reads)");
    }
    Pattern pattern = null;
    if (regex != null) {
      try {
        pattern = Pattern.compile(regex);
      } catch (PatternSyntaxException e) {
        throw new CliException(
            TOPICS_REGEX
                + " in "
                + sink.file()
                + ": '"
                + regex
                + "' is not a regular expression: "
                + Text.oneLine(e.getDescription())
                + " (expected a Java regular expression over topic names)");
      }
    }
    String group = sink.get(SINK_GROUP_OVERRIDE);
    if (group == null) {
      group =
          "connect-"
              + requireName(
                  sink,
                  where,
                  "the sink's consumer group is connect-<name>;"
                      + " or set "
                      + SINK_GROUP_OVERRIDE);
    }
    boolean matching = "matching".equalsIgnoreCase(sink.get(QUEUE_ROUTING));
    return new SinkPlan(
        sink.name(),
        group,
        queue,
        matching,
        topics,
        pattern,
        pattern == null ? TOPICS : TOPICS_REGEX);
  }

  private static SourcePlan sourcePlan(Connector source) {
    String where = "--source-config " + source.file();
    List<String> names = source.list(QUEUE_NAMES);
    String filter = source.get(QUEUE_FILTER);
    if (!names.isEmpty() && filter != null) {
      throw new CliException(
          where
              + " sets both "
              + QUEUE_NAMES
              + " and "
              + QUEUE_FILTER
              + " (expected one of them, as the source connector does)");
    }
    if (names.isEmpty() && filter == null) {
      throw new CliException(
          where
              + " sets neither "
              + QUEUE_NAMES
              + " nor "
              + QUEUE_FILTER
              + " (expected a source connector config: the streams the source reads)");
    }
    String group = source.get(QUEUE_GROUP);
    if (group == null) {
      group =
          "connect-"
              + requireName(
                  source,
                  where,
                  "the source's stream group is connect-<name>; or set " + QUEUE_GROUP);
    }
    String to = source.get(TOPIC);
    if (to == null) {
      to = source.get(TOPIC_TEMPLATE);
    }
    return new SourcePlan(
        source, source.name(), group, names.stream().distinct().sorted().toList(), filter, to);
  }

  private static String requireName(Connector connector, String where, String why) {
    if (connector.name() == null) {
      throw new CliException(where + " has no connector name (expected \"name\": " + why + ")");
    }
    return connector.name();
  }

  /** The connector's state, {@code absent} when the worker knows none; null without a URL. */
  private static String state(ConnectRest rest, String connector) {
    if (rest == null) {
      return null;
    }
    String state = rest.state(connector);
    return state == null ? LagRow.ABSENT : state;
  }

  private StoreSession session(StoreSpec store) {
    StoreSession session = sessions.get(store);
    if (session == null) {
      session = StoreSession.open(root.opener(), store, root.clock(), false);
      sessions.put(store, session);
    }
    return session;
  }

  /**
   * For each partition, the watermark each queue that can hold it has: {@code queue.name} with
   * exact routing (null when it holds none yet), every queue holding one with matching routing
   * ({@code queue.name} with null when none does).
   */
  private static Map<Partition, Map<String, Long>> watermarks(
      StoreSession session, SinkPlan plan, List<Partition> partitions) {
    Map<String, Map<String, String>> checkpoints = new TreeMap<>();
    if (plan.matching()) {
      for (QueueConfig q : session.queues()) {
        try {
          checkpoints.put(q.name(), session.log().checkpoints(q.name()));
        } catch (QueueNotFoundException deletedSince) {
          // deleted by its writer after the listing: it holds nothing any more
        }
      }
    } else if (session.hasQueue(plan.queue())) {
      checkpoints.put(plan.queue(), session.log().checkpoints(plan.queue()));
    }
    Map<Partition, Map<String, Long>> out = new LinkedHashMap<>();
    for (Partition p : partitions) {
      String key = KafkaCoordinates.checkpointKey(p.topic(), p.partition());
      Map<String, Long> byQueue = new LinkedHashMap<>();
      checkpoints.forEach(
          (queue, marks) -> {
            String mark = marks.get(key);
            if (mark != null) {
              byQueue.put(queue, parseWatermark(queue, key, mark));
            }
          });
      if (byQueue.isEmpty()) {
        byQueue.put(plan.queue(), null);
      }
      out.put(p, byQueue);
    }
    return out;
  }

  private static long parseWatermark(String queue, String key, String mark) {
    try {
      return Long.parseLong(mark);
    } catch (NumberFormatException e) {
      throw new CliException(
          "checkpoint "
              + key
              + " of queue '"
              + queue
              + "' is '"
              + mark
              + "' (expected the next Kafka offset, a number)");
    }
  }

  private List<LagRow> sourceRows(SourcePlan source, ConnectRest rest) {
    StoreSession session = session(source.config().store());
    String state = source.name() == null ? null : state(rest, source.name());
    List<ConnectRest.SourceOffset> offsets =
        rest == null || source.name() == null || LagRow.ABSENT.equals(state)
            ? null
            : rest.offsets(source.name());
    List<String> streams =
        source.filter() == null
            ? source.names()
            : session.queues().stream()
                .map(QueueConfig::name)
                .filter(name -> TopicFilters.matches(source.filter(), name))
                .toList();
    List<LagRow> rows = new ArrayList<>();
    for (String stream : streams) {
      Long committed = null;
      Long end = null;
      Long watermark = connectOffset(offsets, stream, source);
      try {
        if (session.hasQueue(stream)) {
          committed =
              session.groups(stream).stream()
                  .filter(g -> g.id().equals(source.group()))
                  .findFirst()
                  .map(ConsumerGroupState::committed)
                  .orElse(null);
          end = session.log().tail(stream);
        }
      } catch (QueueNotFoundException deletedSince) {
        committed = null; // deleted after the listing: nothing to read
      }
      rows.add(
          LagRow.of(
              LagRow.SOURCE,
              source.name(),
              state,
              source.group(),
              stream,
              null,
              source.to(),
              end,
              committed,
              watermark));
    }
    return rows;
  }

  /** The next offset Connect stores for {@code stream} read by the source's group, or null. */
  private static Long connectOffset(
      List<ConnectRest.SourceOffset> offsets, String stream, SourcePlan source) {
    if (offsets == null) {
      return null;
    }
    for (ConnectRest.SourceOffset o : offsets) {
      if (stream.equals(o.partition().get(OFFSET_QUEUE))
          && source.group().equals(o.partition().get(OFFSET_GROUP))
          && o.offset() != null) {
        JsonNode next = o.offset().get(OFFSET_NEXT);
        if (next == null || !next.canConvertToLong() || !next.isIntegralNumber()) {
          throw new CliException(
              "Connect stores the source offset "
                  + o.offset()
                  + " for stream '"
                  + stream
                  + "' of connector '"
                  + source.name()
                  + "' (expected {\"offset\": <next stream offset>})");
        }
        return next.asLong();
      }
    }
    return null;
  }
}
