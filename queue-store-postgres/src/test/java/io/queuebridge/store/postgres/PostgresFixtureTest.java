package io.queuebridge.store.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queuebridge.core.errors.StoreCorruptedException;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.fixtures.FixtureChecks;
import io.queuebridge.core.store.fixtures.FixtureContent;
import io.queuebridge.core.store.fixtures.FixtureManifest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Data written by an earlier release opens in this one: the checked-in dump {@code
 * fixtures/postgres-v1.sql} (written by {@link PostgresFixtureGenerator}, property names of the
 * earlier release) restored over JDBC into a fresh database of the test server, opened read-only
 * and writable, compared with its manifest record by record, then written to and reopened. The
 * tests that need the server are skipped, visibly, without one (see {@link PostgresTestDatabase}).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PostgresFixtureTest {
  private static final String SCHEMA = PostgresConfig.DEFAULT_SCHEMA;

  private static Path dump;
  private static FixtureManifest manifest;

  private PostgresTestDatabase database;

  @BeforeAll
  static void readManifest() {
    Path dir =
        FixtureChecks.resourceDirectory(
            PostgresFixtureTest.class, "/fixtures/" + PostgresFixtureGenerator.DUMP);
    dump = dir.resolve(PostgresFixtureGenerator.DUMP);
    manifest = FixtureManifest.read(dir.resolve(PostgresFixtureGenerator.MANIFEST));
  }

  @AfterEach
  void dropDatabase() {
    if (database != null) {
      database.close();
    }
  }

  /** A fresh database of the test server with the dump restored into it. */
  private PostgresTestDatabase restored() throws Exception {
    database = PostgresTestDatabase.create();
    try (Connection c = database.connect()) {
      SqlDump.restore(c, dump);
    }
    return database;
  }

  private static String hex(String s) {
    return HexFormat.of().formatHex(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void theManifestListsMessagesStoredUnderEveryOldPropertyName() {
    FixtureChecks.assertManifestCoversTheLegacyNames(manifest);
  }

  @Test
  void theDumpIsPlainSqlOfTheStoreSchemaWithTheOldPropertyNamesInTheBodies() throws Exception {
    String sql = Files.readString(dump, StandardCharsets.UTF_8);
    assertThat(sql)
        .contains("CREATE SCHEMA " + SCHEMA + ";")
        .contains("INSERT INTO " + SCHEMA + ".schema_version")
        .doesNotContain("COPY ")
        .doesNotContain("OWNER TO");
    for (String old : manifest.legacyStoredNames().keySet()) {
      assertThat(sql).as("old name %s (hex) in a message body", old).contains(hex(old));
    }
    assertThat(sql)
        .as("a new name in a message body")
        .doesNotContain(hex("x-dlq-original-queue"))
        .doesNotContain(hex("x-dlq-reason"));
  }

  @Test
  void theRestoredRowsCarryTheVersionsTheManifestRecordsAndThisBuildReads() throws Exception {
    PostgresTestDatabase db = restored();
    try (Connection c = db.connect()) {
      assertThat(PostgresFixtureGenerator.versions(c, SCHEMA))
          .isEqualTo(manifest.formats())
          .containsEntry("schema_version (table)", 1)
          .containsEntry("message body (messages.body)", (int) MessageCodec.VERSION);
    }
    assertThat(Schema.READ_ONLY_FROM)
        .as("a read-only open reads the fixture's schema version as it is")
        .isLessThanOrEqualTo(1);
    assertThat(Schema.VERSION).as("a writable open migrates it").isGreaterThanOrEqualTo(1);
  }

  @Test
  void aReadOnlyOpenReadsEveryRecord() throws Exception {
    PostgresTestDatabase db = restored();
    try (Storage s = QueueStores.provider("postgres").openReadOnly(db.config(SCHEMA))) {
      FixtureChecks.assertMatches(s, manifest);
    }
  }

  @Test
  void aWritableOpenReadsEveryRecordAndTakesWrites() throws Exception {
    PostgresTestDatabase db = restored();
    try (Storage s = QueueStores.open("postgres", db.config(SCHEMA))) {
      FixtureChecks.assertMatches(s, manifest);
      FixtureChecks.assertWritable(s, manifest);
    }
    try (Storage s = QueueStores.open("postgres", db.config(SCHEMA))) {
      FixtureChecks.assertWritesSurvived(s, manifest);
    }
  }

  @Test
  void aWritableOpenMigratesTheVersionOneSchemaAndItsQueuesDeduplicate() throws Exception {
    PostgresTestDatabase db = restored();
    try (Storage s = QueueStores.open("postgres", db.config(SCHEMA))) {
      long tail = s.queues().tail("orders");
      java.time.Instant now = java.time.Instant.parse("2026-01-01T00:00:00Z");
      io.queuebridge.core.message.Message m =
          io.queuebridge.core.message.Message.builder()
              .topic("orders/1")
              .value(new byte[] {7})
              .property(io.queuebridge.core.message.MessageProperties.DEDUP_ID, "after-migration")
              .createdAt(now)
              .build();
      java.time.Instant start = now.minusSeconds(60);
      assertThat(s.queues().appendDeduplicated("orders", m, start))
          .isEqualTo(io.queuebridge.core.store.AppendResult.stored(tail));
      assertThat(s.queues().appendDeduplicated("orders", m, start))
          .isEqualTo(io.queuebridge.core.store.AppendResult.duplicateOf(tail));
      assertThat(s.queues().tail("orders")).isEqualTo(tail + 1);
    }
    try (Connection c = db.connect()) {
      assertThat(PostgresFixtureGenerator.versions(c, SCHEMA))
          .containsEntry("schema_version (table)", Schema.VERSION);
    }
    try (Storage s = QueueStores.provider("postgres").openReadOnly(db.config(SCHEMA))) {
      long last = s.queues().tail("orders") - 1;
      assertThat(s.queues().read("orders", last).properties())
          .containsEntry(io.queuebridge.core.message.MessageProperties.DEDUP_ID, "after-migration");
    }
  }

  @Test
  void aMessageBodyOfANewerFormatIsRefusedNamingTheStoreTheOffsetAndBothVersions()
      throws Exception {
    PostgresTestDatabase db = restored();
    long offset = FixtureContent.ORDERS_HEAD;
    String where =
        " FROM "
            + SCHEMA
            + ".messages m JOIN "
            + SCHEMA
            + ".queues q ON q.id = m.queue_id WHERE q.name = ? AND m.off = ?";
    try (Connection c = db.connect();
        PreparedStatement ps =
            c.prepareStatement(
                "UPDATE "
                    + SCHEMA
                    + ".messages m SET body = set_byte(m.body, 0, 2) FROM "
                    + SCHEMA
                    + ".queues q WHERE q.id = m.queue_id AND q.name = ? AND m.off = ?")) {
      ps.setString(1, FixtureContent.ORDERS);
      ps.setLong(2, offset);
      assertThat(ps.executeUpdate()).isEqualTo(1);
    }
    try (Storage s = QueueStores.open("postgres", db.config(SCHEMA))) {
      assertThatThrownBy(() -> s.queues().read(FixtureContent.ORDERS, offset))
          .isInstanceOf(StoreCorruptedException.class)
          .hasMessageContaining("#" + SCHEMA)
          .hasMessageContaining(" messages at byte " + offset)
          .hasMessageContaining("message format version 2")
          .hasMessageContaining("reads version 1")
          .hasMessageContaining("newer version");
      // the next message still reads: one refused row, not a refused store
      FixtureChecks.assertMessage(
          "orders@" + (offset + 1),
          s.queues().read(FixtureContent.ORDERS, offset + 1),
          manifest.messagesOf(FixtureContent.ORDERS).get(1).message());
    }
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement("SELECT get_byte(m.body, 0)" + where)) {
      ps.setString(1, FixtureContent.ORDERS);
      ps.setLong(2, offset);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getInt(1)).as("the refused body, left alone").isEqualTo(2);
      }
    }
  }
}
