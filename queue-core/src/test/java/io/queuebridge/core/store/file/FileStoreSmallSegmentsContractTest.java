package io.queuebridge.core.store.file;

import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.StoreContractTest;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * The file store against the contract kit with tiny segments (1 KiB, one index entry per 64 bytes,
 * every time step indexed), so that almost every multi-message test rolls segments, reads across
 * segment boundaries and through indexes, and truncates inside and across segments.
 */
class FileStoreSmallSegmentsContractTest extends StoreContractTest {
  @Override
  protected Storage openStorage(Path dir) {
    return QueueStores.open("file", config(dir));
  }

  private static Map<String, String> config(Path dir) {
    return Map.of(
        "path", dir.resolve("store").toString(),
        "segment.bytes", "1024",
        "index.interval.bytes", "64",
        "time.index.interval.ms", "0");
  }

  @Override
  protected Optional<Storage> openReadOnly(Path dir) {
    return Optional.of(QueueStores.provider("file").openReadOnly(config(dir)));
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
}
