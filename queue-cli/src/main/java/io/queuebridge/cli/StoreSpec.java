package io.queuebridge.cli;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A store as the command line names it: the provider's name ({@code queue.store.type}) and the
 * provider's own keys ({@code path}, {@code url}, ...), config provider references already
 * resolved. The configuration may hold a secret ({@code password}): show it only through {@link
 * #redact}.
 *
 * @param type the store provider's name
 * @param config the provider's configuration, sorted by key
 */
record StoreSpec(String type, Map<String, String> config) {
  /** The provider key whose value never appears in output (as in the connectors). */
  static final String PASSWORD_KEY = "password";

  private static final String HIDDEN = "[hidden]";

  StoreSpec {
    Objects.requireNonNull(type, "type");
    config = java.util.Collections.unmodifiableMap(new TreeMap<>(config));
  }

  /** {@code text} with the password's value, if there is one, replaced by {@code [hidden]}. */
  String redact(String text) {
    String secret = config.get(PASSWORD_KEY);
    if (text == null || secret == null || secret.isEmpty()) {
      return text;
    }
    return text.replace(secret, HIDDEN);
  }
}
