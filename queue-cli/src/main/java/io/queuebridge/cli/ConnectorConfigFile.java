package io.queuebridge.cli;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The store a connector config file names, read the way the connectors read it: {@code
 * queue.store.type} picks the provider ({@code file} when absent, the connectors' default) and
 * every other {@code queue.store.*} key goes to the provider without the prefix ({@code
 * queue.store.url} becomes {@code url}); keys with a null value are left out. The same mapping as
 * connect-common's {@code StoreSettings.providerConfig}, written again here because that class is
 * built on Kafka Connect's API, which the command line does not carry.
 *
 * <p>The file is the JSON posted to Connect: a bare config map, or {@code {"name": ..., "config":
 * {...}}}. Values are strings as Connect keeps them (a number or boolean is taken as its text);
 * {@code ${file:PATH:KEY}} references in the store values are resolved ({@link ConfigProviders}).
 * Keys other than the store's are ignored by {@link #read}; {@link #readConnector} keeps them for
 * the commands that read the connector's own keys ({@code lag}).
 */
final class ConnectorConfigFile {
  static final String PREFIX = "queue.store.";
  static final String TYPE_KEY = PREFIX + "type";
  static final String DEFAULT_TYPE = "file";

  /** The connector's name: Connect's key, beside {@code config} or inside it. */
  static final String NAME_KEY = "name";

  private static final ObjectMapper JSON = new ObjectMapper();

  private ConnectorConfigFile() {}

  /**
   * A connector config file: the connector's name, its keys, and the store they name.
   *
   * @param file the file, for messages
   * @param name the connector's name ({@code name} beside or inside {@code config}); null when the
   *     file has none
   * @param config every key whose value is a string, number or boolean, as text and unresolved;
   *     keys with a null value are left out
   * @param store the store the {@code queue.store.*} keys name, references resolved
   */
  record Connector(Path file, String name, Map<String, String> config, StoreSpec store) {
    Connector {
      config = Collections.unmodifiableMap(new TreeMap<>(config));
    }

    /**
     * The value of {@code key}, its {@code ${file:PATH:KEY}} references resolved, trimmed; null
     * when the key is absent or blank.
     *
     * @throws CliException if a reference cannot be resolved
     */
    String get(String key) {
      String value = config.get(key);
      if (value == null) {
        return null;
      }
      String resolved = ConfigProviders.resolve(key + " in " + file, value).strip();
      return resolved.isEmpty() ? null : resolved;
    }

    /** The comma-separated list {@code key} holds, each entry trimmed, empty ones left out. */
    List<String> list(String key) {
      String value = get(key);
      if (value == null) {
        return List.of();
      }
      return Arrays.stream(value.split(",")).map(String::strip).filter(v -> !v.isEmpty()).toList();
    }
  }

  /**
   * The store {@code file} names.
   *
   * @throws CliException if the file cannot be read, is not JSON, is not a config object, or a
   *     store value is not a string or holds a reference that cannot be resolved
   */
  static StoreSpec read(Path file) {
    return readConnector(file).store();
  }

  /**
   * The connector {@code file} configures.
   *
   * @throws CliException as {@link #read} does
   */
  static Connector readConnector(Path file) {
    JsonNode root;
    try {
      root = JSON.readTree(Files.readAllBytes(file));
    } catch (NoSuchFileException e) {
      throw new CliException("--config " + file + ": the file does not exist");
    } catch (JsonProcessingException e) {
      JsonLocation at = e.getLocation();
      throw new CliException(
          "--config "
              + file
              + " is not JSON: "
              + e.getOriginalMessage().replace('\n', ' ')
              + (at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr())
              + " (expected a connector config as posted to Connect)");
    } catch (IOException e) {
      throw new CliException("--config " + file + ": cannot read the file (" + e + ")");
    }
    if (root == null || root.isMissingNode()) {
      throw new CliException(
          "--config " + file + " is empty (expected a connector config as posted to Connect)");
    }
    JsonNode config = root.has("config") ? root.get("config") : root;
    if (!config.isObject()) {
      throw new CliException(
          "--config "
              + file
              + ": holds a JSON "
              + kind(config)
              + " (expected a config object, or {\"name\": ..., \"config\": {...}})");
    }
    Map<String, String> keys = new TreeMap<>();
    for (Map.Entry<String, JsonNode> field : config.properties()) {
      if (field.getValue().isValueNode() && !field.getValue().isNull()) {
        keys.put(field.getKey(), field.getValue().asText());
      }
    }
    JsonNode name = root != config && root.hasNonNull(NAME_KEY) ? root.get(NAME_KEY) : null;
    String connectorName = name != null && name.isValueNode() ? name.asText() : keys.get(NAME_KEY);
    if (connectorName != null && connectorName.isBlank()) {
      connectorName = null;
    }
    return new Connector(file, connectorName, keys, storeOf(config, file));
  }

  private static StoreSpec storeOf(JsonNode config, Path file) {
    String type = DEFAULT_TYPE;
    Map<String, String> providerConfig = new TreeMap<>();
    for (Map.Entry<String, JsonNode> field : config.properties()) {
      String key = field.getKey();
      JsonNode value = field.getValue();
      if (!key.startsWith(PREFIX) || value.isNull()) {
        continue;
      }
      String where = key + " in " + file;
      if (!value.isValueNode()) {
        throw new CliException(where + ": a JSON " + kind(value) + " (expected a string)");
      }
      String resolved = ConfigProviders.resolve(where, value.asText());
      if (key.equals(TYPE_KEY)) {
        type = resolved;
      } else {
        providerConfig.put(key.substring(PREFIX.length()), resolved);
      }
    }
    return new StoreSpec(type, providerConfig);
  }

  private static String kind(JsonNode node) {
    return node.getNodeType().name().toLowerCase(Locale.ROOT);
  }
}
