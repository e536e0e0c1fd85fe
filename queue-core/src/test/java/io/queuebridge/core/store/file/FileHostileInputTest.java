package io.queuebridge.core.store.file;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.HostileInputContractTest;
import java.nio.file.Path;

/**
 * The hostile-input table against the file store: names become directories and files, so the kit's
 * check that the tree outside the store directory is unchanged matters most here.
 */
class FileHostileInputTest extends HostileInputContractTest {
  @Override
  protected Storage openStorage(Path storeDir) {
    return QueueStores.file(storeDir);
  }

  @Override
  protected boolean persistent() {
    return true;
  }

  @Override
  protected boolean writesFiles() {
    return true;
  }
}
