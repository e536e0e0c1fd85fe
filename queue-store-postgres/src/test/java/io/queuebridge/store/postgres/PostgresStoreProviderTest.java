package io.queuebridge.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.queuebridge.core.config.QueueConfig;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Configuration validation, identity and secrecy of the {@code postgres} provider. */
class PostgresStoreProviderTest {
  private static final String SECRET = "S3cret-Value-That-Must-Not-Leak";
  private static final String URL = "jdbc:postgresql://db.example:5432/app";

  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();

  private final QueueStoreProvider provider = new PostgresStoreProvider();

  private static Map<String, String> valid() {
    Map<String, String> c = new HashMap<>();
    c.put("url", URL);
    c.put("user", "app");
    c.put("password", SECRET);
    return c;
  }

  private static Map<String, String> with(String key, String value) {
    Map<String, String> c = valid();
    c.put(key, value);
    return c;
  }

  @Test
  void isFoundByServiceLoaderUnderItsName() {
    assertThat(QueueStores.provider("postgres")).isInstanceOf(PostgresStoreProvider.class);
  }

  @Test
  void aValidConfigurationPassesWithDefaults() {
    provider.validate(valid());
    PostgresConfig c = PostgresConfig.parse(Map.of("url", URL));
    assertThat(c.schema()).isEqualTo("queuebridge");
    assertThat(c.poolSize()).isEqualTo(PostgresConfig.DEFAULT_POOL_SIZE);
    assertThat(c.connectTimeoutMs()).isEqualTo(PostgresConfig.DEFAULT_CONNECT_TIMEOUT_MS);
    assertThat(c.pollIntervalMs()).isEqualTo(PostgresConfig.DEFAULT_POLL_INTERVAL_MS);
    assertThat(c.user()).isNull();
    assertThat(c.password()).isNull();
  }

  @Test
  void urlIsRequiredAndMustBeAPostgresJdbcUrl() {
    Map<String, String> none = valid();
    none.remove("url");
    assertInvalid(none, "url", "jdbc:postgresql:");
    assertInvalid(with("url", ""), "url", "jdbc:postgresql:");
    assertInvalid(with("url", "jdbc:mysql://x/y"), "url", "jdbc:postgresql:");
    assertInvalid(with("url", "postgresql://x/y"), "url", "jdbc:postgresql:");
  }

  @Test
  void aUrlCarryingAPasswordIsRefusedWithoutShowingIt() {
    Throwable t =
        catchThrowable(() -> provider.validate(with("url", URL + "?ssl=true&password=" + SECRET)));
    assertThat(t).isInstanceOf(InvalidConfigException.class).hasMessageContaining("password");
    assertThat(((InvalidConfigException) t).field()).isEqualTo("url");
    assertNoSecret(t);
  }

  @Test
  void userMustNotBeBlank() {
    assertInvalid(with("user", " "), "user", "non-blank");
  }

  @Test
  void schemaMustBeASafeLowerCaseIdentifier() {
    for (String bad :
        new String[] {"", "Public", "1abc", "a-b", "a b", "x;drop", "\"q\"", "a".repeat(49)}) {
      assertInvalid(with("schema", bad), "schema", "[a-z0-9_]");
    }
    for (String good : new String[] {"q", "_x", "queue_bridge_2", "a".repeat(48)}) {
      provider.validate(with("schema", good));
    }
  }

  @Test
  void numericKeysAreRangeChecked() {
    assertInvalid(with("pool.size", "0"), "pool.size", "[1, 64]");
    assertInvalid(with("pool.size", "65"), "pool.size", "[1, 64]");
    assertInvalid(with("pool.size", "four"), "pool.size", "[1, 64]");
    assertInvalid(with("connect.timeout.ms", "249"), "connect.timeout.ms", "[250, 600000]");
    assertInvalid(with("connect.timeout.ms", "x"), "connect.timeout.ms", "[250, 600000]");
    assertInvalid(with("poll.interval.ms", "9"), "poll.interval.ms", "[10, 60000]");
    assertInvalid(with("poll.interval.ms", "60001"), "poll.interval.ms", "[10, 60000]");
    provider.validate(with("pool.size", "64"));
    provider.validate(with("connect.timeout.ms", "250"));
    provider.validate(with("poll.interval.ms", "10"));
  }

