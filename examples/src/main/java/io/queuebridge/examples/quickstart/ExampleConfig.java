package io.queuebridge.examples.quickstart;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One example connector config file ({@code examples/connectors/*.json}, shipped in the plugin
 * archive's {@code etc/}): the {@code {"name": ..., "config": {...}}} body of {@code POST
 * /connectors}, with {@code ${NAME}} placeholders (upper case, digits, underscores) for what must
 * vary between installations.
 *
 * <p>Placeholders never collide with Connect's config providers, whose references always hold a
 * colon ({@code ${file:/path:key}}), and are left alone here.
 *
 * <p>Immutable and thread-safe.
 */
public final class ExampleConfig {
  /** {@code ${STORE_DIR}}, {@code ${BOOTSTRAP_SERVERS}}, ...: never a config-provider reference. */
  public static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Z][A-Z0-9_]*)}");

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path file;
  private final String text;

  private ExampleConfig(Path file, String text) {
    this.file = file;
    this.text = text;
  }

  /**
   * Reads an example file as it is.
   *
   * @throws UncheckedIOException if it cannot be read
   * @throws IllegalArgumentException if it is not a {@code {"name", "config"}} JSON object
   */
  public static ExampleConfig read(Path file) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read example connector config " + file, e);
    }
    ExampleConfig example = new ExampleConfig(file, text);
    example.parse(text); // fail early on a malformed file
    return example;
  }

  /** The file it was read from. */
  public Path file() {
    return file;
  }

  /** The file's text, unchanged. */
  public String text() {
    return text;
  }

  /** The placeholders the file uses, sorted. */
  public Set<String> placeholders() {
    Set<String> names = new TreeSet<>();
    Matcher m = PLACEHOLDER.matcher(text);
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  /**
   * The file's text with every placeholder replaced by its value, JSON-escaped; nothing else
   * changes.
   *
   * @throws IllegalArgumentException naming the file and the placeholders that have no value
   */
  public String resolve(Map<String, String> values) {
    Objects.requireNonNull(values, "values");
    Set<String> missing = new TreeSet<>(placeholders());
    missing.removeAll(values.keySet());
    if (!missing.isEmpty()) {
      throw new IllegalArgumentException(
          "example connector config "
              + file
              + " uses placeholders without a value: "
              + missing
              + " (values given for "
              + new TreeSet<>(values.keySet())
              + ")");
    }
    Matcher m = PLACEHOLDER.matcher(text);
    StringBuilder out = new StringBuilder(text.length() + 64);
    while (m.find()) {
      m.appendReplacement(out, Matcher.quoteReplacement(jsonEscape(values.get(m.group(1)))));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** The connector's name (the file's {@code name}). */
  public String name() {
    return parse(text).get("name").asText();
  }

  /** The {@code config} object with placeholders resolved, in file order. */
  public Map<String, String> config(Map<String, String> values) {
    Map<String, String> out = new LinkedHashMap<>();
    parse(resolve(values))
        .get("config")
        .properties()
        .forEach(e -> out.put(e.getKey(), e.getValue().asText()));
    return out;
  }

  private JsonNode parse(String json) {
    JsonNode root;
    try {
      root = JSON.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "example connector config " + file + " is not valid JSON: " + e.getOriginalMessage(), e);
    }
    if (root == null
        || !root.isObject()
        || !root.path("name").isTextual()
        || !root.path("config").isObject()) {
      throw new IllegalArgumentException(
          "example connector config "
              + file
              + " must be a JSON object {\"name\": \"...\", \"config\": {...}} (the body of POST"
              + " /connectors)");
    }
    return root;
  }

  private static String jsonEscape(String value) {
    try {
      String quoted = JSON.writeValueAsString(value);
      return quoted.substring(1, quoted.length() - 1);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public String toString() {
    return file.getFileName().toString();
  }
}
