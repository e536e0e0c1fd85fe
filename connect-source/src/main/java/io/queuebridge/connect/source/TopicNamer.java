package io.queuebridge.connect.source;

import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.errors.DataException;

/**
 * Picks the Kafka topic of each record: a fixed {@code topic}, or {@code topic.template} with
 * {@code ${queue}} (the queue name) and {@code ${topic}} (the topic the message was captured from:
 * its original Kafka topic property when the sink recorded one, else the message's topic).
 *
 * <p><b>Sanitising.</b> Kafka allows {@code [a-zA-Z0-9._-]} in topic names, at most 249 of them,
 * and neither {@code .} nor {@code ..}. Every other character of a template's result becomes {@code
 * _} (so queue {@code orders/eu} gives {@code orders_eu}; two names differing only there collide,
 * which the docs point out). A result that is still illegal is a {@link DataException}: the message
 * is poison.
 *
 * <p>Not thread-safe (it caches names per captured topic); one per task, used by the poll thread.
 */
final class TopicNamer {
  static final int MAX_TOPIC_LENGTH = 249;

  /**
   * The cache of template results per (queue, captured topic) is cleared when it grows past this.
   */
  private static final int CACHE_LIMIT = 10_000;

  private final String fixed;
  private final List<Object> parts; // String literals and Placeholder values
  private final boolean usesTopic;
  private final Map<String, String> byQueue = new HashMap<>();
  private final Map<String, String> byQueueAndTopic = new HashMap<>();

  private enum Placeholder {
    QUEUE,
    TOPIC
  }

  private TopicNamer(String fixed, List<Object> parts) {
    this.fixed = fixed;
    this.parts = parts;
    this.usesTopic = parts != null && parts.contains(Placeholder.TOPIC);
  }

  /** Every record to {@code topic} (already validated as legal). */
  static TopicNamer fixed(String topic) {
    return new TopicNamer(topic, null);
  }

  /**
   * Records named by {@code template}.
   *
   * @throws IllegalArgumentException for an unknown or unterminated placeholder
   */
  static TopicNamer template(String template) {
    return new TopicNamer(null, parseTemplate(template));
  }

  static TopicNamer of(QueueSourceConfig config) {
    return config.topic().isEmpty() ? template(config.topicTemplate()) : fixed(config.topic());
  }

  /**
   * Splits a template into literals and placeholders.
   *
   * @throws IllegalArgumentException naming the position and text of the first bad placeholder
   */
  static List<Object> parseTemplate(String template) {
    List<Object> parts = new ArrayList<>();
    int i = 0;
    StringBuilder literal = new StringBuilder();
    while (i < template.length()) {
      int start = template.indexOf("${", i);
      if (start < 0) {
        literal.append(template, i, template.length());
        break;
      }
      literal.append(template, i, start);
      int end = template.indexOf('}', start);
      if (end < 0) {
        throw new IllegalArgumentException(
            "unterminated placeholder at index " + start + " of '" + template + "'");
      }
      String name = template.substring(start, end + 1);
      Placeholder p =
          switch (name) {
            case QueueSourceConfig.QUEUE_PLACEHOLDER -> Placeholder.QUEUE;
            case QueueSourceConfig.TOPIC_PLACEHOLDER -> Placeholder.TOPIC;
            default ->
                throw new IllegalArgumentException(
                    "unknown placeholder "
                        + name
                        + " at index "
                        + start
                        + "; expected "
                        + QueueSourceConfig.QUEUE_PLACEHOLDER
                        + " or "
                        + QueueSourceConfig.TOPIC_PLACEHOLDER);
          };
      if (!literal.isEmpty()) {
        parts.add(literal.toString());
        literal.setLength(0);
      }
      parts.add(p);
      i = end + 1;
    }
    if (!literal.isEmpty()) {
      parts.add(literal.toString());
    }
    if (parts.isEmpty()) {
      throw new IllegalArgumentException("the template is empty");
    }
    return List.copyOf(parts);
  }

  /**
   * The topic for {@code message} of {@code queue}.
   *
   * @throws DataException if the name cannot be made legal
   */
  String topicFor(String queue, Message message) {
    if (fixed != null) {
      return fixed;
    }
    if (!usesTopic) {
      String cached = byQueue.get(queue);
      if (cached == null) {
        cached = legal(render(queue, ""));
        byQueue.put(queue, cached);
      }
      return cached;
    }
    String captured = capturedTopic(message);
    String key = queue + '\u0000' + captured;
    String cached = byQueueAndTopic.get(key);
    if (cached == null) {
      cached = legal(render(queue, captured));
      if (byQueueAndTopic.size() >= CACHE_LIMIT) {
        byQueueAndTopic.clear();
      }
      byQueueAndTopic.put(key, cached);
    }
    return cached;
  }

  /**
   * The topic the message was captured from: the sink's original-topic property, else its topic.
   */
  static String capturedTopic(Message message) {
    String original = message.properties().get(KafkaCoordinates.TOPIC);
    return original != null && !original.isEmpty() ? original : message.topic();
  }

  private String render(String queue, String captured) {
    StringBuilder out = new StringBuilder();
    for (Object part : parts) {
      if (part == Placeholder.QUEUE) {
        out.append(queue);
      } else if (part == Placeholder.TOPIC) {
        out.append(captured);
      } else {
        out.append((String) part);
      }
    }
    return out.toString();
  }

  /**
   * {@code name} with every character Kafka forbids replaced by {@code _}.
   *
   * @throws DataException when the result is still illegal
   */
  static String legal(String name) {
    String sanitized = sanitize(name);
    String problem = illegalReason(sanitized);
    if (problem != null) {
      throw new DataException(
          "topic name '" + name + "' cannot be made a legal Kafka topic name: " + problem);
    }
    return sanitized;
  }

  /** {@code name} with every character outside {@code [a-zA-Z0-9._-]} replaced by {@code _}. */
  static String sanitize(String name) {
    StringBuilder out = null;
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (!legalChar(c)) {
        if (out == null) {
          out = new StringBuilder(name);
        }
        out.setCharAt(i, '_');
      }
    }
    return out == null ? name : out.toString();
  }

  /** Why {@code topic} is not a legal Kafka topic name, or null if it is. */
  static String illegalReason(String topic) {
    if (topic.isEmpty()) {
      return "it is empty";
    }
    if (topic.equals(".") || topic.equals("..")) {
      return "'.' and '..' are not allowed";
    }
    if (topic.length() > MAX_TOPIC_LENGTH) {
      return "it has " + topic.length() + " characters, at most " + MAX_TOPIC_LENGTH + " allowed";
    }
    for (int i = 0; i < topic.length(); i++) {
      if (!legalChar(topic.charAt(i))) {
        return "character '"
            + topic.charAt(i)
            + "' at index "
            + i
            + " is not one of letters, digits, '.', '_', '-'";
      }
    }
    return null;
  }

  private static boolean legalChar(char c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || c == '.'
        || c == '_'
        || c == '-';
  }
}
