package io.queuebridge.connect.common;

import io.queuebridge.core.errors.StoreNotFoundException;
import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test store ({@code queue.store.type=scripted}) whose read-only open does what the key {@code
 * read-only} says: {@code absent} — throws {@link StoreNotFoundException} quoting the {@code
 * password} (a provider that breaks its promise to keep secrets out of messages); anything else —
 * refuses as the SPI's default does, as a third-party store without a read-only open. {@link #open}
 * gives a new memory store and counts the calls.
 */
public final class ScriptedStoreProvider implements QueueStoreProvider {
  /** How many times {@link #open} was called. */
  static final AtomicInteger OPENS = new AtomicInteger();

  @Override
  public String name() {
    return "scripted";
  }

  @Override
  public void validate(Map<String, String> config) {}

  @Override
  public String identity(Map<String, String> config) {
    return "scripted:" + config.getOrDefault("name", "default");
  }

  @Override
  public Storage open(Map<String, String> config) {
    OPENS.incrementAndGet();
    return QueueStores.memory();
  }

  @Override
  public Storage openReadOnly(Map<String, String> config) {
    if ("absent".equals(config.get("read-only"))) {
      throw new StoreNotFoundException(
          "scripted with password " + config.get("password"), "nothing there");
    }
    return QueueStoreProvider.super.openReadOnly(config);
  }
}
