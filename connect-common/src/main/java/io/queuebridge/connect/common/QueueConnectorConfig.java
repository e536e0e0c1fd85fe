package io.queuebridge.connect.common;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.SharedStores;
import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.QueueStores;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.ConfigException;

/**
 * The keys both connectors have, each defined, documented and validated here once, with their typed
 * accessors: the store keys ({@code queue.store.*}), {@code queue.retry.backoff.ms}, and the
 * framework's {@code errors.tolerance}, read raw.
 *
 * <p>A connector's config extends this class and builds its {@link ConfigDef} with its own keys,
 * calling {@link #defineStoreKeys} and {@link #defineRetryBackoff} where the shared keys stand in
 * its groups, so that each connector keeps its own order of groups and keys.
 *
 * <p>{@code queue.store.type} picks the {@link QueueStoreProvider}; every other {@code
 * queue.store.*} key is handed to the provider without the prefix (see {@link StoreSettings}).
 * Three are defined so that they are documented and typed: the type, the file store's {@code path},
 * and {@code password}, a {@link Type#PASSWORD} (Connect shows it as {@code [hidden]} in logs and
 * validation answers).
 *
 * <p>Immutable and thread-safe once built.
 */
public abstract class QueueConnectorConfig extends AbstractConfig {
  /** The ConfigDef group of the store keys. */
  /** The framework's connector name key. */
  public static final String NAME_CONFIG = "name";

  /** Internal: the task's index among the connector's tasks (its metrics' {@code task} tag). */
  public static final String TASK_INDEX_CONFIG = "task.index";

  public static final String STORE_GROUP = "Store";

  /** The ConfigDef group of {@code queue.retry.backoff.ms} (and of other flow keys). */
  public static final String FLOW_GROUP = "Flow control";

  public static final String STORE_PREFIX = StoreSettings.PREFIX;

  public static final String STORE_TYPE_CONFIG = StoreSettings.TYPE_CONFIG;
  public static final String STORE_TYPE_DEFAULT = "file";
  private static final String STORE_TYPE_DOC =
      "The store provider: 'file' (a directory on this worker's disk: a single worker only),"
          + " 'postgres' (a PostgreSQL database that every worker and application shares: a"
          + " distributed Connect cluster), 'memory' (this JVM only, not durable: the sink refuses"
          + " it) or the name of any installed provider. Every other queue.store.* key is passed"
          + " to the provider without the prefix (e.g. queue.store.url as url).";

  public static final String STORE_PATH_CONFIG = STORE_PREFIX + "path";
  private static final String STORE_PATH_DOC =
      "Directory of the 'file' store. Connectors naming the same directory in one worker share"
          + " one open store.";

  public static final String STORE_PASSWORD_CONFIG = StoreSettings.PASSWORD_CONFIG;
  private static final String STORE_PASSWORD_DOC =
      "Password of the store's database user (the 'postgres' store's password), passed to the"
          + " provider as 'password'. Never logged and shown as [hidden] by validation. Connect"
          + " keeps connector configs in its config topic and returns them from GET"
          + " /connectors/<name>/config as written: put a config provider reference here (e.g."
          + " ${file:/etc/kafka/secrets.properties:pg.password}) rather than the password itself.";

  public static final String RETRY_BACKOFF_MS_CONFIG = "queue.retry.backoff.ms";
  public static final long RETRY_BACKOFF_MS_DEFAULT = 1_000;

  public static final String RETRY_TIMEOUT_MS_CONFIG = "queue.retry.timeout.ms";
  public static final long RETRY_TIMEOUT_MS_DEFAULT = 300_000;
  private static final String RETRY_TIMEOUT_MS_DOC =
      "The task's retry budget for transient store errors (an unreachable database, a failed"
          + " fsync): how long, from the first failure of an unbroken run, the task keeps retrying"
          + " every queue.retry.backoff.ms; the first failure after that fails the task with the"
          + " store's name and the last error. A store call that succeeds ends the run. A task"
          + " restart resumes exactly where the store says. Back-pressure (a full queue or pending"
          + " entry list) is not a failure and never counts. -1 = retry forever.";

  /** The framework's error tolerance key, read raw (its meaning stays Connect's). */
  public static final String ERRORS_TOLERANCE_CONFIG = "errors.tolerance";

