package io.queuebridge.cli;

import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import io.queuebridge.core.store.DurableQueueStore;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/** {@code tail QUEUE}: messages of a queue, read without claiming or moving any group. */
@Command(
    name = "tail",
    mixinStandardHelpOptions = true,
    description = {
      "Prints messages of a queue or stream.",
      "",
      "For each: offset, when it was accepted, topic, key, value, headers, properties and the"
          + " Kafka coordinates the sink recorded. UTF-8 text is shown as text, other bytes as"
          + " base64 (or hex with --hex). Reading claims nothing and moves no consumer group. With"
          + " -o json: one JSON object per message and line.",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  queue-bridge tail orders --config sink.json",
      "  queue-bridge tail orders --from earliest --max 100 --store-type file --store path=/var/lib/qb",
      "  queue-bridge tail orders --from 2025-01-31T09:00:00Z --config sink.json -o json",
      "  queue-bridge tail jobs --from latest --follow --config source.json"
    })
final class TailCommand extends StoreCommand {
  /** How many messages one read fetches. */
  private static final int READ_BATCH = 500;

  /** How long one wait for new messages lasts before it is renewed (--follow). */
  private static final Duration FOLLOW_WAIT = Duration.ofSeconds(1);

  private static final Set<String> KAFKA_KEYS =
      Set.of(KafkaCoordinates.TOPIC, KafkaCoordinates.PARTITION, KafkaCoordinates.OFFSET);

  @Parameters(index = "0", paramLabel = "QUEUE", description = "The queue or stream.")
  String queue;

  @Option(
      names = "--from",
      paramLabel = "POSITION",
      description =
          "Where to start: earliest (the oldest message), latest (the tail: only new messages,"
              + " with --follow), an OFFSET, or a time (the first message accepted at or after"
              + " it) in ISO-8601 such as 2025-01-31T09:00:00Z. Default: the newest --max"
              + " messages.")
  String from;

  @Option(
      names = "--max",
      paramLabel = "N",
      defaultValue = "20",
      description =
          "At most N messages (0 = no limit); with --follow, before following. Default:"
              + " ${DEFAULT-VALUE}.")
  int max;

  @Option(names = "--hex", description = "Show bytes that are not UTF-8 text in hex, not base64.")
  boolean hex;

  @Option(
      names = "--follow",
      description = "Keep printing messages as they are appended, until interrupted (Ctrl-C).")
  boolean follow;

  @Override
  void checkArguments() {
    if (max < 0) {
      throw new ParameterException(spec.commandLine(), "--max " + max + ": expected 0 or more");
    }
    parseTime();
  }

  @Override
  void run(StoreSession session, PrintWriter out) {
    Instant fromTime = parseTime();
    session.queue(queue);
    DurableQueueStore log = session.log();
    long next = start(log, fromTime);
    long shown = 0;
    while (max == 0 || shown < max) {
      int limit = max == 0 ? READ_BATCH : (int) Math.min(READ_BATCH, max - shown);
      List<Message> batch = log.readBatch(queue, next, limit);
      if (batch.isEmpty()) {
        break;
      }
      for (Message m : batch) {
        next = m.offset() + 1;
        // a store's time lookup may answer early, never late: skip what came before the time
        if (fromTime == null || m.createdAt() == null || !m.createdAt().isBefore(fromTime)) {
          print(out, m);
          shown++;
        }
      }
    }
    if (follow) {
      follow(log, out, next);
    }
  }

  /** The time {@code --from} names, or null when it names none. */
  private Instant parseTime() {
    if (from == null || from.equals("earliest") || from.equals("latest") || isOffset(from)) {
      return null;
    }
    try {
      return Instant.parse(from);
    } catch (DateTimeParseException e) {
      throw new ParameterException(
          spec.commandLine(),
          "--from '"
              + from
              + "': expected earliest, latest, an offset, or an ISO-8601 time such as"
              + " 2025-01-31T09:00:00Z");
    }
  }

  private static boolean isOffset(String s) {
    return !s.isEmpty() && s.chars().allMatch(Character::isDigit);
  }

  private long start(DurableQueueStore log, Instant fromTime) {
    long head = log.head(queue);
    long tail = log.tail(queue);
    if (fromTime != null) {
      return log.timeOffset(queue, fromTime).orElse(head);
    }
    if (from == null) {
      return max == 0 ? head : Math.max(head, tail - max);
    }
    if (from.equals("earliest")) {
      return head;
    }
    if (from.equals("latest")) {
      return tail;
    }
    long offset;
    try {
      offset = Long.parseLong(from);
    } catch (NumberFormatException e) {
      offset = -1;
    }
    if (offset < head || offset > tail) {
      throw new CliException(
          "--from "
              + from
              + ": not an offset of queue '"
              + queue
              + "' (expected "
              + head
              + " to "
              + tail
              + ", its head to its tail)");
    }
    return offset;
  }

  private void follow(DurableQueueStore log, PrintWriter out, long next) {
    try {
      while (!Thread.currentThread().isInterrupted()) {
        if (!log.awaitAppend(queue, next, FOLLOW_WAIT)) {
          continue;
        }
        for (Message m : log.readBatch(queue, next, READ_BATCH)) {
          print(out, m);
          next = m.offset() + 1;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the end of --follow, not a failure
    }
  }

  private void print(PrintWriter out, Message m) {
    MessageView v = MessageView.of(queue, m, hex);
    if (output.json()) {
      Output.printJsonLine(out, v);
      return;
    }
    StringBuilder first = new StringBuilder("offset " + v.offset());
    first.append("  accepted ").append(Text.instant(v.createdAt()));
    first.append("  topic ").append(v.topic());
    if (!v.id().isEmpty()) {
      first.append("  id ").append(v.id());
    }
    if (v.expiresAt() != null) {
      first.append("  expires ").append(Text.instant(v.expiresAt()));
    }
    out.println(first);
    field(out, "key", v.key() == null ? "(none)" : v.key().display());
    field(out, "value", v.value() == null ? "(tombstone)" : v.value().display());
    for (MessageView.HeaderView h : v.headers()) {
      field(out, "header", h.key() + ": " + (h.value() == null ? "(null)" : h.value().display()));
    }
    for (Map.Entry<String, String> p : v.properties().entrySet()) {
      if (!KAFKA_KEYS.contains(p.getKey())) {
        field(out, "property", p.getKey() + ": " + p.getValue());
      }
    }
    if (v.kafka() != null) {
      field(
          out,
          "kafka",
          "topic "
              + v.kafka().topic()
              + ", partition "
              + Text.orNone(v.kafka().partition())
              + ", offset "
              + Text.orNone(v.kafka().offset()));
    }
    if (v.timestamp() != null) {
      field(
          out,
          "timestamp",
          Text.instant(Instant.ofEpochMilli(v.timestamp())) + " (" + v.timestampType() + ")");
    }
    out.println();
    out.flush();
  }

  /** {@code " name text"}, later lines of a multi-line text indented under the first. */
  private static void field(PrintWriter out, String name, String text) {
    String indent = " ".repeat(14);
    String label = "  " + name + " ".repeat(indent.length() - 2 - name.length());
    out.println(
        label + text.replace("\r\n", "\n").replace('\r', '\n').replace("\n", "\n" + indent));
  }
}
