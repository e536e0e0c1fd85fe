package io.queuebridge.core.store.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queuebridge.core.config.QueueConfig;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * How a queue's {@code batchSize} and {@code heartbeatTimeout} are stored: in {@code
 * groupSettings}, with the inert top-level fields of earlier releases still written and never read.
 */
class QueueConfigCodecTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static ObjectNode json(QueueConfig c) throws Exception {
    return (ObjectNode) JSON.readTree(QueueConfigCodec.toJson(c));
  }

  @Test
  void aQueueThatSetsNeitherWritesTheEarlierReleasesFieldsAndNoGroupSettings() throws Exception {
    ObjectNode n = json(QueueConfig.durable("q").build());
    assertThat(n.get("batchSize").asInt()).isEqualTo(100);
    assertThat(n.get("heartbeatTimeout").asText()).isEqualTo("PT2M");
    assertThat(n.has("groupSettings")).isFalse();
  }

  @Test
  void aQueuesOwnValuesRoundTripThroughGroupSettings() throws Exception {
    QueueConfig both =
        QueueConfig.durable("q").batchSize(3).heartbeatTimeout(Duration.ofSeconds(2)).build();
    JsonNode own = json(both).get("groupSettings");
    assertThat(own.get("batchSize").asInt()).isEqualTo(3);
    assertThat(own.get("heartbeatTimeout").asText()).isEqualTo("PT2S");
    assertThat(QueueConfigCodec.fromJson(QueueConfigCodec.toJson(both))).isEqualTo(both);

    QueueConfig batchOnly = QueueConfig.durable("q").batchSize(100).build();
    assertThat(json(batchOnly).get("groupSettings").has("heartbeatTimeout")).isFalse();
    assertThat(QueueConfigCodec.fromJson(QueueConfigCodec.toJson(batchOnly)))
        .as("100 set by the queue is not the legacy 100")
        .isEqualTo(batchOnly);
    QueueConfig timeoutOnly =
        QueueConfig.durable("q").heartbeatTimeout(Duration.ofMinutes(2)).build();
    assertThat(QueueConfigCodec.fromJson(QueueConfigCodec.toJson(timeoutOnly)))
        .isEqualTo(timeoutOnly);
  }

  @Test
  void theTopLevelFieldsOfAnEarlierReleaseAreNotReadSoItsQueuesKeepTheManagersSettings()
      throws Exception {
    ObjectNode earlier = json(QueueConfig.durable("q").build());
    earlier.put("batchSize", 7); // what an earlier release stored when the queue set them
    earlier.put("heartbeatTimeout", "PT11S");
    QueueConfig read = QueueConfigCodec.fromJson(JSON.writeValueAsBytes(earlier));
    assertThat(read.batchSize()).isZero();
    assertThat(read.heartbeatTimeout()).isEqualTo(Duration.ZERO);
    assertThat(read).isEqualTo(QueueConfig.durable("q").build());

    earlier.remove("batchSize");
    earlier.remove("heartbeatTimeout");
    assertThat(QueueConfigCodec.fromJson(JSON.writeValueAsBytes(earlier)))
        .as("not required either")
        .isEqualTo(QueueConfig.durable("q").build());
  }

  @Test
  void aMalformedGroupSettingsIsRefusedNamingTheField() throws Exception {
    ObjectNode n = json(QueueConfig.durable("q").build());
    n.put("groupSettings", 3);
    assertThatThrownBy(() -> QueueConfigCodec.fromJson(JSON.writeValueAsBytes(n)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("groupSettings");
    n.putObject("groupSettings").put("heartbeatTimeout", 2);
    assertThatThrownBy(() -> QueueConfigCodec.fromJson(JSON.writeValueAsBytes(n)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("heartbeatTimeout");
    n.putObject("groupSettings").put("batchSize", "3");
    assertThatThrownBy(() -> QueueConfigCodec.fromJson(JSON.writeValueAsBytes(n)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("batchSize");
  }
}