  /**
   * Parses {@code props} against {@code definition}, which a subclass built with the shared keys.
   *
   * @throws ConfigException naming the first bad key
   */
  protected QueueConnectorConfig(ConfigDef definition, Map<String, String> props) {
    super(definition, props);
  }

  /**
   * Defines {@code queue.store.type}, {@code queue.store.path} and {@code queue.store.password} in
   * {@code def}, in the group {@link #STORE_GROUP}, in that order.
   *
   * @throws ConfigException if {@code def} already defines one of them
   */
  protected static void defineStoreKeys(ConfigDef def) {
    int order = 0;
    def.define(
        STORE_TYPE_CONFIG,
        Type.STRING,
        STORE_TYPE_DEFAULT,
        new StoreTypeValidator(),
        Importance.HIGH,
        STORE_TYPE_DOC,
        STORE_GROUP,
        ++order,
        Width.SHORT,
        "Store type",
        new StoreTypeRecommender());
    def.define(
        STORE_PATH_CONFIG,
        Type.STRING,
        null,
        ConfigValidators.absolutePathOrNone(),
        Importance.HIGH,
        STORE_PATH_DOC,
        STORE_GROUP,
        ++order,
        Width.LONG,
        "Store directory");
    def.define(
        STORE_PASSWORD_CONFIG,
        Type.PASSWORD,
        null,
        Importance.MEDIUM,
        STORE_PASSWORD_DOC,
        STORE_GROUP,
        ++order,
        Width.MEDIUM,
        "Store password");
  }

  /**
   * Defines {@code queue.retry.backoff.ms} in {@code def}, in the group {@link #FLOW_GROUP} at
   * {@code orderInGroup}: milliseconds from 0 to 10 minutes, {@value #RETRY_BACKOFF_MS_DEFAULT} by
   * default. {@code doc} says what the connector does during the backoff; not null.
   *
   * @throws ConfigException if {@code def} already defines it
   */
  protected static void defineRetryBackoff(ConfigDef def, int orderInGroup, String doc) {
    def.define(
        RETRY_BACKOFF_MS_CONFIG,
        Type.LONG,
        RETRY_BACKOFF_MS_DEFAULT,
        ConfigDef.Range.between(0, Duration.ofMinutes(10).toMillis()),
        Importance.LOW,
        doc,
        FLOW_GROUP,
        orderInGroup,
        Width.SHORT,
        "Retry backoff (ms)");
  }

  /**
   * Defines {@code queue.retry.timeout.ms} in {@code def}, in the group {@link #FLOW_GROUP} at
   * {@code orderInGroup}: milliseconds, -1 (forever) or more, {@value #RETRY_TIMEOUT_MS_DEFAULT} by
   * default.
   *
   * @throws ConfigException if {@code def} already defines it
   */
  protected static void defineRetryTimeout(ConfigDef def, int orderInGroup) {
    def.define(
        RETRY_TIMEOUT_MS_CONFIG,
        Type.LONG,
        RETRY_TIMEOUT_MS_DEFAULT,
        ConfigDef.Range.atLeast(-1),
        Importance.LOW,
        RETRY_TIMEOUT_MS_DOC,
        FLOW_GROUP,
        orderInGroup,
        Width.SHORT,
        "Retry budget (ms)");
  }

  /**
   * Defines the internal key {@value #TASK_INDEX_CONFIG} in {@code def}: the index the connector
   * gives each task config it hands out (0 by default).
   *
   * @throws ConfigException if {@code def} already defines it
   */
  protected static void defineTaskIndex(ConfigDef def) {
    def.defineInternal(
        TASK_INDEX_CONFIG,
        Type.INT,
        0,
        ConfigDef.Range.atLeast(0),
        Importance.LOW,
        "The task's index among the connector's tasks; set by the connector.");
  }

  /** The connector's name ({@code name}); "" when absent (only in unit tests). */
  public String connectorName() {
    Object name = originals().get(NAME_CONFIG);
    return name == null ? "" : name.toString();
  }

  /** This task's index ({@value #TASK_INDEX_CONFIG}, set by the connector in each task config). */
  public int taskIndex() {
    return getInt(TASK_INDEX_CONFIG);
  }

