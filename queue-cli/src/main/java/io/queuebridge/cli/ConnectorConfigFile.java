package io.queuebridge.cli;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
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
 * Keys other than the store's are ignored.
 */
final class ConnectorConfigFile {
  static final String PREFIX = "queue.store.";
  static final String TYPE_KEY = PREFIX + "type";
  static final String DEFAULT_TYPE = "file";

  private static final ObjectMapper JSON = new ObjectMapper();

  private ConnectorConfigFile() {}

  /**
   * The store {@code file} names.
   *
   * @throws CliException if the file cannot be read, is not JSON, is not a config object, or a
   *     store value is not a string or holds a reference that cannot be resolved
   */
  static StoreSpec read(Path file) {
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
    return storeOf(config, file);
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
