package io.queuebridge.cli;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.queuebridge.core.config.OrderingKey;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.RetentionPolicy;
import io.queuebridge.core.config.RetryPolicy;
import io.queuebridge.core.message.Message;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code describe QUEUE}: one queue's configuration, extent, dead-letter queue and groups. */
@Command(
    name = "describe",
    mixinStandardHelpOptions = true,
    description = {
      "Shows one queue or stream.",
      "",
      "Its stored configuration (type, durability, the reserved flag of protected streams, topic"
          + " filters, retention, limits, retry policy, per-key ordering), its head and tail with when those"
          + " messages were accepted, its dead-letter queue and how many messages that holds, and"
          + " its consumer groups.",
      ""
    },
    footer = {
      "",
      "Examples:",
      "  queue-bridge describe orders --config sink.json",
      "  queue-bridge describe jobs --store-type file --store path=/var/lib/qb -o json"
    })
final class DescribeCommand extends StoreCommand {
  @Parameters(index = "0", paramLabel = "QUEUE", description = "The queue or stream.")
  String queue;

  /** The retention limits; 0 = no limit. */
  record Retention(long maxAgeMs, long maxBytes, long maxMessages) {}

  /** The retry policy; {@code totalTimeoutMs} 0 = no limit. */
  record Retry(
      int maxRetries,
      long initialBackoffMs,
      long maxBackoffMs,
      double backoffMultiplier,
      long totalTimeoutMs) {}

  /**
   * The queue's dead-letter queue.
   *
   * @param name where dead letters go
   * @param enabled whether the queue dead-letters at all
   * @param exists whether that queue exists yet (it is created by the first dead letter)
   * @param messages how many messages it holds; null when it does not exist
   */
  record DeadLetters(String name, boolean enabled, boolean exists, Long messages) {}

  /** Everything {@code describe} shows, as {@code -o json} prints it. */
  record Description(
      String name,
      String type,
      boolean durable,
      @JsonProperty("protected") boolean reserved,
      List<String> topics,
      Retention retention,
      long maxMessageSize,
      long messageTtlMs,
      long maxDepth,
      long deliveryTimeoutMs,
      String ackDurability,
      long dedupWindowMs,
      long maxDelayMs,
      String ordering,
      int batchSize,
      long heartbeatTimeoutMs,
      Long expiresAfterMs,
      Retry retryPolicy,
      DeadLetters deadLetterQueue,
      long head,
      long tail,
      long messages,
      Instant headCreatedAt,
      Instant lastCreatedAt,
      List<GroupRow> groups) {}

  @Override
  void run(StoreSession session, PrintWriter out) {
    Description d = describe(session, session.queue(queue));
    if (output.json()) {
      Output.printJson(out, d);
      return;
    }
    String[][] lines = {
      {"Queue", d.name()},
      {"Type", d.type()},
      {"Durable", Text.yesNo(d.durable())},
      {"Protected", d.reserved() ? "yes (reserved: the store refuses to delete it)" : "no"},
      {"Topics", String.join(", ", d.topics())},
      {"Retention", retention(d.retention())},
      {"Max message size", d.maxMessageSize() + " bytes"},
      {"Message TTL", ttl(d.messageTtlMs())},
      {"Max depth", d.maxDepth() + (d.type().equals("stream") ? " (not enforced on streams)" : "")},
      {"Delivery timeout", Text.duration(Duration.ofMillis(d.deliveryTimeoutMs()))},
      {"Retry policy", retry(d.retryPolicy())},
      {"Ack durability", d.ackDurability()},
      {
        "Dedup window",
        d.dedupWindowMs() == 0
            ? "off"
            : Text.duration(Duration.ofMillis(d.dedupWindowMs()))
                + " (a publish's deduplication id is stored once within it)"
      },
      {
        "Max delay",
        d.maxDelayMs() == 0
            ? "0 (delayed publishes refused)"
            : Text.duration(Duration.ofMillis(d.maxDelayMs()))
      },
      {"Ordering", ordering(d.ordering())},
      {"Batch size", d.batchSize() == 0 ? "the manager's" : Integer.toString(d.batchSize())},
      {
        "Heartbeat timeout",
        d.heartbeatTimeoutMs() == 0
            ? "the manager's"
            : Text.duration(Duration.ofMillis(d.heartbeatTimeoutMs()))
      },
      {
        "Expires after",
        d.expiresAfterMs() == null
            ? "- (durable)"
            : Text.duration(Duration.ofMillis(d.expiresAfterMs())) + " without consumers"
      },
      {"Dead-letter queue", deadLettersText(d.deadLetterQueue())},
      {
        "Head",
        d.head()
            + (d.messages() == 0
                ? " (empty)"
                : " (accepted " + Text.instant(d.headCreatedAt()) + ")")
      },
      {
        "Tail",
        d.tail()
            + (d.messages() == 0
                ? " (empty)"
                : " (last message "
                    + (d.tail() - 1)
                    + ", accepted "
                    + Text.instant(d.lastCreatedAt())
                    + ")")
      },
      {"Messages", Long.toString(d.messages())},
    };
    int width = 0;
    for (String[] line : lines) {
      width = Math.max(width, line[0].length());
    }
    for (String[] line : lines) {
      out.println(line[0] + ":" + " ".repeat(width - line[0].length() + 2) + line[1]);
    }
    out.println();
    out.println("Groups:");
    GroupsCommand.printTable(out, d.groups());
  }

