package io.queuebridge.store.postgres;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.StoreContractTest;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole store contract kit against PostgreSQL: one fresh database for the class, one schema per
 * test (per temporary directory), so every test starts from an empty store and a reopen (close the
 * Storage, open a new one with its own pool) finds the same schema again.
 */
class PostgresStoreContractTest extends StoreContractTest {
  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();
  private static final Map<Path, String> SCHEMAS = new HashMap<>();

  @Override
  protected Storage openStorage(Path dir) {
    String schema;
    synchronized (SCHEMAS) {
      schema = SCHEMAS.computeIfAbsent(dir, d -> "t" + SCHEMAS.size());
    }
    Map<String, String> config = database.config(schema);
    config.put("pool.size", "4");
    return QueueStores.open("postgres", config);
  }

  @Override
  protected Optional<Storage> openReadOnly(Path dir) {
    String schema;
    synchronized (SCHEMAS) {
      schema = SCHEMAS.computeIfAbsent(dir, d -> "t" + SCHEMAS.size());
    }
    Map<String, String> config = database.config(schema);
    config.put("pool.size", "2");
    return Optional.of(new PostgresStoreProvider().openReadOnly(config));
  }

  @Override
  protected boolean persistent() {
    return true;
  }

  @Override
  protected boolean durableSync() {
    return true;
  }

  @Override
  protected boolean exactTruncation() {
    return true;
  }

  @Override
  protected boolean sharedAcrossInstances() {
    return true;
  }

  @Override
  protected boolean exactTimeOffset() {
    return true;
  }
}
