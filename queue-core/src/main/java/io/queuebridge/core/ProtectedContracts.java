package io.queuebridge.core;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.ProtectedQueueContractDriftException.FieldMismatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The protected-queue contract rules (BEHAVIOUR Q-PROT): which contracts are valid and which fields
 * a persisted configuration must match. Stateless; the registry and its lock live in {@link
 * ContractRegistry}.
 *
 * <p>Compared fields, named in config-file vocabulary: {@code name}, {@code topics} (ordered),
 * {@code type}, {@code durable}, {@code reserved}, {@code retention.max_age}, {@code
 * retention.max_length_bytes}, {@code retention.max_length_messages}, {@code
 * limits.max_message_size}, {@code limits.message_ttl}, {@code limits.max_delay}. Every other field
 * is excluded, {@code maxDepth} deliberately (it is not enforced for streams, so it must stay
 * tunable). Replication is out of scope (BEHAVIOUR Q-SCOPE), so there is no {@code
 * replication.enabled} to compare.
 */
final class ProtectedContracts {
  static final String NAME = "name";
  static final String TOPICS = "topics";
  static final String TYPE = "type";
  static final String DURABLE = "durable";
  static final String RESERVED = "reserved";
  static final String RETENTION_MAX_AGE = "retention.max_age";
  static final String RETENTION_MAX_LENGTH_BYTES = "retention.max_length_bytes";
  static final String RETENTION_MAX_LENGTH_MESSAGES = "retention.max_length_messages";
  static final String LIMITS_MAX_MESSAGE_SIZE = "limits.max_message_size";
  static final String LIMITS_MESSAGE_TTL = "limits.message_ttl";
  static final String LIMITS_MAX_DELAY = "limits.max_delay";

  /** Stored value of a field when the queue does not exist. */
  static final String MISSING = "(missing)";

  private ProtectedContracts() {}

  /**
   * Checks that a contract can be registered at all: a reserved, durable stream with a positive
   * maximum message size and a name.
   *
   * @throws InvalidConfigException naming the contract, the field, its value and what is required
   */
  static void checkSelfValid(QueueConfig contract) {
    String name = contract.name();
    if (name == null || name.isEmpty()) {
      throw new InvalidConfigException(
          "protectedQueueContracts[].name", name, "a non-empty queue name");
    }
    String prefix = "protectedQueueContracts[" + name + "].";
    if (contract.type() != QueueType.STREAM) {
      throw new InvalidConfigException(
          prefix + TYPE, render(contract.type()), "stream: a protected queue must be a stream");
    }
    if (!contract.durable()) {
      throw new InvalidConfigException(
          prefix + DURABLE, false, "true: a protected queue must be durable");
    }
    if (!contract.reserved()) {
      throw new InvalidConfigException(
          prefix + RESERVED, false, "true: a protected queue must be reserved");
    }
    if (contract.maxMessageSize() <= 0) {
      throw new InvalidConfigException(
          prefix + LIMITS_MAX_MESSAGE_SIZE, contract.maxMessageSize(), "> 0");
    }
  }

  /**
   * Builds a registry: every contract self-valid, names unique. Returns an unmodifiable map sorted
   * by name.
   *
   * @throws InvalidConfigException for the first invalid contract or a duplicate name
   */
  static Map<String, QueueConfig> build(List<QueueConfig> contracts) {
    TreeMap<String, QueueConfig> byName = new TreeMap<>();
    for (QueueConfig c : contracts) {
      if (c == null) {
        throw new InvalidConfigException("protectedQueueContracts[]", null, "a queue config");
      }
      checkSelfValid(c);
      if (byName.putIfAbsent(c.name(), c) != null) {
        throw new InvalidConfigException(
            "protectedQueueContracts[].name", c.name(), "one contract per queue name");
      }
    }
    return Collections.unmodifiableMap(byName);
  }

  /**
   * The compared fields on which {@code persisted} differs from {@code expected}, in the order of
   * the class comment; empty when it matches.
   */
  static List<FieldMismatch> mismatches(QueueConfig expected, QueueConfig persisted) {
    List<FieldMismatch> out = new ArrayList<>(2);
    diff(out, NAME, persisted.name(), expected.name());
    diff(out, TOPICS, persisted.topics(), expected.topics());
    diff(out, TYPE, render(persisted.type()), render(expected.type()));
    diff(out, DURABLE, persisted.durable(), expected.durable());
    diff(out, RESERVED, persisted.reserved(), expected.reserved());
    diff(
        out,
        RETENTION_MAX_AGE,
        persisted.retention().retentionTime(),
        expected.retention().retentionTime());
    diff(
        out,
        RETENTION_MAX_LENGTH_BYTES,
        persisted.retention().retentionBytes(),
        expected.retention().retentionBytes());
    diff(
        out,
        RETENTION_MAX_LENGTH_MESSAGES,
        persisted.retention().retentionMessages(),
        expected.retention().retentionMessages());
    diff(out, LIMITS_MAX_MESSAGE_SIZE, persisted.maxMessageSize(), expected.maxMessageSize());
    diff(out, LIMITS_MESSAGE_TTL, persisted.messageTtl(), expected.messageTtl());
    diff(out, LIMITS_MAX_DELAY, persisted.maxDelay(), expected.maxDelay());
    return out;
  }

  /** The mismatches for a queue that does not exist: its name is missing. */
  static List<FieldMismatch> missing(String name) {
    return List.of(new FieldMismatch(NAME, MISSING, name));
  }

  private static void diff(List<FieldMismatch> out, String field, Object stored, Object wanted) {
    if (!java.util.Objects.equals(stored, wanted)) {
      out.add(new FieldMismatch(field, render(stored), render(wanted)));
    }
  }

  static String render(Object value) {
    if (value instanceof QueueType t) {
      return t.name().toLowerCase(Locale.ROOT);
    }
    if (value instanceof Duration d) {
      return d.toString();
    }
    return String.valueOf(value);
  }
}
