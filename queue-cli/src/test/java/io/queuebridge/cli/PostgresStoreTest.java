package io.queuebridge.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.store.postgres.PostgresTestDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code queues} on a {@code postgres} store, on the server {@code QUEUEBRIDGE_TEST_PG_URL}, {@code
 * _USER} and {@code _PASSWORD} name (see {@code .ci/run}; {@code bash .ci/postgres.sh start} starts
 * the project's own). Skipped, visibly, when the URL is not set.
 */
class PostgresStoreTest {
  @TempDir Path dir;

  @Test
  void listsTheQueuesOfAPostgresStore() throws Exception {
    String url = System.getenv("QUEUEBRIDGE_TEST_PG_URL");
    assumeTrue(
        url != null && !url.isBlank(),
        "QUEUEBRIDGE_TEST_PG_URL is not set: no PostgreSQL server to run queues against");
    try (PostgresTestDatabase db = PostgresTestDatabase.create()) {
      try (Storage storage = QueueStores.open("postgres", db.config())) {
        StoreFixture.fill(storage);
      }
      Path secrets =
          Files.writeString(dir.resolve("pg.properties"), "pg.password=" + db.password());
      Path config =
          Files.writeString(
              dir.resolve("sink-postgres.json"),
              """
              {"name": "orders-to-postgres-stream", "config": {
                "queue.store.type": "postgres",
                "queue.store.url": "%s",
                "queue.store.user": "%s",
                "queue.store.password": "${file:%s:pg.password}",
                "queue.store.pool.size": "1"}}
              """
                  .formatted(db.url(), db.user(), secrets));

      Cli.Run run = Cli.run("queues", "--config", config.toString());

      assertThat(run.err()).isEmpty();
      assertThat(run.status()).isZero();
      assertThat(QueuesCommandTest.withoutBytes(run.out()))
          .isEqualTo(QueuesCommandTest.FIXTURE_TABLE);
    }
  }
}
