package io.queuebridge.store.postgres;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.stream.Collectors;

/**
 * A plain SQL dump of a store's schema and rows ({@code pg_dump --column-inserts}), restored over
 * JDBC: no {@code psql} needed. The dump's {@code psql} meta-commands (lines starting with a
 * backslash: {@code \restrict} and its closing counterpart) are left out; the rest is SQL
 * statements and comments, which the driver splits and runs in order. Stateless.
 */
final class SqlDump {
  private SqlDump() {}

  /** The SQL of the dump {@code file}, without its psql meta-commands. */
  static String statements(Path file) throws IOException {
    return Files.readString(file, StandardCharsets.UTF_8)
        .lines()
        .filter(line -> !line.startsWith("\\"))
        .collect(Collectors.joining("\n", "", "\n"));
  }

  /**
   * Runs the dump {@code file} on {@code c} in one transaction; the connection's session settings
   * (the dump empties {@code search_path}) are the dump's afterwards, so use a connection of its
   * own.
   *
   * @throws SQLException naming the file if a statement fails (nothing is restored then)
   */
  static void restore(Connection c, Path file) throws IOException, SQLException {
    String sql = statements(file);
    boolean autoCommit = c.getAutoCommit();
    c.setAutoCommit(false);
    try (Statement st = c.createStatement()) {
      st.execute(sql);
      c.commit();
    } catch (SQLException e) {
      c.rollback();
      throw new SQLException("restoring the dump " + file + " failed: " + e.getMessage(), e);
    } finally {
      c.setAutoCommit(autoCommit);
    }
  }
}
