package io.queuebridge.connect.source;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.connect.errors.ConnectException;

/**
 * The source partitions and offsets this connector stores in Connect (the shape Kafka's {@code
 * FileStreamSourceTask} uses, with named keys and tiny helpers).
 *
 * <ul>
 *   <li>Source partition: {@code {"queue": <queue name>, "group": <consumer group>}}.
 *   <li>Source offset: {@code {"offset": <next queue offset to read>}} — one past the last message
 *       handed to Kafka, like a Kafka consumer's committed offset.
 * </ul>
 *
 * Stateless and thread-safe.
 */
final class SourceOffsets {
  static final String QUEUE_KEY = "queue";
  static final String GROUP_KEY = "group";
  static final String OFFSET_KEY = "offset";

  private SourceOffsets() {}

  /**
   * The source partition of {@code queue} read by {@code group}.
   *
   * <p>A {@link HashMap}, not {@code Map.of}: Connect looks offsets up by the serialised bytes of
   * the partition map, in its iteration order. {@code Map.of} iterates in an order salted per JVM,
   * so a worker started later could serialise the same partition differently and miss its offset; a
   * {@code HashMap} of these two keys always iterates alike — and alike the maps Connect itself
   * builds when it reads partitions back (the offsets REST API).
   */
  static Map<String, String> partition(String queue, String group) {
    Map<String, String> p = new HashMap<>(4);
    p.put(QUEUE_KEY, queue);
    p.put(GROUP_KEY, group);
    return Collections.unmodifiableMap(p);
  }

  /** The source offset saying that reading continues at {@code next}. */
  static Map<String, Long> offset(long next) {
    return Collections.singletonMap(OFFSET_KEY, next);
  }

  /** The queue a source partition names. */
  static String queueOf(Map<String, ?> partition) {
    return (String) partition.get(QUEUE_KEY);
  }

  /**
   * The next offset an offset map holds, validated.
   *
   * @throws ConnectException naming the partition when the offset is not a non-negative integer
   */
  static long nextOffset(Map<String, ?> partition, Map<String, ?> offset) {
    validateOffset(partition, offset);
    return ((Number) offset.get(OFFSET_KEY)).longValue();
  }

  /**
   * Checks a source partition: exactly the keys {@code queue} and {@code group}, both non-empty
   * strings, and the group equal to {@code expectedGroup}.
   *
   * @throws ConnectException naming what is wrong
   */
  static void validatePartition(Map<String, ?> partition, String expectedGroup) {
    if (partition == null) {
      throw new ConnectException("a source partition is null; expected {queue, group}");
    }
    if (!partition.keySet().equals(Set.of(QUEUE_KEY, GROUP_KEY))) {
      throw new ConnectException(
          "source partition "
              + partition
              + " has the keys "
              + partition.keySet()
              + "; expected exactly ["
              + QUEUE_KEY
              + ", "
              + GROUP_KEY
              + "]");
    }
    for (String key : new String[] {QUEUE_KEY, GROUP_KEY}) {
      Object v = partition.get(key);
      if (!(v instanceof String s) || s.isEmpty()) {
        throw new ConnectException(
            "source partition " + partition + ": '" + key + "' must be a non-empty string");
      }
    }
    if (!expectedGroup.equals(partition.get(GROUP_KEY))) {
      throw new ConnectException(
          "source partition "
              + partition
              + " names group '"
              + partition.get(GROUP_KEY)
              + "' but this connector reads with group '"
              + expectedGroup
              + "' (queue.group)");
    }
  }

  /**
   * Checks a source offset (null = reset is accepted by the caller, not here): exactly the key
   * {@code offset}, an integral number, at least 0.
   *
   * @throws ConnectException naming the partition, the value and what was expected
   */
  static void validateOffset(Map<String, ?> partition, Map<String, ?> offset) {
    if (!offset.keySet().equals(Set.of(OFFSET_KEY))) {
      throw new ConnectException(
          "source offset "
              + offset
              + " of partition "
              + partition
              + " has the keys "
              + offset.keySet()
              + "; expected exactly ["
              + OFFSET_KEY
              + "]");
    }
    Object v = offset.get(OFFSET_KEY);
    if (!(v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte)) {
      throw new ConnectException(
          "source offset '"
              + OFFSET_KEY
              + "' of partition "
              + partition
              + " is "
              + (v == null ? "null" : "'" + v + "' (" + v.getClass().getSimpleName() + ")")
              + "; expected an integer >= 0 (the next queue offset to read)");
    }
    long next = ((Number) v).longValue();
    if (next < 0) {
      throw new ConnectException(
          "source offset '"
              + OFFSET_KEY
              + "' of partition "
              + partition
              + " is "
              + next
              + "; expected an integer >= 0 (the next queue offset to read)");
    }
  }
}
