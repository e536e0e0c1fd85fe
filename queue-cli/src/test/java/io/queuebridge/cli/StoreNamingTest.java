package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one way to name a store: {@code --config FILE}, or {@code --store-type} and {@code --store}.
 */
class StoreNamingTest {
  @TempDir Path dir;

  private Path store;

  @BeforeEach
  void writeAFileStore() {
    store = dir.resolve("store");
    try (Storage storage = QueueStores.file(store)) {
      StoreFixture.fill(storage);
    }
  }

  @Test
  void aConnectorConfigAsPostedToConnect() throws IOException {
    Path config =
        write(
            "sink.json",
            """
            {
              "name": "orders-to-stream",
              "config": {
                "connector.class": "io.queuebridge.connect.sink.QueueSinkConnector",
                "topics": "orders",
                "queue.store.type": "file",
                "queue.store.path": "%s",
                "queue.store.segment.bytes": 1048576,
                "queue.name": "orders"
              }
            }
            """
                .formatted(store));

    Cli.Run run = Cli.run("queues", "--config", config.toString());

    assertThat(run.err()).isEmpty();
    assertThat(QueuesCommandTest.withoutBytes(run.out()))
        .isEqualTo(QueuesCommandTest.FIXTURE_TABLE);
  }

  @Test
  void aBareConfigMapWithTheDefaultStoreType() throws IOException {
    Path config =
        write("bare.json", "{\"queue.store.path\": \"%s\", \"tasks.max\": \"1\"}".formatted(store));

    Cli.Run run = Cli.run("queues", "--config", config.toString());

    assertThat(run.err()).isEmpty();
    assertThat(QueuesCommandTest.withoutBytes(run.out()))
        .isEqualTo(QueuesCommandTest.FIXTURE_TABLE);
  }

  @Test
  void aFileConfigProviderReferenceIsResolved() throws IOException {
    Path secrets = write("store.properties", "store.dir=" + store + "\n");
    Path config =
        write(
            "ref.json",
            "{\"queue.store.type\": \"file\", \"queue.store.path\": \"${file:%s:store.dir}\"}"
                .formatted(secrets));

    Cli.Run run = Cli.run("queues", "--config", config.toString());

    assertThat(run.err()).isEmpty();
    assertThat(QueuesCommandTest.withoutBytes(run.out()))
        .isEqualTo(QueuesCommandTest.FIXTURE_TABLE);
    assertThat(
            QueuesCommandTest.withoutBytes(
                Cli.run(
                        "queues",
                        "--store-type",
                        "file",
                        "--store",
                        "path=${file:" + secrets + ":store.dir}")
                    .out()))
        .as("--store values are resolved too")
        .isEqualTo(QueuesCommandTest.FIXTURE_TABLE);
  }

  @Test
  void aReferenceToAMissingFileOrKeyIsAOneLineErrorNamingIt() throws IOException {
    Path secrets = write("store.properties", "other=1\n");
    Path missingFile =
        write(
            "a.json",
            "{\"queue.store.path\": \"${file:%s:dir}\"}"
                .formatted(dir.resolve("absent.properties")));
    Path missingKey =
        write("b.json", "{\"queue.store.path\": \"${file:%s:dir}\"}".formatted(secrets));

    Cli.Run file = Cli.run("queues", "--config", missingFile.toString());
    Cli.Run key = Cli.run("queues", "--config", missingKey.toString());

    assertThat(file.status()).isEqualTo(1);
    assertThat(file.err())
        .isEqualTo(
            "queue-bridge: queue.store.path in %s: ${file:%s:dir}: the file %s does not exist\n"
                .formatted(
                    missingFile,
                    dir.resolve("absent.properties"),
                    dir.resolve("absent.properties")));
    assertThat(key.status()).isEqualTo(1);
    assertThat(key.err())
        .isEqualTo(
            "queue-bridge: queue.store.path in %s: ${file:%s:dir}: the file %s has no key 'dir'\n"
                .formatted(missingKey, secrets, secrets));
  }

  @Test
  void otherConfigProvidersAndUnreplacedPlaceholdersAreRefused() throws IOException {
    Path env = write("env.json", "{\"queue.store.path\": \"${env:STORE_DIR}\"}");

    Cli.Run run = Cli.run("queues", "--config", env.toString());

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err())
        .isEqualTo(
            "queue-bridge: queue.store.path in %s: ${env:STORE_DIR} is not supported (expected"
                    .formatted(env)
                + " ${file:PATH:KEY}, the only config provider the command line resolves)\n");

