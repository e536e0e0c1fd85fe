package io.queuebridge.examples.quickstart;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;

/** What a read_committed consumer of a topic sees, for the exactly-once ITs of this package. */
final class ReadCommitted {
  private ReadCommitted() {}

  /**
   * Every record a read_committed consumer sees in the partitions of {@code stable}: each read from
   * its beginning up to its last stable offset, never waiting for an open transaction.
   *
   * @param stable each partition's last stable offset (the read_committed end offset)
   * @throws IllegalStateException if the consumer has not reached them within {@code timeout}
   */
  static List<ConsumerRecord<byte[], byte[]>> upTo(
      EmbeddedKafkaCluster kafka,
      String topic,
      Map<TopicPartition, Long> stable,
      Duration timeout) {
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer =
        kafka.createConsumer(
            Map.of(
                ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                "read_committed",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG,
                false,
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG,
                5_000))) {
      consumer.assign(stable.keySet());
      consumer.seekToBeginning(stable.keySet());
      long deadline = System.nanoTime() + timeout.toNanos();
      while (stable.entrySet().stream()
          .anyMatch(e -> consumer.position(e.getKey()) < e.getValue())) {
        if (System.nanoTime() - deadline > 0) {
          throw new IllegalStateException(
              "read_committed did not reach the last stable offsets " + stable + " of " + topic);
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          if (r.offset() < stable.get(new TopicPartition(r.topic(), r.partition()))) {
            out.add(r);
          }
        }
      }
    }
    return out;
  }
}
