package io.queuebridge.connect.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.SharedStores;
import io.queuebridge.core.config.QueueConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.config.types.Password;
import org.junit.jupiter.api.Test;

class QueueConnectorConfigTest {
  private static final String SECRET = "s3cr3t-Pa55";

  /** A connector config with one key of its own before the shared ones, as the connectors do. */
  private static final class TestConfig extends QueueConnectorConfig {
    static final ConfigDef DEF = configDef();

    TestConfig(Map<String, String> props) {
      super(DEF, props);
    }

    private static ConfigDef configDef() {
      ConfigDef def = new ConfigDef();
      def.define(
          "own",
          ConfigDef.Type.STRING,
          "",
          ConfigDef.Importance.HIGH,
          "Own key.",
          "Own",
          1,
          ConfigDef.Width.SHORT,
          "Own");
      defineStoreKeys(def);
      defineRetryBackoff(def, 1, "What the connector does meanwhile.");
      return def;
    }
  }

  private static ConfigDef def() {
    ConfigDef def = new ConfigDef();
    QueueConnectorConfig.defineStoreKeys(def);
    return def;
  }

  @Test
  void definesTypePathAndPasswordInTheStoreGroup() {
    ConfigDef def = def();
    assertThat(def.configKeys())
        .containsOnlyKeys("queue.store.type", "queue.store.path", "queue.store.password");
    assertThat(def.configKeys().get("queue.store.password").type)
        .isEqualTo(ConfigDef.Type.PASSWORD);
    assertThat(def.configKeys().get("queue.store.type").defaultValue).isEqualTo("file");
    assertThat(def.groups()).containsExactly(QueueConnectorConfig.STORE_GROUP);
  }

  @Test
  void passwordIsHiddenInTheParsedValuesThatAbstractConfigLogs() {
    AbstractConfig config =
        new AbstractConfig(def(), Map.of("queue.store.password", SECRET), false);
    assertThat(config.values().get("queue.store.password")).isInstanceOf(Password.class);
    assertThat(config.values().toString()).doesNotContain(SECRET).contains("[hidden]");
    assertThat(StoreSettings.providerConfig(config.originalsStrings()))
        .containsEntry("password", SECRET);
  }

  @Test
  void errorsToleranceAllIsReadFromTheRawProperties() {
    assertThat(QueueConnectorConfig.toleratesErrors(Map.of("errors.tolerance", " ALL "))).isTrue();
    assertThat(QueueConnectorConfig.toleratesErrors(Map.of("errors.tolerance", "none"))).isFalse();
    assertThat(QueueConnectorConfig.toleratesErrors(Map.of())).isFalse();
  }

  @Test
  void typeValidatorNamesTheInstalledProviders() {
    List<ConfigValue> result = def().validate(Map.of("queue.store.type", "nosuch"));
    ConfigValue type =
        result.stream().filter(v -> v.name().equals("queue.store.type")).findFirst().orElseThrow();
    assertThat(type.errorMessages())
        .singleElement()
        .asString()
        .contains("nosuch")
        .contains("installed")
        .contains("memory")
        .contains("file");
  }

  @Test
  void sharedKeysStandWhereTheSubclassDefinesThem() {
    assertThat(TestConfig.DEF.groups())
        .containsExactly("Own", QueueConnectorConfig.STORE_GROUP, QueueConnectorConfig.FLOW_GROUP);
    assertThat(TestConfig.DEF.configKeys())
        .containsOnlyKeys(
            "own",
            "queue.store.type",
            "queue.store.path",
            "queue.store.password",
            "queue.retry.backoff.ms");
    ConfigDef.ConfigKey backoff = TestConfig.DEF.configKeys().get("queue.retry.backoff.ms");
    assertThat(backoff.documentation).isEqualTo("What the connector does meanwhile.");
    assertThat(backoff.orderInGroup).isEqualTo(1);
    assertThat(backoff.defaultValue).isEqualTo(QueueConnectorConfig.RETRY_BACKOFF_MS_DEFAULT);
  }

  @Test
  void typedAccessorsOfTheSharedKeys() {
    Map<String, String> props = new HashMap<>();
    props.put("queue.store.type", "memory");
    props.put("queue.store.name", "n");
    props.put("queue.retry.backoff.ms", "250");
    props.put("errors.tolerance", "all");
    TestConfig config = new TestConfig(props);
    assertThat(config.storeType()).isEqualTo("memory");
    assertThat(config.storeConfig()).containsExactly(Map.entry("name", "n"));
    assertThat(config.retryBackoff()).isEqualTo(Duration.ofMillis(250));
    assertThat(config.toleratesErrors()).isTrue();

    TestConfig defaults = new TestConfig(Map.of());
    assertThat(defaults.storeType()).isEqualTo("file");
    assertThat(defaults.retryBackoff()).isEqualTo(Duration.ofSeconds(1));
    assertThat(defaults.toleratesErrors()).isFalse();
  }

  @Test
  void theStoreHelpersUseTheConfiguredStore() {
    TestConfig refused =
        new TestConfig(Map.of("queue.store.type", "memory", "queue.store.nme", "typo"));
    Config result = new Config(new ArrayList<>());
    assertThat(refused.validateStoreKeys(result)).isFalse();
    assertThat(result.configValues())
        .extracting(ConfigValue::name)
        .containsExactly("queue.store.nme");

    TestConfig config =
        new TestConfig(Map.of("queue.store.type", "memory", "queue.store.name", "helpers"));
    Config ok = new Config(new ArrayList<>());
    assertThat(config.validateStoreKeys(ok)).isTrue();
    List<List<String>> checked = new ArrayList<>();
    try (SharedStores.Lease lease = config.acquireStore()) {
      lease.manager().createQueue(QueueConfig.durable("q").build());
      config.checkWithStore(
          ok,
          manager -> checked.add(manager.listQueues().stream().map(QueueConfig::name).toList()));
      assertThat(checked).as("the queues the check saw").containsExactly(List.of("q"));
    }
    assertThat(ConfigErrors.any(ok)).isFalse();
  }

  @Test
  void retryBackoffIsBetweenZeroAndTenMinutes() {
    assertThatThrownBy(() -> new TestConfig(Map.of("queue.retry.backoff.ms", "-1")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("queue.retry.backoff.ms");
    assertThatThrownBy(() -> new TestConfig(Map.of("queue.retry.backoff.ms", "600001")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("queue.retry.backoff.ms");
    assertThat(new TestConfig(Map.of("queue.retry.backoff.ms", "600000")).retryBackoff())
        .isEqualTo(Duration.ofMinutes(10));
  }
}
