package io.queuebridge.connect.common;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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

  /**
   * Drops Kafka's second message on a key whose value could not be parsed: {@code ConfigDef}
   * reports the parse error ("Invalid value abc ...: Not a number of type LONG") and then runs the
   * key's validator on null ("Invalid value null ...: Value must be non-null"), which names neither
   * the value given nor what was expected. Only for keys {@code props} gives a value, and only when
   * another message stays.
   */
  public static void dropNullFollowUps(Config config, Map<String, String> props) {
    for (ConfigValue v : config.configValues()) {
      if (props.get(v.name()) == null || v.errorMessages().size() < 2) {
        continue;
      }
      List<String> kept = new ArrayList<>();
      for (String m : v.errorMessages()) {
        if (!m.startsWith("Invalid value null for configuration ")) {
          kept.add(m);
        }
      }
      if (!kept.isEmpty()) {
        v.errorMessages().retainAll(kept); // Kafka's own list, mutable by design (addErrorMessage)
      }
    }
  }
}
