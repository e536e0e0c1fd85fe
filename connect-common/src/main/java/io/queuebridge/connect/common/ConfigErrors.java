package io.queuebridge.connect.common;

import java.util.Optional;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigValue;

/**
 * Errors in the {@link Config} a connector's {@code validate()} answers with (what {@code PUT
 * /connector-plugins/<class>/config/validate} shows per key). Not thread-safe: a {@link Config} is
 * built by one thread.
 */
public final class ConfigErrors {
  private ConfigErrors() {}

  /** Whether any key of {@code config} has an error. */
  public static boolean any(Config config) {
    return config.configValues().stream().anyMatch(v -> !v.errorMessages().isEmpty());
  }

  /**
   * Adds {@code message} to the errors of {@code key}, adding the key (without a value) if the
   * config has none of that name, e.g. a provider key that no ConfigDef defines.
   */
  public static void add(Config config, String key, String message) {
    Optional<ConfigValue> value =
        config.configValues().stream().filter(v -> v.name().equals(key)).findFirst();
    if (value.isPresent()) {
      value.get().addErrorMessage(message);
    } else {
      ConfigValue v = new ConfigValue(key);
      v.addErrorMessage(message);
      config.configValues().add(v);
    }
  }
}
