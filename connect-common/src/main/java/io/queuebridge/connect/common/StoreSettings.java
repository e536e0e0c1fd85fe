package io.queuebridge.connect.common;

import io.queuebridge.core.SharedStores;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.QueueStores;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigDef.Importance;
import org.apache.kafka.common.config.ConfigDef.Type;
import org.apache.kafka.common.config.ConfigDef.Width;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.connect.errors.ConnectException;

/**
 * The {@code queue.store.*} keys, the same in both connectors: {@code queue.store.type} picks the
 * {@link QueueStoreProvider}, and every other {@code queue.store.*} key is handed to the provider
 * without the prefix ({@code queue.store.url} becomes {@code url}). Three are defined in the
 * connectors' {@link ConfigDef}s so that they are documented and typed: the type, the file store's
 * {@code path}, and {@code password}, a {@link Type#PASSWORD} (Connect shows it as {@code [hidden]}
 * in logs and validation answers; this class keeps it out of the messages the connectors compose,
 * see {@link #redact}).
 *
 * <p>Stateless and thread-safe. Nothing here opens a store except {@link #acquire} and {@link
 * #checkWithStore}.
 */
public final class StoreSettings {
  /** The ConfigDef group of the store keys. */
  public static final String GROUP = "Store";

  public static final String PREFIX = "queue.store.";

  public static final String TYPE_CONFIG = PREFIX + "type";
  public static final String TYPE_DEFAULT = "file";
  private static final String TYPE_DOC =
      "The store provider: 'file' (a directory on this worker's disk: a single worker only),"
          + " 'postgres' (a PostgreSQL database that every worker and application shares: a"
          + " distributed Connect cluster), 'memory' (this JVM only, not durable: the sink refuses"
          + " it) or the name of any installed provider. Every other queue.store.* key is passed"
          + " to the provider without the prefix (e.g. queue.store.url as url).";

  public static final String PATH_CONFIG = PREFIX + "path";
  private static final String PATH_DOC =
      "Directory of the 'file' store. Connectors naming the same directory in one worker share"
          + " one open store.";

  /** The provider key of {@link #PASSWORD_CONFIG}. */
  public static final String PASSWORD_KEY = "password";

  public static final String PASSWORD_CONFIG = PREFIX + PASSWORD_KEY;
  private static final String PASSWORD_DOC =
      "Password of the store's database user (the 'postgres' store's password), passed to the"
          + " provider as 'password'. Never logged and shown as [hidden] by validation. Connect"
          + " keeps connector configs in its config topic and returns them from GET"
          + " /connectors/<name>/config as written: put a config provider reference here (e.g."
          + " ${file:/etc/kafka/secrets.properties:pg.password}) rather than the password itself.";

  /** Provider keys whose values never appear in a message: {@code password}. */
  private static final Set<String> SECRET_KEYS = Set.of(PASSWORD_KEY);

  private static final String HIDDEN = "[hidden]";

  /** The framework's error tolerance key, read raw (its meaning stays Connect's). */
  public static final String ERRORS_TOLERANCE_CONFIG = "errors.tolerance";

  private StoreSettings() {}

  /**
   * Defines {@code queue.store.type}, {@code queue.store.path} and {@code queue.store.password} in
   * {@code def}, in the group {@link #GROUP}, in that order.
   *
   * @throws ConfigException if {@code def} already defines one of them
   */
  public static void define(ConfigDef def) {
    int order = 0;
    def.define(
        TYPE_CONFIG,
        Type.STRING,
        TYPE_DEFAULT,
        new TypeValidator(),
        Importance.HIGH,
        TYPE_DOC,
        GROUP,
        ++order,
        Width.SHORT,
        "Store type",
        new TypeRecommender());
    def.define(
        PATH_CONFIG,
        Type.STRING,
        null,
        Importance.HIGH,
        PATH_DOC,
        GROUP,
        ++order,
        Width.LONG,
        "Store directory");
    def.define(
        PASSWORD_CONFIG,
        Type.PASSWORD,
        null,
        Importance.MEDIUM,
        PASSWORD_DOC,
        GROUP,
        ++order,
        Width.MEDIUM,
        "Store password");
  }

