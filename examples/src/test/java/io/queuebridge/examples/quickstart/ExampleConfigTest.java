package io.queuebridge.examples.quickstart;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExampleConfigTest {
  @TempDir Path dir;

  private ExampleConfig write(String json) throws IOException {
    Path file = dir.resolve("example.json");
    Files.writeString(file, json);
    return ExampleConfig.read(file);
  }

  @Test
  void resolveReplacesOnlyPlaceholdersAndJsonEscapesTheirValues() throws IOException {
    String json =
        "{\"name\": \"n\", \"config\": {\"queue.store.path\": \"${STORE_DIR}\","
            + " \"secret\": \"${file:/etc/secrets:pw}\", \"other\": \"$STORE_DIR\"}}";
    ExampleConfig example = write(json);

    String resolved = example.resolve(Map.of("STORE_DIR", "C:\\data \"x\""));

    assertThat(resolved).isEqualTo(json.replace("${STORE_DIR}", "C:\\\\data \\\"x\\\""));
    assertThat(example.config(Map.of("STORE_DIR", "C:\\data \"x\"")))
        .containsEntry("queue.store.path", "C:\\data \"x\"")
        .as("config-provider references are Connect's, not placeholders")
        .containsEntry("secret", "${file:/etc/secrets:pw}")
        .containsEntry("other", "$STORE_DIR");
    assertThat(example.placeholders()).containsExactly("STORE_DIR");
    assertThat(example.name()).isEqualTo("n");
  }

  @Test
  void resolveRefusesAPlaceholderWithoutAValueNamingIt() throws IOException {
    ExampleConfig example =
        write("{\"name\": \"n\", \"config\": {\"a\": \"${STORE_DIR}\", \"b\": \"${TOPIC}\"}}");

    assertThatThrownBy(() -> example.resolve(Map.of("STORE_DIR", "/tmp/s")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("example.json")
        .hasMessageContaining("[TOPIC]");
  }

  @Test
  void readRefusesAFileThatIsNotAConnectorCreationBody() throws IOException {
    assertThatThrownBy(() -> write("{\"connector.class\": \"x\"}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("{\"name\": \"...\", \"config\": {...}}");
    assertThatThrownBy(() -> write("{\"name\": \"n\", \"config\": {"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not valid JSON");
  }

  @Test
  void everyShippedExampleIsAValidCreationBodyWithOnlyItsStorePlaceholders() throws IOException {
    Path connectors = Path.of("connectors");
    try (var files = Files.list(connectors)) {
      var examples = files.filter(f -> f.toString().endsWith(".json")).toList();
      assertThat(examples).hasSizeGreaterThanOrEqualTo(6);
      for (Path file : examples) {
        ExampleConfig example = ExampleConfig.read(file);
        Map<String, String> config;
        if (file.getFileName().toString().contains("postgres")) {
          assertThat(example.placeholders())
              .as(file.toString())
              .containsExactly("PG_SECRETS_FILE", "PG_URL", "PG_USER");
          config =
              example.config(
                  Map.of(
                      "PG_URL", "jdbc:postgresql://db:5432/qb",
                      "PG_USER", "queuebridge",
                      "PG_SECRETS_FILE", "/etc/kafka/qb.properties"));
          assertThat(config)
              .as(file.toString())
              .containsEntry("queue.store.type", "postgres")
              .containsEntry("queue.store.url", "jdbc:postgresql://db:5432/qb")
              .containsEntry("queue.store.user", "queuebridge")
              // the password comes from a config provider, never from the file itself
              .containsEntry("queue.store.password", "${file:/etc/kafka/qb.properties:password}")
              .doesNotContainKey("queue.store.path");
        } else {
          assertThat(example.placeholders()).as(file.toString()).containsExactly("STORE_DIR");
          config = example.config(Map.of("STORE_DIR", "/var/lib/queue-bridge"));
          assertThat(config)
              .as(file.toString())
              .containsEntry("queue.store.path", "/var/lib/queue-bridge");
        }
        assertThat(config)
            .as(file.toString())
            .containsKeys("connector.class", "tasks.max")
            .containsEntry(
                "key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter")
            .containsEntry(
                "value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter")
            .containsEntry(
                "header.converter", "org.apache.kafka.connect.converters.ByteArrayConverter");
      }
    }
  }
}
