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
 *       tables, created on first (writable) open; 1 to 48 of {@code [a-z0-9_]}, not starting with a
 *       digit</td></tr>
 *   <tr><td>{@code pool.size}</td><td>4</td><td>pooled connections, 1 .. 64 (plus one dedicated
 *       listener connection)</td></tr>
 *   <tr><td>{@code connect.timeout.ms}</td><td>10000</td><td>how long opening the store may wait,
 *       and how long a call may wait for its turn at the pool (callers are served in arrival order)
 *       and then, once more at most, for the connection, 250 .. 600000; a login the server refuses
 *       (SQLSTATE class 28 or 3D) fails the open at once</td></tr>
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

  /**
   * Opens an existing store read-only, beside writers in this and other processes. Validates like
   * {@link #open}; then reads the catalog and {@code schema_version} in one read-only transaction
   * and creates, migrates and locks nothing, not even the migration lock.
   *
   * <p>Every connection of the store is read-only at the server (its session default is {@code READ
   * ONLY}, so a write would be refused in autocommit mode too) and for the driver; reads are the
   * writable store's own statements, each seeing what was committed before it (multi-row group
   * reads one REPEATABLE READ snapshot), so appends, claims, acknowledgements and truncations by
   * any writer show from the next call on. Every change ({@code append}, {@code createGroup},
   * {@code claimPending}, ...) throws {@link io.queuebridge.core.errors.ReadOnlyStoreException}
   * before reaching the database. {@code awaitAppend} is woken by the writers' notifications
   * through a read-only {@code LISTEN} session, and re-checks at least every {@code
   * poll.interval.ms}; {@code atomically} runs its body in one read-only snapshot and takes no
   * lock; {@code supportsDurableSync()} is false.
   *
   * <p>The role needs only {@code CONNECT} on the database, {@code USAGE} on the schema and {@code
   * SELECT} on its tables.
   *
   * @throws io.queuebridge.core.errors.InvalidConfigException for a bad key
   * @throws io.queuebridge.core.errors.StoreNotFoundException if the database or the schema does
   *     not exist, or the schema lacks one of the store's tables (the message names the store,
   *     without its password, and what is missing)
   * @throws io.queuebridge.core.errors.QueueStoreException if the database cannot be reached, or
   *     the schema version is newer than this code (or older: a writable open migrates it)
   */
  @Override
  public Storage openReadOnly(Map<String, String> config) {
    return PostgresStorage.openReadOnly(PostgresConfig.parse(config));
  }
}
