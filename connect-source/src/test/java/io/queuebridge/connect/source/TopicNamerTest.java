package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.message.KafkaCoordinates;
import io.queuebridge.core.message.Message;
import org.apache.kafka.connect.errors.DataException;
import org.junit.jupiter.api.Test;

class TopicNamerTest {

  private static Message captured(String topic, String originalTopic) {
    Message.Builder b = Message.builder().topic(topic);
    if (originalTopic != null) {
      b.property(KafkaCoordinates.TOPIC, originalTopic);
    }
    return b.build();
  }

  @Test
  void queuePlaceholderIsSanitisedIntoALegalTopic() {
    TopicNamer n = TopicNamer.template("out.${queue}");
    assertThat(n.topicFor("orders/eu", captured("t", null))).isEqualTo("out.orders_eu");
  }

  @Test
  void topicPlaceholderPrefersTheOriginalKafkaTopic() {
    TopicNamer n = TopicNamer.template("${topic}-restored");
    assertThat(n.topicFor("q", captured("capture/x", "payments"))).isEqualTo("payments-restored");
    assertThat(n.topicFor("q", captured("capture/x", null))).isEqualTo("capture_x-restored");
  }

  @Test
  void fixedTopicIsUsedAsIs() {
    assertThat(TopicNamer.fixed("b").topicFor("q", captured("t", "a"))).isEqualTo("b");
  }

  @Test
  void unknownOrUnterminatedPlaceholdersAreRefusedWithTheirPosition() {
    assertThatThrownBy(() -> TopicNamer.template("x-${queeu}"))
        .hasMessageContaining("${queeu}")
        .hasMessageContaining("index 2");
    assertThatThrownBy(() -> TopicNamer.template("x-${queue")).hasMessageContaining("unterminated");
  }

  @Test
  void aNameThatCannotBeMadeLegalIsPoison() {
    TopicNamer n = TopicNamer.template("${topic}");
    assertThatThrownBy(() -> n.topicFor("q", captured("..", null)))
        .isInstanceOf(DataException.class)
        .hasMessageContaining("'..'");
    assertThatThrownBy(() -> n.topicFor("q", captured("x".repeat(250), null)))
        .isInstanceOf(DataException.class)
        .hasMessageContaining("250 characters");
  }

  @Test
  void illegalReasonNamesTheCharacter() {
    assertThat(TopicNamer.illegalReason("ok.topic_-1")).isNull();
    assertThat(TopicNamer.illegalReason("bad topic")).contains("' '").contains("index 3");
    assertThat(TopicNamer.illegalReason("")).contains("empty");
  }
}
