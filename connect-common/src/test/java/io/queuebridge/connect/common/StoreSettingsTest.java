package io.queuebridge.connect.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.SharedStores;
import io.queuebridge.core.config.QueueConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.errors.ConnectException;
import org.junit.jupiter.api.Test;

class StoreSettingsTest {
  private static final String SECRET = "s3cr3t-Pa55";

  @Test
  void everyStoreKeyButTheTypeIsPassedToTheProviderWithoutThePrefix() {
    Map<String, String> props = new HashMap<>();
    props.put("queue.store.type", "postgres");
    props.put("queue.store.url", "jdbc:postgresql://db:5432/qb");
    props.put("queue.store.user", "queuebridge");
    props.put("queue.store.password", SECRET);
    props.put("queue.store.pool.size", "4");
    props.put("queue.name", "orders");
    props.put("queue.store.schema", null);
    assertThat(StoreSettings.providerConfig(props))
        .containsExactly(
            Map.entry("password", SECRET),
            Map.entry("pool.size", "4"),
            Map.entry("url", "jdbc:postgresql://db:5432/qb"),
            Map.entry("user", "queuebridge"));
  }

  @Test
  void providerRefusalIsReportedOnItsStoreKeyWithTheSecretRedacted() {
    // the memory store accepts only 'name' and quotes the value of any other key it refuses
    Map<String, String> store = Map.of("password", SECRET);
    Config result = new Config(new ArrayList<>());
    assertThat(StoreSettings.validateProvider(result, "memory", store)).isFalse();
    assertThat(errors(result, "queue.store.password"))
        .singleElement()
        .asString()
        .contains("password")
        .contains("[hidden]")
        .doesNotContain(SECRET);

    Config ok = new Config(new ArrayList<>());
    assertThat(StoreSettings.validateProvider(ok, "memory", Map.of("name", "x"))).isTrue();
    assertThat(ConfigErrors.any(ok)).isFalse();
  }

  @Test
  void storeThatCannotBeOpenedIsReportedOnTheTypeWithTheSecretRedacted() {
    Config result = new Config(new ArrayList<>());
    List<QueueManager> checked = new ArrayList<>();
    StoreSettings.checkWithStore(result, "memory", Map.of("password", SECRET), checked::add);
    assertThat(checked).isEmpty();
    assertThat(errors(result, "queue.store.type"))
        .singleElement()
        .asString()
        .startsWith("cannot open the store: ")
        .contains("password")
        .doesNotContain(SECRET);
  }

  @Test
  void checkWithStoreRunsTheCheckOnAReadOnlyViewBesideTheWriter() {
    Map<String, String> store = Map.of("name", "check-with-store");
    try (SharedStores.Lease writer = StoreSettings.acquire("memory", store)) {
      writer.manager().createQueue(QueueConfig.durable("q").build());
      Config result = new Config(new ArrayList<>());
      StoreSettings.checkWithStore(
          result,
          "memory",
          store,
          manager -> {
            ConfigErrors.add(
                result,
                "queue.name",
                "seen " + manager.listQueues().stream().map(QueueConfig::name).toList());
            manager.createQueue(QueueConfig.durable("written-by-validation").build());
          });
      assertThat(errors(result, "queue.name")).containsExactly("seen [q]");
      assertThat(errors(result, "queue.store.type"))
          .as("a write through the manager is refused, and reported")
          .singleElement()
          .asString()
          .startsWith("cannot read the store: ")
          .contains("read-only")
          .contains("written-by-validation");
      // the writer's store is unchanged and still open: closing the view left it alone
      assertThat(writer.manager().listQueues()).extracting(QueueConfig::name).containsExactly("q");
    }
  }

  @Test
  void checkWithStoreOnAStoreThatDoesNotExistRunsNoCheckAndReportsNothing() {
    Config result = new Config(new ArrayList<>());
    List<QueueManager> checked = new ArrayList<>();
    // no memory store of that name is open: the read-only open finds none
    StoreSettings.checkWithStore(result, "memory", Map.of("name", "never-opened"), checked::add);
    assertThat(checked).isEmpty();
    assertThat(ConfigErrors.any(result)).isFalse();
  }

  @Test
  void checkWithStoreNeverOpensWritableAStoreWithoutReadOnlyOpen() {
    int opens = ScriptedStoreProvider.OPENS.get();
    Config result = new Config(new ArrayList<>());
    List<QueueManager> checked = new ArrayList<>();
    StoreSettings.checkWithStore(result, "scripted", Map.of(), checked::add);
    assertThat(checked).as("the checks that read the store are skipped").isEmpty();
    assertThat(ConfigErrors.any(result)).isFalse();
    assertThat(ScriptedStoreProvider.OPENS.get()).as("writable opens").isEqualTo(opens);
  }

  @Test
  void aStoreThatDoesNotExistIsNoErrorEvenWhenItsMessageQuotesTheSecret() {
    Config result = new Config(new ArrayList<>());
    List<QueueManager> checked = new ArrayList<>();
    StoreSettings.checkWithStore(
        result, "scripted", Map.of("read-only", "absent", "password", SECRET), checked::add);
    assertThat(checked).isEmpty();
    assertThat(ConfigErrors.any(result)).isFalse();
  }

  @Test
  void acquireNeverQuotesTheSecretInTheFailureOrItsCauses() {
    assertThatThrownBy(() -> StoreSettings.acquire("memory", Map.of("password", SECRET)))
        .isInstanceOf(ConnectException.class)
        .hasNoCause()
        .hasMessageStartingWith("cannot open the store: ")
        .hasMessageContaining("[hidden]")
        .hasMessageNotContaining(SECRET);
  }

  @Test
  void acquireLetsOrdinaryFailuresThroughUnchanged() {
    assertThatThrownBy(() -> StoreSettings.acquire("memory", Map.of("nme", "typo")))
        .isInstanceOf(io.queuebridge.core.errors.InvalidConfigException.class)
        .hasMessageContaining("'typo'");
  }

  @Test
  void redactReplacesOnlyNonEmptySecrets() {
    assertThat(StoreSettings.redact("a " + SECRET + " b " + SECRET, Map.of("password", SECRET)))
        .isEqualTo("a [hidden] b [hidden]");
    assertThat(StoreSettings.redact("a b", Map.of("password", ""))).isEqualTo("a b");
    assertThat(StoreSettings.redact("user x", Map.of("user", "x"))).isEqualTo("user x");
    assertThat(StoreSettings.redact(null, Map.of("password", SECRET))).isNull();
  }

  @Test
  void configErrorsAddsToAnExistingKeyOrCreatesIt() {
    Config result = new Config(new ArrayList<>(List.of(new ConfigValue("a"))));
    assertThat(ConfigErrors.any(result)).isFalse();
    ConfigErrors.add(result, "a", "bad a");
    ConfigErrors.add(result, "b", "bad b");
    assertThat(ConfigErrors.any(result)).isTrue();
    assertThat(errors(result, "a")).containsExactly("bad a");
    assertThat(errors(result, "b")).containsExactly("bad b");
  }

  private static List<String> errors(Config config, String key) {
    return config.configValues().stream()
        .filter(v -> v.name().equals(key))
        .findFirst()
        .map(ConfigValue::errorMessages)
        .orElse(List.of());
  }
}