  @Test
  void unknownKeysAreRefusedWithoutShowingTheirValue() {
    Throwable t = catchThrowable(() -> provider.validate(with("passwd", SECRET)));
    assertThat(t).isInstanceOf(InvalidConfigException.class).hasMessageContaining("passwd");
    assertThat(((InvalidConfigException) t).field()).isEqualTo("passwd");
    assertNoSecret(t);
  }

  @Test
  void identityIsTheLocationUserAndACredentialFingerprintNeverTheSecret() {
    String id = provider.identity(valid());
    assertThat(id).startsWith("postgres:" + URL + "#queuebridge");
    assertThat(id).doesNotContain(SECRET);
    assertThat(provider.identity(valid())).as("stable in the process").isEqualTo(id);
    assertThat(provider.identity(with("url", URL + "?ssl=true")))
        .as("URL parameters do not name another store")
        .isEqualTo(id);
    assertThat(provider.identity(with("schema", "other"))).startsWith("postgres:" + URL + "#other");
    assertThat(provider.identity(with("user", "someone-else")))
        .as("other credentials never share an open store")
        .isNotEqualTo(id);
    assertThat(provider.identity(with("password", SECRET + "-wrong")))
        .as("a wrong password must fail on its own, not borrow the open pool")
        .isNotEqualTo(id);
  }

  @Test
  void thePasswordNeverAppearsInDescriptionsOrToString() {
    // the role is given in the URL so that the description holds nothing equal to the password
    Map<String, String> config = new HashMap<>();
    config.put("url", database.url() + "?user=" + database.user());
    config.put("password", database.password());
    config.put("schema", "secrecy");
    try (Storage storage = QueueStores.open("postgres", config)) {
      storage.queues().createQueue(QueueConfig.durable("q").build());
      for (Object part : new Object[] {storage, storage.queues(), storage.groups()}) {
        assertThat(part.toString()).doesNotContain(database.password());
      }
      assertThat(storage.description())
          .doesNotContain(database.password())
          .isEqualTo("postgres:" + database.url() + "#secrecy");
      assertThat(PostgresConfig.parse(config).toString()).doesNotContain(database.password());
    }
  }

  @Test
  void aWrongPasswordFailsRetriablyAtOnceWithoutShowingIt() {
    Map<String, String> config = database.config("wrong_password");
    config.put("password", SECRET);
    // the pool would retry a refused login until this timeout; the open must not wait for it
    config.put("connect.timeout.ms", "120000");
    long start = System.nanoTime();
    Throwable t = catchThrowable(() -> QueueStores.open("postgres", config));
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(60));
    assertThat(t)
        .isInstanceOf(QueueStoreException.class)
        .hasMessageContaining("cannot connect")
        .hasMessageContaining(database.name())
        .hasMessageContaining("SQLSTATE 28");
    assertNoSecret(t);
  }

  private void assertInvalid(Map<String, String> config, String key, String expectation) {
    Throwable t = catchThrowable(() -> provider.validate(config));
    assertThat(t)
        .as("config %s", config.get(key))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining(key)
        .hasMessageContaining(expectation);
    assertThat(((InvalidConfigException) t).field()).isEqualTo(key);
    assertNoSecret(t);
    assertThatThrownBy(() -> provider.open(config)).isInstanceOf(InvalidConfigException.class);
  }

  /** Neither the throwable, its causes nor their suppressed exceptions mention the secret. */
  private static void assertNoSecret(Throwable t) {
    for (Throwable x = t; x != null; x = x.getCause()) {
      assertThat(String.valueOf(x.getMessage())).doesNotContain(SECRET);
      assertThat(x.toString()).doesNotContain(SECRET);
      for (Throwable s : x.getSuppressed()) {
        assertNoSecret(s);
      }
      if (x instanceof InvalidConfigException ice) {
        assertThat(String.valueOf(ice.value())).doesNotContain(SECRET);
      }
    }
  }
}