    Cli.Run example =
        Cli.run("queues", "--config", "../examples/connectors/sink-protected-stream.json");
    assertThat(example.status()).isEqualTo(1);
    assertThat(example.err())
        .isEqualTo(
            "queue-bridge: queue.store.path in ../examples/connectors/sink-protected-stream.json:"
                + " ${STORE_DIR} is a placeholder, not a value (expected it replaced, as"
                + " examples/README.md shows)\n");
  }

  @Test
  void aConfigFileThatIsNotJsonIsAOneLineError() throws IOException {
    Path broken = write("broken.json", "{\"queue.store.type\": \"file\",\n  oops\n}");
    Path array = write("array.json", "[1, 2]");
    Path empty = write("empty.json", "");
    Path nested = write("nested.json", "{\"queue.store.path\": {\"dir\": \"/x\"}}");

    Cli.Run run = Cli.run("queues", "--config", broken.toString());
    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err())
        .hasLineCount(1)
        .startsWith("queue-bridge: --config " + broken + " is not JSON: ")
        .contains("at line 2, column ")
        .endsWith("(expected a connector config as posted to Connect)\n");

    assertThat(Cli.run("queues", "--config", array.toString()).err())
        .isEqualTo(
            "queue-bridge: --config "
                + array
                + ": holds a JSON array (expected a config object, or {\"name\": ..., \"config\":"
                + " {...}})\n");
    assertThat(Cli.run("queues", "--config", empty.toString()).err())
        .isEqualTo(
            "queue-bridge: --config "
                + empty
                + " is empty (expected a connector config as posted to Connect)\n");
    assertThat(Cli.run("queues", "--config", nested.toString()).err())
        .isEqualTo(
            "queue-bridge: queue.store.path in "
                + nested
                + ": a JSON object (expected a string)\n");
    assertThat(Cli.run("queues", "--config", dir.resolve("none.json").toString()).err())
        .isEqualTo(
            "queue-bridge: --config " + dir.resolve("none.json") + ": the file does not exist\n");
  }

  @Test
  void anUnknownStoreTypeIsAOneLineErrorNamingTheInstalledOnes() throws IOException {
    Path config = write("t.json", "{\"queue.store.type\": \"nope\"}");

    Cli.Run byKeys = Cli.run("queues", "--store-type", "nope");
    Cli.Run byFile = Cli.run("queues", "--config", config.toString());

    String expected =
        "queue-bridge: invalid store type: 'nope' (expected one of [file, memory, postgres])\n";
    assertThat(byKeys.status()).isEqualTo(1);
    assertThat(byKeys.err()).isEqualTo(expected);
    assertThat(byFile.err()).isEqualTo(expected);
  }

  @Test
  void aBadStoreKeyIsTheProvidersOneLineErrorWithThePasswordHidden() {
    Cli.Run run = Cli.run("queues", "--store-type", "memory", "--store", "password=s3cret=value");

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err())
        .isEqualTo(
            "queue-bridge: invalid password: '[hidden]' (expected no such key: the memory store"
                + " accepts only 'name')\n");
  }

  @Test
  void theStoreMustBeNamedExactlyOnce() throws IOException {
    Path config = write("c.json", "{}");

    Cli.Run none = Cli.run("queues");
    Cli.Run both = Cli.run("queues", "--config", config.toString(), "--store-type", "memory");
    Cli.Run keysWithoutType = Cli.run("queues", "--store", "path=" + store);

    assertThat(none.status()).isEqualTo(2);
    assertThat(none.err())
        .startsWith(
            "queue-bridge: no store named: give --config FILE, or --store-type TYPE with --store"
                + " KEY=VALUE\n")
        .contains("Try 'queue-bridge queues --help'");
    assertThat(both.status()).isEqualTo(2);
    assertThat(both.err())
        .startsWith(
            "queue-bridge: --config and --store-type/--store both name a store: use one of them\n");
    assertThat(keysWithoutType.status()).isEqualTo(2);
    assertThat(keysWithoutType.err()).startsWith("queue-bridge: --store needs --store-type TYPE\n");
    assertThat(Cli.run("queues", "--store-type", "file", "--store", "path").status())
        .as("a --store without '='")
        .isEqualTo(2);
  }

  private Path write(String name, String content) throws IOException {
    return Files.writeString(dir.resolve(name), content);
  }
}
