package io.queuebridge.store.postgres;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.fixtures.FixtureChecks;
import io.queuebridge.core.store.fixtures.FixtureContent;
import io.queuebridge.core.store.fixtures.FixtureManifest;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Writes the PostgreSQL store fixture: {@code queue-store-postgres/src/test/resources/fixtures/
 * postgres-v1.sql}, a plain SQL dump of a store schema holding {@link FixtureContent}, and {@code
 * postgres-v1.manifest.json} next to it.
 *
 * <p>Rerun (from the repository root, with the test server up: {@code bash .ci/postgres.sh start};
 * the server is the one {@link PostgresTestDatabase} finds, {@code QUEUEBRIDGE_TEST_PG_*}):
 *
 * <pre>
 *   mvn -B -o -q -Pfixtures -pl queue-core,queue-store-postgres \
 *     test-compile exec:java
 * </pre>
 *
 * which rewrites the file store fixture first (queue-core's generator), or with another output
 * directory as the only argument. The store is written into schema {@code queuebridge} of a fresh
 * database, which is then dumped by the server's own {@code pg_dump} ({@code --schema=queuebridge
 * --no-owner --no-privileges --column-inserts}, and a fixed {@code --restrict-key} where pg_dump
 * has the option) and dropped. {@code pg_dump} is taken from the {@code PATH}, else from the newest
 * {@code /usr/lib/postgresql/<v>/bin}; there is no fallback export: without pg_dump the generator
 * fails. Everything written is fixed (the store takes every instant from its callers), so a rerun
 * on the same server version writes the same file; the dump's header names the server and pg_dump
 * versions, and rows are dumped in the table's physical order, so another version may differ in
 * those lines or that order only.
 *
 * <p><b>It writes today's format.</b> The fixture stands for an earlier release's data: after a
 * change of format, do not rerun it over the fixture of the version before; keep that one and write
 * the new version's next to it (docs/STORES.md, "Compatibility fixtures").
 */
public final class PostgresFixtureGenerator {
  static final String FIXTURE = "postgres-v1";
  static final String DUMP = FIXTURE + ".sql";
  static final String MANIFEST = FIXTURE + ".manifest.json";

  /** The restrict key pg_dump writes into {@code \restrict}; fixed so the dump is reproducible. */
  private static final String RESTRICT_KEY = "queuebridgefixture";

  private PostgresFixtureGenerator() {}

  public static void main(String[] args) throws Exception {
    Path out =
        args.length > 0
            ? Paths.get(args[0])
            : repositoryRoot().resolve("queue-store-postgres/src/test/resources/fixtures");
    generate(out.toAbsolutePath().normalize());
    System.out.println("wrote " + out.resolve(DUMP) + " and " + out.resolve(MANIFEST));
  }

  /** Writes the dump and the manifest into {@code out}. */
  static void generate(Path out) throws Exception {
    Files.createDirectories(out);
    try (PostgresTestDatabase db = PostgresTestDatabase.create()) {
      FixtureManifest written;
      try (Storage storage = QueueStores.open("postgres", db.config())) {
        written = FixtureContent.write(storage, t -> {}, FIXTURE);
      }
      Map<String, Integer> formats;
      try (Connection c = db.connect()) {
        formats = versions(c, PostgresConfig.DEFAULT_SCHEMA);
      }
      dump(db, PostgresConfig.DEFAULT_SCHEMA, out.resolve(DUMP));
      new FixtureManifest(
              written.fixture(),
              PostgresFixtureGenerator.class.getName(),
              formats,
              written.legacyStoredNames(),
              written.queues(),
              written.messages(),
              written.groups())
          .write(out.resolve(MANIFEST));
    }
  }

  /**
   * The versions the store schema {@code schema} holds, read from it: {@code schema_version} and
   * the format byte of every message body.
   *
   * @throws IllegalStateException if the bodies hold several versions
   */
  /**
   * Restores the version-1 fixture into {@code db} (schema {@link PostgresConfig#DEFAULT_SCHEMA})
   * and migrates it to {@code version} with the migrations this code has, as the release that wrote
   * {@code version} would have left it. Returns the store's configuration.
   */
  static Map<String, String> restoreAtVersion(PostgresTestDatabase db, int version)
      throws Exception {
    Path dir = FixtureChecks.resourceDirectory(PostgresFixtureGenerator.class, "/fixtures/" + DUMP);
    try (Connection c = db.connect()) {
      SqlDump.restore(c, dir.resolve(DUMP));
    }
    String schema = PostgresConfig.DEFAULT_SCHEMA;
    try (Connection c = db.connect();
        java.sql.Statement st = c.createStatement()) {
      for (int v = 2; v <= version; v++) {
        for (String sql : Schema.migration(v, schema)) {
          st.execute(sql);
        }
      }
      st.execute("UPDATE " + schema + ".schema_version SET version = " + version);
    }
    return db.config(schema);
  }

