package io.queuebridge.connect.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.PublishRequest;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class QueueBatchTest {
  private static final TopicPartition TP0 = new TopicPartition("in", 0);
  private static final TopicPartition TP1 = new TopicPartition("in", 1);

  private static PublishRequest request() {
    return PublishRequest.builder("in").value(new byte[] {1, 2, 3}).build();
  }

  @Test
  void wantsWhatIsNeitherStoredNorInTheBatch() {
    Map<TopicPartition, Long> stored = new HashMap<>(Map.of(TP0, 5L));
    QueueBatch batch = new QueueBatch(QueueConfig.durable("q").build(), stored);
    assertThat(batch.wants(TP0, 4)).isFalse();
    assertThat(batch.wants(TP0, 5)).isTrue();
    assertThat(batch.wants(TP1, 0)).as("nothing stored of the partition").isTrue();

    batch.add(request(), TP0, 5);
    assertThat(batch.wants(TP0, 5)).as("in the batch").isFalse();
    batch.mark(TP1, 9); // an errant record: passed without writing
    assertThat(batch.wants(TP1, 9)).isFalse();
    assertThat(batch.wants(TP1, 10)).isTrue();
    assertThat(batch.requests).hasSize(1);
    assertThat(batch.bytes).isEqualTo(request().size());
    assertThat(stored).as("the stored watermarks move only on hand-over").containsOnlyKeys(TP0);
  }

  @Test
  void onlyAClassicQueuesBatchHasAMaxDepth() {
    QueueBatch classic =
        new QueueBatch(QueueConfig.durable("q").maxDepth(2).build(), new HashMap<>());
    classic.add(request(), TP0, 0);
    assertThat(classic.atMaxDepth()).isFalse();
    classic.add(request(), TP0, 1);
    assertThat(classic.atMaxDepth()).isTrue();

    QueueBatch stream =
        new QueueBatch(QueueConfig.reservedStream("s").maxDepth(2).build(), new HashMap<>());
    stream.add(request(), TP0, 0);
    stream.add(request(), TP0, 1);
    assertThat(stream.atMaxDepth()).isFalse();
  }

  @Test
  void checkpointsAreTheNextOffsetPerPartitionUnderTheirCheckpointKeys() {
    QueueBatch batch = new QueueBatch(QueueConfig.durable("q").build(), new HashMap<>());
    batch.add(request(), TP0, 3);
    batch.add(request(), TP1, 7);
    batch.add(request(), TP0, 4);
    assertThat(batch.checkpoints())
        .containsExactly(
            Map.entry(KafkaCoordinates.checkpointKey("in", 0), "5"),
            Map.entry(KafkaCoordinates.checkpointKey("in", 1), "8"));
  }
}
