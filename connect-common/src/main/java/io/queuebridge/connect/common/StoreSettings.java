package io.queuebridge.connect.common;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.SharedStores;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueException;
import io.queuebridge.core.errors.StoreNotFoundException;
import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.connect.errors.ConnectException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code queue.store.*} keys as the store provider sees them, the same in both connectors:
 * {@code queue.store.type} picks the {@link QueueStoreProvider}, and every other {@code
 * queue.store.*} key is handed to the provider without the prefix ({@code queue.store.url} becomes
 * {@code url}). The keys are defined and documented in {@link QueueConnectorConfig}; this class
 * passes them on, opens and checks the store with them, and keeps the secrets among them ({@code
 * password}) out of the messages the connectors compose (see {@link #redact}).
 *
 * <p>Stateless and thread-safe. Nothing here opens a store except {@link #acquire} (writable, for
 * the tasks and the connectors' start) and {@link #checkWithStore} (read-only, for validation).
 */
public final class StoreSettings {
  private static final Logger log = LoggerFactory.getLogger(StoreSettings.class);

  public static final String PREFIX = "queue.store.";

  public static final String TYPE_CONFIG = PREFIX + "type";

  /** The provider key of {@link #PASSWORD_CONFIG}. */
  public static final String PASSWORD_KEY = "password";

  public static final String PASSWORD_CONFIG = PREFIX + PASSWORD_KEY;

  /** Provider keys whose values never appear in a message: {@code password}. */
  private static final Set<String> SECRET_KEYS = Set.of(PASSWORD_KEY);

  private static final String HIDDEN = "[hidden]";

  private StoreSettings() {}

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
      throw withoutSecrets(e, providerConfig);
    }
  }

  /**
   * {@code e}, unless its messages (the exception's or a cause's) quote a secret of {@code
   * providerConfig}: then a {@link ConnectException} with the redacted message and no cause.
   */
  private static RuntimeException withoutSecrets(
      RuntimeException e, Map<String, String> providerConfig) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String message = t.getMessage();
      if (message != null && !message.equals(redact(message, providerConfig))) {
        return new ConnectException(
            "cannot open the store: "
                + redact(e.getMessage(), providerConfig)
                + " (the cause is left out: it quotes a secret)");
      }
    }
    return e;
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
   * Runs {@code check} on an unstarted {@link QueueManager} over the store opened read-only ({@link
   * QueueStoreProvider#openReadOnly}), and closes the store after. The read-only open creates,
   * locks and writes nothing, and works beside a writer of the store in this worker (a task's
   * lease) or in another process; the unstarted manager starts no thread and writes nothing either,
   * so validating changes nothing on disk or in a database.
   *
   * <p>A store that does not exist yet ({@link StoreNotFoundException}: a {@code file} directory
   * that is not there, a {@code postgres} schema not created) is not an error: nothing is stored
   * that a check could find fault with, so {@code check} is not run (the task creates the store
   * when it starts). A provider without a read-only open ({@link UnsupportedOperationException}) is
   * not an error either: the checks that read the store are skipped, with a warning in the log,
   * rather than opening the store writable. A store that cannot be opened is added to {@code
   * result} on {@code queue.store.type} as "cannot open the store: ...", and a {@link
   * QueueException} that {@code check} lets through as "cannot read the store: ...", secrets
   * redacted. Blocks while the store opens.
   *
   * @param check reads through the manager it is given (a write would be refused with {@link
   *     io.queuebridge.core.errors.ReadOnlyStoreException}, and reported); adds its findings to
   *     {@code result}
   */
  public static void checkWithStore(
      Config result,
      String type,
      Map<String, String> providerConfig,
      Consumer<QueueManager> check) {
    Storage storage;
    try {
      storage = QueueStores.provider(type).openReadOnly(providerConfig);
    } catch (StoreNotFoundException e) {
      log.debug(
          "Validation: nothing stored yet, no store checks to run: {}",
          redact(e.getMessage(), providerConfig));
      return;
    } catch (UnsupportedOperationException e) {
      log.warn(
          "Validation skips the checks that read the store: {}",
          redact(e.getMessage(), providerConfig));
      return;
    } catch (QueueException | ConnectException e) {
      ConfigErrors.add(
          result, TYPE_CONFIG, "cannot open the store: " + redact(e.getMessage(), providerConfig));
      return;
    } catch (RuntimeException e) {
      RuntimeException safe = withoutSecrets(e, providerConfig);
      if (safe == e) {
        throw e;
      }
      ConfigErrors.add(result, TYPE_CONFIG, safe.getMessage()); // "cannot open the store: ..."
      return;
    }
    try (storage) {
      check.accept(new QueueManager(storage, QueueManagerConfig.defaults()));
    } catch (QueueException | ConnectException e) {
      ConfigErrors.add(
          result, TYPE_CONFIG, "cannot read the store: " + redact(e.getMessage(), providerConfig));
    }
  }
}