  static Map<String, Integer> versions(Connection c, String schema) throws SQLException {
    Map<String, Integer> out = new TreeMap<>();
    try (Statement st = c.createStatement()) {
      try (ResultSet rs =
          st.executeQuery("SELECT max(version) FROM " + schema + ".schema_version")) {
        rs.next();
        out.put("schema_version (table)", rs.getInt(1));
      }
      TreeSet<Integer> bodies = new TreeSet<>();
      try (ResultSet rs =
          st.executeQuery("SELECT DISTINCT get_byte(body, 0) FROM " + schema + ".messages")) {
        while (rs.next()) {
          bodies.add(rs.getInt(1));
        }
      }
      if (bodies.size() != 1) {
        throw new IllegalStateException("message bodies of versions " + bodies + " in " + schema);
      }
      out.put("message body (messages.body)", bodies.first());
    }
    return out;
  }

  /** Dumps schema {@code schema} of {@code db} to {@code file} with pg_dump. */
  static void dump(PostgresTestDatabase db, String schema, Path file) throws Exception {
    URI uri = URI.create(db.url().substring("jdbc:".length()));
    String pgDump = pgDump();
    List<String> command =
        new ArrayList<>(
            List.of(
                pgDump,
                "--host=" + uri.getHost(),
                "--port=" + (uri.getPort() < 0 ? 5432 : uri.getPort()),
                "--username=" + db.user(),
                "--dbname=" + db.name(),
                "--schema=" + schema,
                "--no-owner",
                "--no-privileges",
                "--column-inserts",
                "--no-password",
                "--file=" + file));
    if (help(pgDump).contains("--restrict-key")) {
      command.add("--restrict-key=" + RESTRICT_KEY);
    }
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    if (db.password() != null) {
      pb.environment().put("PGPASSWORD", db.password());
    }
    Process p = pb.start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(2, TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new IllegalStateException(
          "pg_dump failed (" + String.join(" ", command) + "): " + output.trim());
    }
  }

  private static String help(String pgDump) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(pgDump, "--help").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(1, TimeUnit.MINUTES);
    return out;
  }

  /** {@code pg_dump} on the PATH, else the newest {@code /usr/lib/postgresql/<v>/bin/pg_dump}. */
  static String pgDump() throws IOException {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Paths.get(dir, "pg_dump"))) {
        return Paths.get(dir, "pg_dump").toString();
      }
    }
    Path lib = Paths.get("/usr/lib/postgresql");
    if (Files.isDirectory(lib)) {
      try (Stream<Path> s = Files.list(lib)) {
        Path newest =
            s.map(v -> v.resolve("bin/pg_dump"))
                .filter(Files::isExecutable)
                .max(
                    Comparator.comparingInt(
                        p -> {
                          String v = p.getParent().getParent().getFileName().toString();
                          return v.matches("\\d+") ? Integer.parseInt(v) : -1;
                        }))
                .orElse(null);
        if (newest != null) {
          return newest.toString();
        }
      }
    }
    throw new IllegalStateException(
        "no pg_dump on the PATH or in /usr/lib/postgresql/<version>/bin; install the PostgreSQL"
            + " client (.ci/postgres.sh installs the Debian postgresql package)");
  }

  /** The repository root: the first directory up from {@code user.dir} with this module. */
  static Path repositoryRoot() {
    Path p = Paths.get(System.getProperty("user.dir")).toAbsolutePath();
    while (p != null && !Files.isRegularFile(p.resolve("queue-store-postgres/pom.xml"))) {
      p = p.getParent();
    }
    if (p == null) {
      throw new IllegalStateException(
          "no repository root (a directory holding queue-store-postgres/pom.xml) above "
              + System.getProperty("user.dir")
              + "; pass the output directory as the argument");
    }
    return p;
  }
}
