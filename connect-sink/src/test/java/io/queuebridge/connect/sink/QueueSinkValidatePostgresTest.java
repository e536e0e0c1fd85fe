package io.queuebridge.connect.sink;

import static io.queuebridge.connect.sink.QueueSinkValidateTest.assertRetentionDrift;
import static io.queuebridge.connect.sink.QueueSinkValidateTest.validate;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.queuebridge.core.QueueManager;
import io.queuebridge.core.QueueManagerConfig;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.store.postgres.PostgresTestDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link QueueSinkConnector#validate} on a {@code postgres} store, on the server {@code
 * QUEUEBRIDGE_TEST_PG_URL}, {@code _USER} and {@code _PASSWORD} name (see {@code .ci/run}; {@code
 * bash .ci/postgres.sh start} starts the project's own), in a fresh database. Skipped, visibly,
 * when the URL is not set.
 */
class QueueSinkValidatePostgresTest {
  private static final String HOUR = "3600000";
  private static final String MINUTE = "60000";

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

  private static Map<String, String> props(String schema, String retentionMs) {
    Map<String, String> p = new HashMap<>();
    p.put("name", "validate-sink-pg");
    p.put("topics", "in");
    p.put(QueueSinkConfig.QUEUE_NAME_CONFIG, "s");
    p.put(QueueSinkConfig.QUEUE_RETENTION_MS_CONFIG, retentionMs);
    p.put(QueueSinkConfig.STORE_TYPE_CONFIG, "postgres");
    db.config(schema).forEach((k, v) -> p.put(QueueSinkConfig.STORE_PREFIX + k, v));
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
  void validateAgainstASchemaWithoutTheStoreCreatesNoSchemaAndPasses() throws Exception {
    Set<String> before = schemas();
    assertThat(before).doesNotContain("sink_absent");

    assertThat(validate(props("sink_absent", HOUR))).isEmpty();

    assertThat(schemas()).isEqualTo(before);
  }

  @Test
  void validateAgainstAnExistingStoreReportsDriftAndCreatesNothing() throws Exception {
    try (Storage writer = QueueStores.open("postgres", db.config("sink_existing"))) {
      new QueueManager(writer, QueueManagerConfig.defaults())
          .declareProtectedStream(
              new QueueSinkConfig(props("sink_existing", HOUR)).streamContract());
      Set<String> before = schemas();
      assertThat(before).contains("sink_existing");

      assertRetentionDrift(validate(props("sink_existing", MINUTE)));
      assertThat(validate(props("sink_existing", HOUR))).as("the stored contract").isEmpty();

      assertThat(schemas()).isEqualTo(before);
    }
  }
}