  public String storeType() {
    return getString(STORE_TYPE_CONFIG);
  }

  /**
   * The store provider's configuration: every {@code queue.store.*} key but the type, without the
   * prefix, in key order (see {@link StoreSettings#providerConfig}). Holds secrets: never log it.
   */
  public Map<String, String> storeConfig() {
    return StoreSettings.providerConfig(originalsStrings());
  }

  /**
   * A lease on the configured store ({@link StoreSettings#acquire}): opened if nobody in this
   * worker holds it yet. Blocks while the store opens; close the lease to release it.
   *
   * @throws io.queuebridge.core.errors.InvalidConfigException for an unknown type or a bad
   *     configuration (secrets not quoted)
   * @throws io.queuebridge.core.errors.QueueStoreException if the store cannot be opened
   * @throws org.apache.kafka.connect.errors.ConnectException if the failure quoted a secret
   */
  public SharedStores.Lease acquireStore() {
    return StoreSettings.acquire(storeType(), storeConfig());
  }

  /**
   * For a connector's {@code validate()}: lets the store provider check the {@code queue.store.*}
   * keys without opening anything, adding a refusal to {@code result} on the key it names (see
   * {@link StoreSettings#validateProvider}).
   *
   * @return whether the provider accepted them
   */
  public boolean validateStoreKeys(Config result) {
    return StoreSettings.validateProvider(result, storeType(), storeConfig());
  }

  /**
   * For a connector's {@code validate()}: runs {@code check} on an unstarted manager over the
   * configured store opened read-only, which creates and changes nothing, adding a store that
   * cannot be opened to {@code result}; a store that does not exist yet is not checked (see {@link
   * StoreSettings#checkWithStore}). Call it only after {@link #validateStoreKeys} accepted the
   * keys.
   */
  public void checkWithStore(Config result, Consumer<QueueManager> check) {
    StoreSettings.checkWithStore(result, storeType(), storeConfig(), check);
  }

  public Duration retryBackoff() {
    return Duration.ofMillis(getLong(RETRY_BACKOFF_MS_CONFIG));
  }

  /** {@code queue.retry.timeout.ms}; null for -1 (retry forever). */
  public Duration retryTimeout() {
    long ms = getLong(RETRY_TIMEOUT_MS_CONFIG);
    return ms < 0 ? null : Duration.ofMillis(ms);
  }

  /** A fresh retry budget of {@code queue.retry.timeout.ms} on {@code clock}. */
  public RetryBudget retryBudget(Clock clock) {
    return new RetryBudget(RETRY_TIMEOUT_MS_CONFIG, retryTimeout(), clock);
  }

  /** Whether the framework's {@code errors.tolerance} is {@code all} (from the raw props). */
  public boolean toleratesErrors() {
    return toleratesErrors(originals());
  }

  /**
   * Whether {@code errors.tolerance} is {@code all} in the raw connector properties (case and
   * surrounding blanks ignored); false when absent.
   */
  static boolean toleratesErrors(Map<String, ?> originals) {
    Object v = originals.get(ERRORS_TOLERANCE_CONFIG);
    return v != null && "all".equalsIgnoreCase(v.toString().trim());
  }

  /** Accepts the name of an installed store provider. */
  static final class StoreTypeValidator implements ConfigDef.Validator {
    @Override
    public void ensureValid(String name, Object value) {
      String type = (String) value;
      for (QueueStoreProvider p : QueueStores.providers()) {
        if (p.name().equals(type)) {
          return;
        }
      }
      throw new ConfigException(
          name,
          ConfigValidators.shown(value),
          "no store provider of that name is installed; installed: "
              + QueueStores.providers().stream().map(QueueStoreProvider::name).sorted().toList());
    }

    @Override
    public String toString() {
      return "the name of an installed store provider (file, postgres, memory, ...)";
    }
  }

  /** Lists the installed store providers. */
  static final class StoreTypeRecommender implements ConfigDef.Recommender {
    @Override
    public List<Object> validValues(String name, Map<String, Object> parsedConfig) {
      return QueueStores.providers().stream().map(p -> (Object) p.name()).sorted().toList();
    }

    @Override
    public boolean visible(String name, Map<String, Object> parsedConfig) {
      return true;
    }
  }
}
