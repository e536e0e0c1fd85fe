package io.queuebridge.store.postgres;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A fresh PostgreSQL database for one test class, on the test server.
 *
 * <p><b>Which server.</b> The one named by {@code QUEUEBRIDGE_TEST_PG_URL} (a JDBC URL of any
 * database on it, e.g. {@code jdbc:postgresql://127.0.0.1:55432/postgres}), {@code
 * QUEUEBRIDGE_TEST_PG_USER} and {@code QUEUEBRIDGE_TEST_PG_PASSWORD}. When the URL variable is
 * absent, the class runs {@code bash .ci/postgres.sh start} from the repository root (found by
 * walking up from {@code user.dir}), which starts (or finds running) a private server, and uses its
 * defaults (role and password {@code queuebridge}). If no server can be had, the test is aborted
 * with a visible assumption message — or fails when the environment variable {@code CI} is {@code
 * true}.
 *
 * <p><b>Use.</b> One database for a test class: {@code @RegisterExtension static final
 * PostgresTestDatabase database = PostgresTestDatabase.perClass();} creates it before the class's
 * {@code @BeforeAll} methods and drops it after its {@code @AfterAll} ones. Or by hand: {@code
 * PostgresTestDatabase db = PostgresTestDatabase.create()}, then {@link #close()} (drops the
 * database). {@link #config()} (or {@link #config(String)} for another schema) is the provider
 * configuration. The role needs {@code CREATEDB}. Thread-safe.
 */
public final class PostgresTestDatabase
    implements AutoCloseable, BeforeAllCallback, AfterAllCallback {
  private static final Object SERVER_LOCK = new Object();
  private static String[] server; // url, user, password; guarded by SERVER_LOCK

  /** A created database: the server's URL, this database's URL and name, the role. */
  private record Created(String adminUrl, String url, String name, String user, String password) {}

  private volatile Created created; // null until created, and again once dropped

  private PostgresTestDatabase() {}

  /**
   * Creates a new, empty database {@code qb_<random>} on the test server.
   *
   * @throws org.opentest4j.TestAbortedException if no server can be had (and {@code CI} is not
   *     {@code true})
   */
  public static PostgresTestDatabase create() {
    PostgresTestDatabase db = new PostgresTestDatabase();
    db.created = createDatabase();
    return db;
  }

  /**
   * A database for one test class, as an extension ({@code @RegisterExtension} on a static field):
   * created before the class's {@code @BeforeAll} methods, dropped after its {@code @AfterAll}
   * ones. Without a server the class is aborted, as {@link #create()} says.
   */
  public static PostgresTestDatabase perClass() {
    return new PostgresTestDatabase();
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    if (created != null) {
      throw new IllegalStateException("test database " + created.name() + " exists already");
    }
    created = createDatabase();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    close();
  }

  private static Created createDatabase() {
    String[] s = server();
    String name = "qb_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    try (Connection c = connect(s[0], s[1], s[2]);
        Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + name);
    } catch (SQLException e) {
      unavailable("cannot create a test database on " + s[0] + ": " + e.getMessage());
    }
    return new Created(s[0], withDatabase(s[0], name), name, s[1], s[2]);
  }

  private Created created() {
    Created c = created;
    if (c == null) {
      throw new IllegalStateException(
          "no test database: not created yet (perClass() creates it before @BeforeAll) or dropped");
    }
    return c;
  }

  /** The JDBC URL of this database. */
  public String url() {
    return created().url();
  }

  public String user() {
    return created().user();
  }

  public String password() {
    return created().password();
  }

  /** The database's name. */
  public String name() {
    return created().name();
  }

  /** The provider configuration for this database and the default schema. */
  public Map<String, String> config() {
    return config(PostgresConfig.DEFAULT_SCHEMA);
  }

  /** The provider configuration for this database and {@code schema}; a mutable copy. */
  public Map<String, String> config(String schema) {
    Created d = created();
    Map<String, String> c = new LinkedHashMap<>();
    c.put("url", d.url());
    c.put("user", d.user());
    c.put("password", d.password());
    c.put("schema", schema);
    return c;
  }

  /** A new plain JDBC connection to this database (autocommit); the caller closes it. */
  public Connection connect() throws SQLException {
    return connect(new Properties());
  }

  /** {@link #connect()}, with driver properties of the caller's ({@code reWriteBatchedInserts}). */
  public Connection connect(Properties driver) throws SQLException {
    Created d = created();
    return connect(d.url(), d.user(), d.password(), driver);
  }

  /**
   * Drops the database, disconnecting whoever is still connected. An autovacuum worker of the
   * server busy in the database is a session the test role may not terminate ({@code FORCE} then
   * fails with SQLSTATE 42501); it is done within moments, so the drop is tried again for up to 10
   * seconds. Does nothing when there is no database (never created, or dropped already).
   */
  @Override
  public void close() {
    Created d = created;
    if (d == null) {
      return;
    }
    String adminUrl = d.adminUrl();
    String user = d.user();
    String password = d.password();
    String name = d.name();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try (Connection c = connect(adminUrl, user, password);
          Statement st = c.createStatement()) {
        st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        created = null;
        return;
      } catch (SQLException e) {
        if (!"42501".equals(e.getSQLState()) || System.nanoTime() > deadline) {
          throw new IllegalStateException("cannot drop test database " + name, e);
        }
      }
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while dropping test database " + name, e);
      }
    }
  }

  private static Connection connect(String url, String user, String password) throws SQLException {
    return connect(url, user, password, new Properties());
  }

  private static Connection connect(String url, String user, String password, Properties driver)
      throws SQLException {
    Properties p = new Properties();
    p.putAll(driver);
    p.setProperty("user", user);
    if (password != null) {
      p.setProperty("password", password);
    }
    p.setProperty("connectTimeout", "10");
    return DriverManager.getConnection(url, p);
  }

  /** {@code url} with its database replaced by {@code database}. */
  static String withDatabase(String url, String database) {
    int q = url.indexOf('?');
    String base = q < 0 ? url : url.substring(0, q);
    String params = q < 0 ? "" : url.substring(q);
    int slash = base.lastIndexOf('/');
    if (slash < "jdbc:postgresql://".length()) {
      return base + "/" + database + params;
    }
    return base.substring(0, slash + 1) + database + params;
  }

  private static String[] server() {
    synchronized (SERVER_LOCK) {
      if (server != null) {
        return server;
      }
      String url = System.getenv("QUEUEBRIDGE_TEST_PG_URL");
      if (url != null && !url.isBlank()) {
        server =
            new String[] {
              url,
              System.getenv().getOrDefault("QUEUEBRIDGE_TEST_PG_USER", "queuebridge"),
              System.getenv().getOrDefault("QUEUEBRIDGE_TEST_PG_PASSWORD", "queuebridge")
            };
        return server;
      }
      server = new String[] {startLocalServer(), "queuebridge", "queuebridge"};
      return server;
    }
  }

  private static String startLocalServer() {
    Path root = Paths.get(System.getProperty("user.dir")).toAbsolutePath();
    while (root != null && !Files.isRegularFile(root.resolve(".ci/postgres.sh"))) {
      root = root.getParent();
    }
    if (root == null) {
      unavailable(
          "QUEUEBRIDGE_TEST_PG_URL is not set and no .ci/postgres.sh was found above "
              + System.getProperty("user.dir"));
    }
    try {
      Process p =
          new ProcessBuilder("bash", root.resolve(".ci/postgres.sh").toString(), "start")
              .redirectErrorStream(true)
              .start();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
        unavailable(
            ".ci/postgres.sh start failed: " + new String(out, StandardCharsets.UTF_8).trim());
      }
      String[] lines = new String(out, StandardCharsets.UTF_8).trim().split("\n");
      String url = lines[lines.length - 1].trim();
      if (!url.toLowerCase(Locale.ROOT).startsWith("jdbc:postgresql:")) {
        unavailable(".ci/postgres.sh start printed no JDBC URL: " + String.join("\n", lines));
      }
      return url;
    } catch (IOException e) {
      unavailable("cannot run .ci/postgres.sh: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      unavailable("interrupted while starting the test server");
    }
    throw new AssertionError("unreachable");
  }

  private static void unavailable(String why) {
    String message = "no PostgreSQL test server: " + why;
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new IllegalStateException(message);
    }
    // JUnit reports an abort in @BeforeAll as zero tests run; say it on the console too
    System.err.println(
        "WARNING: " + message + "; PostgreSQL tests are skipped (set CI=true to fail)");
    Assumptions.abort(message);
  }
}
