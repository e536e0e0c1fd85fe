package io.queuebridge.connect.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.SharedStores;
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
    List<SharedStores.Lease> checked = new ArrayList<>();
    StoreSettings.checkWithStore(result, "memory", Map.of("password", SECRET), checked::add);
    assertThat(checked).isEmpty();
    assertThat(errors(result, "queue.store.type"))
        .singleElement()
        .asString()
        .startsWith("cannot open the store: ")
        .doesNotContain(SECRET);
  }

  @Test
  void checkWithStoreRunsTheCheckOnALeaseAndReleasesIt() {
    Config result = new Config(new ArrayList<>());
    Map<String, String> store = Map.of("name", "check-with-store");
    StoreSettings.checkWithStore(
        result,
        "memory",
        store,
        lease -> {
          lease.manager().createQueue(io.queuebridge.core.QueueConfig.durable("q").build());
          ConfigErrors.add(result, "queue.name", "seen " + lease.manager().listQueues().size());
        });
    assertThat(errors(result, "queue.name")).containsExactly("seen 1");
    // released: the next lease opens a new, empty memory store of that name
    try (SharedStores.Lease again = StoreSettings.acquire("memory", store)) {
      assertThat(again.manager().listQueues()).isEmpty();
    }
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
