package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.connect.source.QueueSourceConfig.ConsumerMode;
import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.config.QueueType;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class QueueSelectionTest {

  @Test
  void dedicatedModeGivesEachQueueToExactlyOneTaskRoundRobin() {
    assertThat(QueueSelection.assign(List.of("a", "b", "c", "d", "e"), 2, ConsumerMode.DEDICATED))
        .containsExactly(List.of("a", "c", "e"), List.of("b", "d"));
    assertThat(QueueSelection.assign(List.of("a", "b"), 5, ConsumerMode.DEDICATED))
        .as("no idle tasks")
        .containsExactly(List.of("a"), List.of("b"));
    assertThat(QueueSelection.assign(List.of(), 3, ConsumerMode.DEDICATED)).isEmpty();
  }

  @Test
  void sharedModeGivesEveryTaskEveryQueue() {
    assertThat(QueueSelection.assign(List.of("a", "b"), 3, ConsumerMode.SHARED))
        .containsExactly(List.of("a", "b"), List.of("a", "b"), List.of("a", "b"));
  }

  @Test
  void filterMatchesQueueNamesAndNamesSelectOnlyExistingQueues() {
    try (Storage storage = QueueStores.memory()) {
      QueueManager m = new QueueManager(storage, QueueManagerConfig.defaults());
      m.createQueue(QueueConfig.durable("orders/eu").build());
      m.createQueue(QueueConfig.durable("orders/us").type(QueueType.STREAM).build());
      m.createQueue(QueueConfig.durable("payments").build());
      Map<String, String> props = new HashMap<>();
      props.put(QueueSourceConfig.TOPIC_CONFIG, "t");
      props.put(QueueSourceConfig.QUEUE_FILTER_CONFIG, "orders/#");
      assertThat(QueueSelection.resolve(new QueueSourceConfig(props), m))
          .containsExactly(Map.entry("orders/eu", false), Map.entry("orders/us", true));
      props.remove(QueueSourceConfig.QUEUE_FILTER_CONFIG);
      props.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, "payments,missing");
      assertThat(QueueSelection.resolve(new QueueSourceConfig(props), m))
          .containsOnlyKeys("payments");
    }
  }
}