  /**
   * The provider's configuration: every {@code queue.store.*} key of the raw connector properties
   * but the type, without the prefix, sorted by key; keys with a null value are left out. Secrets
   * are included (the provider needs them): never log the result, pass it through {@link #redact}.
   *
   * @param props the raw connector properties (strings, as Connect hands them over); not null
   */
  public static Map<String, String> providerConfig(Map<String, String> props) {
    Map<String, String> out = new TreeMap<>();
    props.forEach(
        (k, v) -> {
          if (k.startsWith(PREFIX) && !k.equals(TYPE_CONFIG) && v != null) {
            out.put(k.substring(PREFIX.length()), v);
          }
        });
    return out;
  }

  /**
   * Whether the framework's {@code errors.tolerance} is {@code all} in the raw connector properties
   * (case and surrounding blanks ignored); false when absent.
   */
  public static boolean toleratesErrors(Map<String, ?> originals) {
    Object v = originals.get(ERRORS_TOLERANCE_CONFIG);
    return v != null && "all".equalsIgnoreCase(v.toString().trim());
  }

  /**
   * {@code text} with every non-empty secret value of {@code providerConfig} replaced by {@code
   * [hidden]}; null stays null. For messages that may quote configuration values (a provider's
   * {@link InvalidConfigException} names the value it refused).
   */
  public static String redact(String text, Map<String, String> providerConfig) {
    if (text == null) {
      return null;
    }
    String out = text;
    for (String key : SECRET_KEYS) {
      String secret = providerConfig.get(key);
      if (secret != null && !secret.isEmpty()) {
        out = out.replace(secret, HIDDEN);
      }
    }
    return out;
  }

  /**
   * A lease on the store ({@link SharedStores#acquire}), failing like it, except that a failure
   * whose messages (the exception's or a cause's) quote a secret of {@code providerConfig} is
   * replaced by a {@link ConnectException} with the redacted message and no cause, so that neither
   * the task's trace in the REST status nor a log shows the secret. Blocks while the store opens.
   *
   * @throws InvalidConfigException for an unknown type or a bad configuration (secrets not quoted)
   * @throws io.queuebridge.core.errors.QueueStoreException if the store cannot be opened
   */
  public static SharedStores.Lease acquire(String type, Map<String, String> providerConfig) {
    try {
      return SharedStores.acquire(type, providerConfig);
    } catch (RuntimeException e) {
      for (Throwable t = e; t != null; t = t.getCause()) {
        String message = t.getMessage();
        if (message != null && !message.equals(redact(message, providerConfig))) {
          throw new ConnectException(
              "cannot open the store: "
                  + redact(e.getMessage(), providerConfig)
                  + " (the cause is left out: it quotes a secret)");
        }
      }
      throw e;
    }
  }

  /**
   * Lets the provider of {@code type} check its own keys without opening anything; a refusal is
   * added to {@code result} on the {@code queue.store.<field>} key it names, secrets redacted.
   *
   * @return whether the provider accepted the configuration
   * @throws InvalidConfigException if no provider of that name is installed (the type's validator
   *     reports that first, so callers validate field by field before)
   */
  public static boolean validateProvider(
      Config result, String type, Map<String, String> providerConfig) {
    try {
      QueueStores.provider(type).validate(providerConfig);
      return true;
    } catch (InvalidConfigException e) {
      ConfigErrors.add(result, PREFIX + e.field(), redact(e.getMessage(), providerConfig));
      return false;
    }
  }

  /**
   * Runs {@code check} on a lease of the store (opened if nobody in this worker holds it yet, and
   * released after); a store that cannot be opened, or a {@link QueueException} that {@code check}
   * lets through, is added to {@code result} on {@code queue.store.type} as "cannot open the store:
   * ...", secrets redacted. Blocks while the store opens.
   */
  public static void checkWithStore(
      Config result,
      String type,
      Map<String, String> providerConfig,
      Consumer<SharedStores.Lease> check) {
    try (SharedStores.Lease lease = acquire(type, providerConfig)) {
      check.accept(lease);
    } catch (QueueException | ConnectException e) {
      ConfigErrors.add(
          result, TYPE_CONFIG, "cannot open the store: " + redact(e.getMessage(), providerConfig));
    }
  }

  /** Accepts the name of an installed store provider. */
  static final class TypeValidator implements ConfigDef.Validator {
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
          value,
          "no store provider of that name is installed; installed: "
              + QueueStores.providers().stream().map(QueueStoreProvider::name).sorted().toList());
    }

    @Override
    public String toString() {
      return "the name of an installed store provider (file, postgres, memory, ...)";
    }
  }

  /** Lists the installed store providers. */
  static final class TypeRecommender implements ConfigDef.Recommender {
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
