package io.queuebridge.store.postgres;

import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.Storage;
import java.util.Map;

/**
 * The {@code postgres} store: queues, logs and consumer groups in one PostgreSQL schema, shared by
 * every process that opens it (several Connect workers, consumer applications). Found by {@link
 * java.util.ServiceLoader} under the name {@value #NAME}.
 *
 * <p><b>Configuration keys</b> (without the {@code queue.store.} prefix):
 *
 * <table>
 *   <caption>postgres store keys</caption>
 *   <tr><th>key</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code url}</td><td>(required)</td><td>JDBC URL starting with {@code
 *       jdbc:postgresql:}; must not carry a password parameter</td></tr>
 *   <tr><td>{@code user}</td><td>(driver default)</td><td>the role to log in as</td></tr>
 *   <tr><td>{@code password}</td><td>(none)</td><td>its password; never logged, never in a
 *       description or an error</td></tr>
 *   <tr><td>{@code schema}</td><td>{@code queuebridge}</td><td>the schema holding the store's
 *       tables, created on first open; 1 to 48 of {@code [a-z0-9_]}, not starting with a
 *       digit</td></tr>
 *   <tr><td>{@code pool.size}</td><td>4</td><td>pooled connections, 1 .. 64 (plus one dedicated
 *       listener connection)</td></tr>
 *   <tr><td>{@code connect.timeout.ms}</td><td>10000</td><td>how long opening the store and
 *       borrowing a connection may wait, 250 .. 600000; a login the server refuses (SQLSTATE class
 *       28 or 3D) fails the open at once</td></tr>
 *   <tr><td>{@code poll.interval.ms}</td><td>500</td><td>the longest an {@code awaitAppend} waiter
 *       sleeps between tail checks when no notification arrives, 10 .. 60000</td></tr>
 * </table>
 *
 * <p><b>Sharing.</b> {@link #identity} is {@code postgres:<url without parameters>#<schema>}, the
 * user and a per-process fingerprint of the password: configurations naming the same database and
 * schema with the same credentials share one open store in a worker; other credentials open their
 * own (a wrong password fails instead of borrowing a pool).
 *
 * <p>Stateless and thread-safe.
 */
public final class PostgresStoreProvider implements QueueStoreProvider {
  /** The provider name users configure. */
  public static final String NAME = "postgres";

  /** For {@link java.util.ServiceLoader}; use {@code QueueStores.open("postgres", config)}. */
  public PostgresStoreProvider() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public void validate(Map<String, String> config) {
    PostgresConfig.parse(config);
  }

  @Override
  public String identity(Map<String, String> config) {
    return PostgresConfig.parse(config).identity();
  }

  /**
   * Connects, creates or migrates the schema (under an advisory lock, safe with concurrent
   * openers), and starts the append listener. Blocks for all of that.
   *
   * @throws io.queuebridge.core.errors.InvalidConfigException for a bad key
   * @throws io.queuebridge.core.errors.QueueStoreException if the database cannot be reached
   * @throws io.queuebridge.core.errors.QueueStoreException if the schema is newer than this code,
   *     or another database error
   */
  @Override
  public Storage open(Map<String, String> config) {
    return PostgresStorage.open(PostgresConfig.parse(config));
  }
}
