package io.queuebridge.cli;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Resolves the config provider references a store value may hold, the way a Connect worker with
 * {@code config.providers=file} resolves them: {@code ${file:PATH:KEY}} is the value of {@code KEY}
 * in the Java properties file {@code PATH} (read as UTF-8, like Kafka's {@code
 * FileConfigProvider}). Other providers are refused, and so is an example config's placeholder such
 * as {@code ${STORE_DIR}} left unreplaced.
 */
final class ConfigProviders {
  /** Kafka's variable syntax: {@code ${provider:[path:]key}}. */
  private static final Pattern REFERENCE =
      Pattern.compile("\\$\\{([^}]*?):(([^}]*?):)?([^}]*?)\\}");

  /** A placeholder of the example connector configs: {@code ${NAME}}, no colon. */
  private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}");

  private ConfigProviders() {}

  /**
   * {@code value} with every {@code ${file:PATH:KEY}} replaced by what it names.
   *
   * @param where what holds the value, for messages ({@code queue.store.password in sink.json})
   * @throws CliException naming {@code where} and the reference when the file or the key is
   *     missing, the provider is not {@code file}, or the value holds an unreplaced placeholder
   */
  static String resolve(String where, String value) {
    Matcher placeholder = PLACEHOLDER.matcher(value);
    if (placeholder.find()) {
      throw new CliException(
          where
              + ": "
              + placeholder.group()
              + " is a placeholder, not a value (expected it replaced, as examples/README.md"
              + " shows)");
    }
    Matcher m = REFERENCE.matcher(value);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String provider = m.group(1);
      String path = m.group(3);
      String key = m.group(4);
      if (!provider.equals("file") || path == null) {
        throw new CliException(
            where
                + ": "
                + m.group()
                + " is not supported (expected ${file:PATH:KEY}, the only config provider the"
                + " command line resolves)");
      }
      m.appendReplacement(out, Matcher.quoteReplacement(read(where, m.group(), path, key)));
    }
    m.appendTail(out);
    return out.toString();
  }

  private static String read(String where, String reference, String path, String key) {
    Properties props = new Properties();
    try (Reader in = Files.newBufferedReader(Path.of(path), StandardCharsets.UTF_8)) {
      props.load(in);
    } catch (NoSuchFileException e) {
      throw new CliException(where + ": " + reference + ": the file " + path + " does not exist");
    } catch (IOException | IllegalArgumentException e) {
      throw new CliException(
          where + ": " + reference + ": cannot read the properties file " + path + " (" + e + ")");
    }
    String resolved = props.getProperty(key);
    if (resolved == null) {
      throw new CliException(
          where + ": " + reference + ": the file " + path + " has no key '" + key + "'");
    }
    return resolved;
  }
}
