package io.queuebridge.store.postgres;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.HostileInputContractTest;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The hostile-input table against PostgreSQL: one database for the class, one schema per case (per
 * temporary directory), so a reopen finds the case's data again. Aborted visibly when no test
 * server can be had ({@link PostgresTestDatabase}).
 */
class PostgresHostileInputTest extends HostileInputContractTest {
  @RegisterExtension static final PostgresTestDatabase database = PostgresTestDatabase.perClass();
  private static final Map<Path, String> SCHEMAS = new HashMap<>();

  @Override
  protected Storage openStorage(Path storeDir) {
    String schema;
    synchronized (SCHEMAS) {
      schema = SCHEMAS.computeIfAbsent(storeDir, d -> "h" + SCHEMAS.size());
    }
    Map<String, String> config = database.config(schema);
    config.put("pool.size", "2");
    return QueueStores.open("postgres", config);
  }

  @Override
  protected boolean persistent() {
    return true;
  }

  @Override
  protected boolean writesFiles() {
    return false;
  }
}
