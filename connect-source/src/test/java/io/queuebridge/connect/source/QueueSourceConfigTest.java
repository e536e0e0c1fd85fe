package io.queuebridge.connect.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.connect.source.QueueSourceConfig.ConsumerMode;
import io.queuebridge.connect.source.QueueSourceConfig.StartPosition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.junit.jupiter.api.Test;

class QueueSourceConfigTest {

  private static Map<String, String> minimal() {
    Map<String, String> props = new HashMap<>();
    props.put("name", "c1");
    props.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, "a,b");
    props.put(QueueSourceConfig.TOPIC_CONFIG, "out");
    return props;
  }

  @Test
  void typedAccessorsAndDefaults() {
    Map<String, String> props = minimal();
    props.put(QueueSourceConfig.STORE_PATH_CONFIG, "/tmp/x");
    props.put(QueueSourceConfig.STORE_PREFIX + "segment.bytes", "4096");
    QueueSourceConfig c = new QueueSourceConfig(props);
    assertThat(c.queueNames()).containsExactly("a", "b");
    assertThat(c.group()).isEqualTo("connect-c1");
    assertThat(c.consumerMode()).isEqualTo(ConsumerMode.DEDICATED);
    assertThat(c.startPosition()).isEqualTo(StartPosition.EARLIEST);
    assertThat(c.storeType()).isEqualTo("file");
    assertThat(c.storeConfig())
        .containsExactlyEntriesOf(
            new java.util.TreeMap<>(Map.of("path", "/tmp/x", "segment.bytes", "4096")));
    assertThat(c.pollTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.maxDeliveries()).isEqualTo(3);
    assertThat(c.startOffset()).isEqualTo(-1);
    assertThat(c.startTimestamp()).isNull();
    props.put(QueueSourceConfig.QUEUE_GROUP_CONFIG, "mine");
    assertThat(new QueueSourceConfig(props).group()).isEqualTo("mine");
  }

  @Test
  void fieldValidatorsNameTheKeyAndValue() {
    Map<String, String> props = minimal();
    props.put(QueueSourceConfig.START_POSITION_CONFIG, "somewhere");
    assertThatThrownBy(() -> new QueueSourceConfig(props))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("somewhere")
        .hasMessageContaining(QueueSourceConfig.START_POSITION_CONFIG);
  }

  @Test
  void crossFieldErrorsAreReportedOnTheKeysToChange() {
    Map<String, String> props = new HashMap<>();
    props.put(QueueSourceConfig.START_POSITION_CONFIG, "timestamp");
    Map<String, List<String>> errors =
        QueueSourceConnector.crossFieldErrors(new QueueSourceConfig(props));
    assertThat(errors)
        .containsOnlyKeys(
            QueueSourceConfig.QUEUE_NAMES_CONFIG,
            QueueSourceConfig.QUEUE_FILTER_CONFIG,
            QueueSourceConfig.TOPIC_CONFIG,
            QueueSourceConfig.TOPIC_TEMPLATE_CONFIG,
            QueueSourceConfig.START_TIMESTAMP_MS_CONFIG);
    props.put(QueueSourceConfig.QUEUE_NAMES_CONFIG, "a");
    props.put(QueueSourceConfig.QUEUE_FILTER_CONFIG, "a/#");
    props.put(QueueSourceConfig.TOPIC_TEMPLATE_CONFIG, "${queue}");
    props.put(QueueSourceConfig.START_TIMESTAMP_MS_CONFIG, "5");
    errors = QueueSourceConnector.crossFieldErrors(new QueueSourceConfig(props));
    assertThat(errors)
        .containsOnlyKeys(
            QueueSourceConfig.QUEUE_NAMES_CONFIG, QueueSourceConfig.QUEUE_FILTER_CONFIG);
    assertThat(errors.get(QueueSourceConfig.QUEUE_NAMES_CONFIG).get(0)).contains("only one");
    props.remove(QueueSourceConfig.QUEUE_FILTER_CONFIG);
    assertThat(QueueSourceConnector.crossFieldErrors(new QueueSourceConfig(props))).isEmpty();
  }

  @Test
  void exactlyOnceIsSupportedExceptForSharedClassicQueues() {
    QueueSourceConnector c = new QueueSourceConnector();
    assertThat(c.exactlyOnceSupport(minimal())).isEqualTo(ExactlyOnceSupport.SUPPORTED);
    Map<String, String> shared = minimal();
    shared.put(QueueSourceConfig.CONSUMER_MODE_CONFIG, "Shared");
    assertThat(c.exactlyOnceSupport(shared)).isEqualTo(ExactlyOnceSupport.UNSUPPORTED);
    assertThat(c.canDefineTransactionBoundaries(minimal()))
        .isEqualTo(ConnectorTransactionBoundaries.SUPPORTED);
  }

  @Test
  void storePasswordIsAPasswordPassedToTheProviderAndNeverEchoedByValidate() {
    String secret = "source-Pa55-word";
    Map<String, String> props = minimal();
    props.put(QueueSourceConfig.STORE_TYPE_CONFIG, "memory");
    props.put(QueueSourceConfig.STORE_PASSWORD_CONFIG, secret);
    QueueSourceConfig config = new QueueSourceConfig(props);
    assertThat(
            QueueSourceConfig.CONFIG_DEF
                .configKeys()
                .get(QueueSourceConfig.STORE_PASSWORD_CONFIG)
                .type)
        .isEqualTo(ConfigDef.Type.PASSWORD);
    assertThat(config.storeConfig()).containsEntry("password", secret);
    assertThat(config.values().get(QueueSourceConfig.STORE_PASSWORD_CONFIG))
        .isInstanceOf(Password.class);
    assertThat(config.values().toString()).doesNotContain(secret);

    // the memory store refuses a password key, quoting the value it refused
    Config result = new QueueSourceConnector().validate(props);
    ConfigValue password =
        result.configValues().stream()
            .filter(v -> v.name().equals(QueueSourceConfig.STORE_PASSWORD_CONFIG))
            .findFirst()
            .orElseThrow();
    assertThat(password.errorMessages()).singleElement().asString().contains("[hidden]");
    for (ConfigValue v : result.configValues()) {
      assertThat(String.valueOf(v.value()) + v.errorMessages()).as(v.name()).doesNotContain(secret);
    }
  }

  @Test
  void versionComesFromTheBuild() {
    assertThat(new QueueSourceConnector().version()).isNotBlank().doesNotContain("${");
    assertThat(new QueueSourceTask().version()).isEqualTo(new QueueSourceConnector().version());
  }

  /**
   * connect-source/CONFIG.rst is generated from the ConfigDef; this fails when it drifts. Run with
   * {@code -Dwrite.config.rst=true} to regenerate it.
   */
  @Test
  void committedConfigReferenceMatchesTheConfigDef() throws Exception {
    Path file = Path.of("CONFIG.rst");
    if (Boolean.getBoolean("write.config.rst")) {
      Files.writeString(file, QueueSourceConfig.CONFIG_DEF.toEnrichedRst());
    }
    String committed = Files.readString(file);
    assertThat(committed.strip())
        .as(
            "CONFIG.rst is stale: regenerate it with -Dwrite.config.rst=true"
                + " (see connect-source/README.md)")
        .isEqualTo(QueueSourceConfig.CONFIG_DEF.toEnrichedRst().strip());
  }
}