  static Description describe(StoreSession session, QueueConfig q) {
    String name = q.name();
    long head = session.log().head(name);
    long tail = session.log().tail(name);
    List<GroupRow> groups =
        session.groups(name).stream().map(g -> GroupRow.of(g, tail, session.now())).toList();
    RetentionPolicy r = q.retention();
    RetryPolicy p = q.retryPolicy();
    return new Description(
        name,
        QueueRow.typeOf(q),
        q.durable(),
        q.reserved(),
        q.topics(),
        new Retention(r.retentionTime().toMillis(), r.retentionBytes(), r.retentionMessages()),
        q.maxMessageSize(),
        q.messageTtl().toMillis(),
        q.maxDepth(),
        q.deliveryTimeout().toMillis(),
        q.ackDurability().name().toLowerCase(Locale.ROOT),
        q.dedupWindow().toMillis(),
        q.maxDelay().toMillis(),
        q.ordering().toString(),
        q.batchSize(),
        q.heartbeatTimeout().toMillis(),
        q.durable() ? null : q.expiresAfter().toMillis(),
        new Retry(
            p.maxRetries(),
            p.initialBackoff().toMillis(),
            p.maxBackoff().toMillis(),
            p.backoffMultiplier(),
            p.totalTimeout().toMillis()),
        deadLetters(session, q),
        head,
        tail,
        tail - head,
        session.first(name).map(Message::createdAt).orElse(null),
        session.last(name).map(Message::createdAt).orElse(null),
        groups);
  }

  private static DeadLetters deadLetters(StoreSession session, QueueConfig q) {
    String dlq = session.deadLetterQueue(q);
    boolean exists = session.hasQueue(dlq);
    return new DeadLetters(
        dlq, q.dlq().enabled(), exists, exists ? session.log().count(dlq) : null);
  }

  private static String retention(Retention r) {
    if (r.maxAgeMs() == 0 && r.maxBytes() == 0 && r.maxMessages() == 0) {
      return "none (kept until deleted)";
    }
    return "max age "
        + (r.maxAgeMs() == 0 ? "none" : Text.duration(Duration.ofMillis(r.maxAgeMs())))
        + ", max bytes "
        + (r.maxBytes() == 0 ? "none" : r.maxBytes())
        + ", max messages "
        + (r.maxMessages() == 0 ? "none" : r.maxMessages());
  }

  private static String ttl(long ms) {
    return ms == 0 ? "0 (never expires)" : Text.duration(Duration.ofMillis(ms));
  }

  /** The ordering's text form ({@link OrderingKey#toString}) for people. */
  private static String ordering(String text) {
    OrderingKey o = OrderingKey.parse("ordering", text);
    if (o.isNone()) {
      return "none";
    }
    if (o.equals(OrderingKey.MESSAGE_KEY)) {
      return "by message key (a group hands out one message per key at a time, in offset order)";
    }
    return "by property "
        + o.propertyName()
        + " (a group hands out one message per value at a time, in offset order)";
  }

  private static String retry(Retry r) {
    return r.maxRetries()
        + " retries, backoff "
        + Text.duration(Duration.ofMillis(r.initialBackoffMs()))
        + " x"
        + r.backoffMultiplier()
        + " up to "
        + Text.duration(Duration.ofMillis(r.maxBackoffMs()))
        + ", give up after "
        + (r.totalTimeoutMs() == 0
            ? "no limit"
            : Text.duration(Duration.ofMillis(r.totalTimeoutMs())));
  }

  private static String deadLettersText(DeadLetters d) {
    if (!d.enabled()) {
      return "disabled (dead letters are dropped)";
    }
    return d.name()
        + (d.exists()
            ? " (" + d.messages() + (d.messages() == 1 ? " message)" : " messages)")
            : " (not created yet: no dead letters)");
  }
}
