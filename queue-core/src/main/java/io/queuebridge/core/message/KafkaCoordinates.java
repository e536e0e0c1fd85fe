package io.queuebridge.core.message;

/**
 * Names of the message properties in which the sink connector records where a message came from in
 * Kafka, so the source connector can restore it. Plain strings: the core knows nothing of Kafka.
 */
public final class KafkaCoordinates {
  /** The record's topic before any transformation. */
  public static final String TOPIC = "x-kafka-topic";

  /** The record's partition before any transformation. */
  public static final String PARTITION = "x-kafka-partition";

  /** The record's offset in its partition. */
  public static final String OFFSET = "x-kafka-offset";

  private KafkaCoordinates() {}

  /**
   * The checkpoint key under which a sink records the next offset to read from a partition: {@code
   * kafka/<topic>/<partition>} (Kafka topic names cannot contain {@code /}).
   */
  public static String checkpointKey(String topic, int partition) {
    return "kafka/" + topic + "/" + partition;
  }
}
