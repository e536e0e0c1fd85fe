package io.queuebridge.examples.quickstart;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A PostgreSQL cluster of one test class, of its own, on a free port: the tests may crash it
 * ({@code pg_ctl stop -m immediate}) and start it again, which the shared test server on port 55432
 * must never undergo. Driven by {@code .ci/postgres.sh} with {@code QB_PG_DIR} and {@code
 * QB_PG_PORT} set (its {@code crash} and {@code destroy} refuse the shared default cluster); as
 * root the server runs as user {@code postgres}. Role and password {@code queuebridge}, like the
 * shared server's.
 */
final class PrivatePostgres implements AutoCloseable {
  static final String USER = "queuebridge";
  static final String PASSWORD = "queuebridge";

  private final Path script;
  private final Path dir;
  private final int port;
  private String lastOutput = "";

  private PrivatePostgres(Path script, Path dir, int port) {
    this.script = script;
    this.dir = dir;
    this.port = port;
  }

  /**
   * Initialises and starts a new cluster (the script installs the Debian package when the binaries
   * are missing), and creates the database {@code database} owned by {@link #USER}.
   *
   * @throws org.opentest4j.TestAbortedException if no PostgreSQL server can be run here (and the
   *     environment variable {@code CI} is not {@code true}: then it fails)
   */
  static PrivatePostgres start(String database) {
    Path script = PluginUnderTest.repo().resolve(".ci/postgres.sh");
    if (!Files.isRegularFile(script)) {
      unavailable("no " + script);
    }
    int port = freePort();
    // Under /tmp, not target/: as root the server runs as user postgres, who must be able to
    // reach the directory.
    PrivatePostgres pg =
        new PrivatePostgres(script, Path.of("/tmp", "queue-bridge-pg-crash-" + port), port);
    pg.runOrNull("destroy"); // a leftover of an earlier run on the same port; start says the rest
    if (pg.runOrNull("start") == null) {
      unavailable(".ci/postgres.sh start failed: " + pg.lastOutput);
    }
    try (Connection c = pg.connect("postgres");
        Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + database);
    } catch (SQLException e) {
      pg.close();
      throw new IllegalStateException("cannot create database " + database + " on " + pg, e);
    }
    return pg;
  }

  /** {@code jdbc:postgresql://127.0.0.1:<port>/<database>}. */
  String url(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
  }

  /** Kills the server as a power cut would: {@code pg_ctl stop -m immediate}, no checkpoint. */
  void crash() {
    run("crash");
  }

  /** Starts the server again (crash recovery first) and waits until it accepts connections. */
  void restart() {
    run("start");
  }

  /** Whether the server accepts a login now. */
  boolean accepting() {
    try (Connection c = connect("postgres")) {
      return c.isValid(1);
    } catch (SQLException e) {
      return false;
    }
  }

  Connection connect(String database) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", USER);
    p.setProperty("password", PASSWORD);
    p.setProperty("connectTimeout", "2");
    return DriverManager.getConnection(url(database), p);
  }

  /** Stops the server and deletes its directory. */
  @Override
  public void close() {
    run("destroy");
  }

  @Override
  public String toString() {
    return "the private PostgreSQL cluster in " + dir + " on port " + port;
  }

  private void run(String command) {
    if (runOrNull(command) == null) {
      throw new IllegalStateException(
          "bash .ci/postgres.sh " + command + " failed for " + this + ": " + lastOutput);
    }
  }

  /** Runs the script with {@code command}; its output, or null when it failed. */
  private String runOrNull(String command) {
    ProcessBuilder b =
        new ProcessBuilder("bash", script.toString(), command).redirectErrorStream(true);
    b.environment().put("QB_PG_DIR", dir.toString());
    b.environment().put("QB_PG_PORT", Integer.toString(port));
    try {
      Process p = b.start();
      byte[] out = p.getInputStream().readAllBytes();
      boolean exited = p.waitFor(5, TimeUnit.MINUTES);
      lastOutput = new String(out, StandardCharsets.UTF_8).trim();
      if (!exited) {
        p.destroyForcibly();
        lastOutput += " (did not finish within 5 minutes)";
        return null;
      }
      return p.exitValue() == 0 ? lastOutput : null;
    } catch (IOException e) {
      lastOutput = "cannot run bash: " + e.getMessage();
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      lastOutput = "interrupted";
      return null;
    }
  }

  /** A free port, never the shared server's 55432 (the script refuses to crash that one). */
  private static int freePort() {
    while (true) {
      try (ServerSocket s = new ServerSocket(0)) {
        if (s.getLocalPort() != 55432) {
          return s.getLocalPort();
        }
      } catch (IOException e) {
        throw new IllegalStateException("no free port", e);
      }
    }
  }

  private static void unavailable(String why) {
    String message = "no private PostgreSQL cluster: " + why;
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new IllegalStateException(message);
    }
    System.err.println("WARNING: " + message + "; the PostgreSQL crash tests are skipped");
    Assumptions.abort(message);
  }
}
