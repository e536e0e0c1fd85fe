package io.queuebridge.connect.source;

import static io.queuebridge.connect.source.QueueSourceValidateTest.assertStreamRefused;
import static io.queuebridge.connect.source.QueueSourceValidateTest.createQueues;
import static io.queuebridge.connect.source.QueueSourceValidateTest.sharedProps;
import static io.queuebridge.connect.source.QueueSourceValidateTest.validate;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.store.postgres.PostgresTestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link QueueSourceConnector#validate} in {@code consumer.mode=shared} on a {@code postgres}
 * store, on the server {@code QUEUEBRIDGE_TEST_PG_URL}, {@code _USER} and {@code _PASSWORD} name
 * (see {@code .ci/run}; {@code bash .ci/postgres.sh start} starts the project's own), in a fresh
 * database. Skipped, visibly, when the URL is not set.
 */
class QueueSourceValidatePostgresTest {
  private static PostgresTestDatabase db;

  @BeforeAll
  static void database() {
    String url = System.getenv("QUEUEBRIDGE_TEST_PG_URL");
    if (url != null && !url.isBlank()) {
      db = PostgresTestDatabase.create();
    }
  }

  @BeforeEach
  void needsAServer() {
    // per test, so that every skipped test is counted and shows this reason
    assumeTrue(
        db != null, "QUEUEBRIDGE_TEST_PG_URL is not set: no PostgreSQL server to validate against");
  }

  @AfterAll
  static void dropDatabase() {
    if (db != null) {
      db.close();
    }
  }

  private static Map<String, String> props(String schema, String queues) {
    Map<String, String> p = sharedProps(queues);
    p.put(QueueSourceConfig.STORE_TYPE_CONFIG, "postgres");
    db.config(schema).forEach((k, v) -> p.put(QueueSourceConfig.STORE_PREFIX + k, v));
    return p;
  }

  /** The schemas of the test database (information_schema.schemata). */
  private static Set<String> schemas() throws SQLException {
    Set<String> out = new TreeSet<>();
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT schema_name FROM information_schema.schemata")) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  @Test
  void sharedModeValidateAgainstASchemaWithoutTheStoreCreatesNoSchemaAndPasses() throws Exception {
    Set<String> before = schemas();
    assertThat(before).doesNotContain("source_absent");

    assertThat(validate(props("source_absent", "events"))).isEmpty();

    assertThat(schemas()).isEqualTo(before);
  }

  @Test
  void sharedModeValidateAgainstAnExistingStoreRefusesStreamsAndCreatesNothing() throws Exception {
    try (Storage writer = QueueStores.open("postgres", db.config("source_existing"))) {
      createQueues(writer, "events", "jobs");
      Set<String> before = schemas();

      assertStreamRefused(validate(props("source_existing", "events,jobs")), "events");
      assertThat(validate(props("source_existing", "jobs"))).isEmpty();

      assertThat(schemas()).isEqualTo(before);
    }
  }
}
