package io.queuebridge.connect.sink;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.PublishRequest;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WatermarksTest {
  private static final TopicPartition TP0 = new TopicPartition("in", 0);
  private static final TopicPartition TP1 = new TopicPartition("in", 1);
  private static final TopicPartition TP2 = new TopicPartition("in", 2);

  @TempDir Path dir;
  private SinkFixture fixture;

  @AfterEach
  void close() {
    fixture.close();
  }

  /** Appends one record to {@code queue} with the watermark {@code next} of each partition. */
  private void store(String queue, Map<TopicPartition, Long> next) throws InterruptedException {
    Map<String, String> checkpoints = new LinkedHashMap<>();
    next.forEach(
        (tp, o) ->
            checkpoints.put(KafkaCoordinates.checkpointKey(tp.topic(), tp.partition()), "" + o));
    fixture
        .manager()
        .publishBatchDurably(
            queue,
            List.of(PublishRequest.builder("in").value(new byte[] {1}).build()),
            checkpoints);
  }

  @Test
  void loadReadsTheWatermarksStoredWithTheBatches() throws Exception {
    fixture = new SinkFixture(dir);
    store("s", Map.of(TP0, 5L, TP1, 3L));
    Watermarks marks = new Watermarks(fixture.config, fixture.manager());
    marks.load(List.of(TP0, TP1, TP2));
    assertThat(marks.lowest(List.of(TP0, TP1, TP2)))
        .containsExactlyInAnyOrderEntriesOf(Map.of(TP0, 5L, TP1, 3L));
    assertThat(marks.of("s")).containsExactlyInAnyOrderEntriesOf(Map.of(TP0, 5L, TP1, 3L));
    assertThat(marks.lowest(List.of(TP2))).as("a partition never written").isEmpty();
  }

  @Test
  void withMatchingRoutingTheLowestWatermarkOfAllQueuesIsWhereAPartitionIsReadFrom()
      throws Exception {
    fixture = new SinkFixture(dir, Map.of(QueueSinkConfig.QUEUE_ROUTING_CONFIG, "matching"));
    fixture.manager().createQueue(QueueConfig.durable("a").topics("in").build());
    fixture.manager().createQueue(QueueConfig.durable("b").topics("in").build());
    store("a", Map.of(TP0, 7L, TP1, 2L));
    store("b", Map.of(TP0, 4L));
    Watermarks marks = new Watermarks(fixture.config, fixture.manager());
    marks.load(List.of(TP0, TP1));
    assertThat(marks.lowest(List.of(TP0, TP1)))
        .containsExactlyInAnyOrderEntriesOf(Map.of(TP0, 4L, TP1, 2L));
    assertThat(marks.of("a")).containsExactlyInAnyOrderEntriesOf(Map.of(TP0, 7L, TP1, 2L));
  }

  @Test
  void forgottenPartitionsLeaveEveryQueue() throws Exception {
    fixture = new SinkFixture(dir);
    store("s", Map.of(TP0, 5L, TP1, 3L));
    Watermarks marks = new Watermarks(fixture.config, fixture.manager());
    marks.load(List.of(TP0, TP1));
    marks.forget(List.of(TP0));
    assertThat(marks.of("s")).containsExactly(Map.entry(TP1, 3L));
  }

  @Test
  void staleWatermarksAreReloadedOnceAndOnlyWhenMarked() throws Exception {
    fixture = new SinkFixture(dir);
    store("s", Map.of(TP0, 5L));
    Watermarks marks = new Watermarks(fixture.config, fixture.manager());
    marks.load(List.of(TP0));
    marks.of("s").put(TP0, 12L); // advanced for a batch in flight, which then fails at 9
    store("s", Map.of(TP0, 9L));

    marks.reloadIfStale(List.of(TP0));
    assertThat(marks.of("s")).as("not marked stale").containsExactly(Map.entry(TP0, 12L));
    marks.markStale();
    marks.reloadIfStale(List.of(TP0));
    assertThat(marks.of("s")).containsExactly(Map.entry(TP0, 9L));
    marks.of("s").put(TP0, 20L);
    marks.reloadIfStale(List.of(TP0));
    assertThat(marks.of("s")).as("reloaded once").containsExactly(Map.entry(TP0, 20L));
  }

  @Test
  void aLoadDropsAWatermarkTheStoreNoLongerHasForTheLoadedPartitions() throws Exception {
    fixture = new SinkFixture(dir);
    Watermarks marks = new Watermarks(fixture.config, fixture.manager());
    marks.of("s").put(TP0, 3L);
    marks.of("s").put(TP1, 4L);
    marks.load(List.of(TP0)); // the store holds nothing for TP0
    assertThat(marks.of("s")).containsExactly(Map.entry(TP1, 4L));
  }
}
