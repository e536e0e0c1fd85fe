package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.queuebridge.core.errors.StoreLockedException;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A command opens only a file store that exists, and creates nothing; it reads one a writer holds,
 * and is refused changing it.
 */
class FileStoreSafetyTest {
  private static final List<List<String>> EVERY_COMMAND =
      List.of(
          List.of("queues"),
          List.of("describe", "jobs"),
          List.of("groups", "jobs"),
          List.of("pending", "jobs", "workers"),
          List.of("tail", "jobs"),
          List.of("purge", "jobs", "--yes"),
          List.of("delete-group", "jobs", "workers", "--yes"),
          List.of("dlq", "redrive", "$dlq/jobs"),
          List.of("reset-offsets", "jobs", "--group", "workers", "--to-latest", "--execute"),
          List.of("repair", "--dry-run"),
          List.of("repair", "--yes"));

  @TempDir Path dir;

  @Test
  void aMissingDirectoryIsAnErrorNamingItAndIsNotCreated() {
    Path absent = dir.resolve("no").resolve("store");
    for (List<String> command : EVERY_COMMAND) {
      Cli.Run run = run(command, absent);

      assertThat(run.status()).as("%s", command).isEqualTo(1);
      assertThat(run.err())
          .isEqualTo(
              "queue-bridge: store file:"
                  + absent
                  + " does not exist: the directory does not exist (expected an existing store)\n");
    }
    assertThat(dir.resolve("no")).doesNotExist();
  }

  @Test
  void aDirectoryThatIsNotAStoreIsAnErrorAndIsLeftAsItWas() throws IOException {
    Path empty = Files.createDirectory(dir.resolve("empty"));
    Path other = Files.createDirectory(dir.resolve("other"));
    Files.writeString(other.resolve("notes.txt"), "not a store");

    for (Path notAStore : List.of(empty, other)) {
      List<Path> before = list(notAStore);
      for (List<String> command : EVERY_COMMAND) {
        Cli.Run run = run(command, notAStore);

        assertThat(run.status()).as("%s", command).isEqualTo(1);
        assertThat(run.err())
            .startsWith("queue-bridge: store file:" + notAStore + " does not exist: ")
            .contains("no qb-store marker")
            .endsWith("(expected an existing store)\n");
      }
      assertThat(list(notAStore)).isEqualTo(before);
    }
  }

  @Test
  void aFileIsNotAStore() throws IOException {
    Path file = Files.writeString(dir.resolve("file"), "x");

    Cli.Run run = run(List.of("queues"), file);

    assertThat(run.status()).isEqualTo(1);
    assertThat(run.err()).contains(file + " does not exist: the path is a file, not a directory");
  }

  @Test
  void aStoreHeldByAWriterIsReadBesideItAndChangingItIsRefusedWithTheLocksMessage() {
    Path path = dir.resolve("store");
    try (Storage held = QueueStores.file(path)) {
      StoreFixture.fill(held);
      StoreLockedException expected =
          catchThrowableOfType(StoreLockedException.class, () -> QueueStores.file(path));

      Cli.Run read = run(List.of("queues"), path);
      assertThat(read.err()).isEmpty();
      assertThat(read.status()).isZero();
      assertThat(QueuesCommandTest.withoutBytes(read.out()))
          .isEqualTo(QueuesCommandTest.FIXTURE_TABLE);

      for (List<String> change :
          List.of(
              List.of("purge", "jobs", "--yes"),
              List.of("delete-group", "jobs", "workers", "--yes"),
              List.of("dlq", "redrive", "$dlq/jobs"),
              List.of("reset-offsets", "jobs", "--group", "workers", "--to-latest", "--execute"),
              List.of("repair", "--dry-run"),
              List.of("repair", "--yes"))) {
        Cli.Run run = run(change, path);
        assertThat(run.status()).as("%s", change).isEqualTo(1);
        assertThat(run.err()).isEqualTo("queue-bridge: " + expected.getMessage() + "\n");
      }
      assertThat(held.queues().count("jobs")).isEqualTo(6);
      assertThat(held.queues().count("$dlq/jobs")).isEqualTo(1);
    }
  }

  private static Cli.Run run(List<String> command, Path path) {
    List<String> args = new java.util.ArrayList<>(command);
    args.addAll(List.of("--store-type", "file", "--store", "path=" + path));
    return Cli.run(args.toArray(String[]::new));
  }

  private static List<Path> list(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.sorted().toList();
    }
  }
}
