package io.queuebridge.connect.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.config.types.Password;
import org.junit.jupiter.api.Test;

class QueueSinkConfigTest {
  private static final String SECRET = "sink-Pa55-word";

  private static Map<String, String> props() {
    Map<String, String> p = new HashMap<>();
    p.put("name", "sink");
    p.put("topics", "in");
    p.put(QueueSinkConfig.QUEUE_NAME_CONFIG, "orders");
    p.put(QueueSinkConfig.STORE_TYPE_CONFIG, "memory");
    p.put(QueueSinkConfig.STORE_PASSWORD_CONFIG, SECRET);
    p.put(QueueSinkConfig.STORE_PREFIX + "url", "jdbc:postgresql://db/qb");
    return p;
  }

  @Test
  void storePasswordIsAPasswordPassedToTheProviderAsPassword() {
    QueueSinkConfig config = new QueueSinkConfig(props());
    assertThat(
            QueueSinkConfig.CONFIG_DEF.configKeys().get(QueueSinkConfig.STORE_PASSWORD_CONFIG).type)
        .isEqualTo(ConfigDef.Type.PASSWORD);
    assertThat(config.storeConfig())
        .containsEntry("password", SECRET)
        .containsEntry("url", "jdbc:postgresql://db/qb")
        .doesNotContainKey("type");
    assertThat(config.values().get(QueueSinkConfig.STORE_PASSWORD_CONFIG))
        .isInstanceOf(Password.class);
    assertThat(config.values().toString()).doesNotContain(SECRET);
  }

  @Test
  void validateNeverEchoesTheStorePassword() {
    // the memory store refuses a password key, quoting the value it refused
    Config result = new QueueSinkConnector().validate(props());
    ConfigValue password = value(result, QueueSinkConfig.STORE_PASSWORD_CONFIG);
    assertThat(password.value()).isInstanceOf(Password.class);
    assertThat(password.value().toString()).doesNotContain(SECRET);
    assertThat(password.errorMessages()).singleElement().asString().doesNotContain(SECRET);
    for (ConfigValue v : result.configValues()) {
      assertThat(String.valueOf(v.value()) + v.errorMessages()).as(v.name()).doesNotContain(SECRET);
    }
  }

  private static ConfigValue value(Config config, String key) {
    List<ConfigValue> found =
        config.configValues().stream().filter(v -> v.name().equals(key)).toList();
    assertThat(found).as(key).hasSize(1);
    return found.get(0);
  }

  @Test
  void theDelayHeaderKeysAreOffByDefaultAndTrimmed() {
    QueueSinkConfig config = new QueueSinkConfig(props());
    assertThat(config.delayHeader()).isEmpty();
    assertThat(config.deliverAtHeader()).isEmpty();
    Map<String, String> p = props();
    p.put(QueueSinkConfig.DELAY_HEADER_CONFIG, " x-delay-ms ");
    p.put(QueueSinkConfig.DELIVER_AT_HEADER_CONFIG, "x-deliver-at-ms");
    QueueSinkConfig set = new QueueSinkConfig(p);
    assertThat(set.delayHeader()).isEqualTo("x-delay-ms");
    assertThat(set.deliverAtHeader()).isEqualTo("x-deliver-at-ms");
  }

  @Test
  void theTaskRefusesWhatValidateRefusesAcrossTheHeaderKeys() {
    Map<String, String> same = props();
    same.put(QueueSinkConfig.DELAY_HEADER_CONFIG, "h");
    same.put(QueueSinkConfig.DELIVER_AT_HEADER_CONFIG, "h ");
    assertThatThrownBy(() -> new QueueSinkConfig(same))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "queue.deliver.at.header = 'h' names the same header as queue.delay.header; expected"
                + " another header (one holds a delay, the other a time), or empty for none");
    Map<String, String> blank = props();
    blank.put(QueueSinkConfig.DELAY_HEADER_CONFIG, "  ");
    assertThatThrownBy(() -> new QueueSinkConfig(blank))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(
            "queue.delay.header = '  ' is blank; expected a record header name");
    Map<String, String> hidden = props();
    hidden.put(QueueSinkConfig.DELAY_HEADER_CONFIG, "x\u0000");
    assertThatThrownBy(() -> new QueueSinkConfig(hidden))
        .as("a NUL Connect's trimming would remove")
        .hasMessageContaining("'x\\u0000' has a control character at index 1");
    Map<String, String> bothEmpty = props();
    bothEmpty.put(QueueSinkConfig.DELAY_HEADER_CONFIG, "");
    bothEmpty.put(QueueSinkConfig.DELIVER_AT_HEADER_CONFIG, "");
    assertThat(new QueueSinkConfig(bothEmpty).delayHeader()).as("both off").isEmpty();
  }
}
