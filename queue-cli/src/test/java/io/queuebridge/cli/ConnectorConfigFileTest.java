package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A connector config file read whole: its name and keys beside the store they name. */
class ConnectorConfigFileTest {
  @TempDir Path dir;

  @Test
  void theNameBesideTheConfigAndEveryKeyAsText() throws IOException {
    Path file =
        Files.writeString(
            dir.resolve("sink.json"),
            """
            {"name": "orders-sink", "config": {"name": "ignored", "topics": " a, b ,,c ",
              "tasks.max": 2, "queue.write.pipelined": true, "nested": {"x": 1}, "none": null,
              "queue.store.type": "memory"}}
            """);

    ConnectorConfigFile.Connector c = ConnectorConfigFile.readConnector(file);

    assertThat(c.name()).isEqualTo("orders-sink");
    assertThat(c.list("topics")).isEqualTo(List.of("a", "b", "c"));
    assertThat(c.get("tasks.max")).isEqualTo("2");
    assertThat(c.get("queue.write.pipelined")).isEqualTo("true");
    assertThat(c.config()).doesNotContainKeys("nested", "none");
    assertThat(c.get("absent")).isNull();
    assertThat(c.store()).isEqualTo(new StoreSpec("memory", Map.of()));
  }

  @Test
  void theNameInsideABareConfigMapAndReferencesResolvedOnRead() throws IOException {
    Path props = Files.writeString(dir.resolve("k.properties"), "group=archivers\n");
    Path file =
        Files.writeString(
            dir.resolve("source.json"),
            "{\"name\": \"src\", \"queue.group\": \"${file:%s:group}\", \"queue.filter\": \" \"}"
                .formatted(props));

    ConnectorConfigFile.Connector c = ConnectorConfigFile.readConnector(file);

    assertThat(c.name()).isEqualTo("src");
    assertThat(c.get("queue.group")).isEqualTo("archivers");
    assertThat(c.get("queue.filter")).as("blank is absent").isNull();
    assertThat(c.store().type()).isEqualTo("file");
  }
}
