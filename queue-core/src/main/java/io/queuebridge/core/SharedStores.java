package io.queuebridge.core;

import io.queuebridge.core.errors.CaptureStillRunningException;
import io.queuebridge.core.errors.DeliveryStillRunningException;
import io.queuebridge.core.errors.InvalidConfigException;
import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One open store, and one started {@link QueueManager} over it, per store identity in this class
 * loader, shared by everyone who names the same store (in a Connect worker: every connector and
 * task of the plugin). Reference-counted: the first {@link #acquire} opens the store and starts the
 * manager, the last {@link Lease#close()} stops the manager and closes the store.
 *
 * <p>Why: a file store's directory can be open only once, and two managers over one store would
 * each believe they own its capture, retention and delivery loops.
 *
 * <p>Thread-safe. Each identity has its own lock: {@link #acquire} and {@link Lease#close()} block
 * while another thread opens or closes <em>the same</em> store, never for another one. (A slow
 * open, such as a database that keeps refusing a wrong password until its connect timeout, would
 * otherwise hold every other lease in the worker — a stopping task's included — for that long.)
 */
public final class SharedStores {
  private static final Logger log = LoggerFactory.getLogger(SharedStores.class);

  /** The lock of each identity ever named in this class loader (one small object each). */
  private static final ConcurrentMap<String, Object> LOCKS = new ConcurrentHashMap<>();

  /** The open stores; an identity's entry is added, removed and counted under its lock. */
  private static final ConcurrentMap<String, Entry> OPEN = new ConcurrentHashMap<>();

  private SharedStores() {}

  /**
   * A lease on the store that {@code type} and {@code config} name, opening it (and starting its
   * manager) if nobody holds it yet. Blocks while the same store is being opened or closed.
   *
   * @throws InvalidConfigException for an unknown type or a bad configuration
   * @throws QueueStoreException if the store cannot be opened
   */
  public static Lease acquire(String type, Map<String, String> config) {
    QueueStoreProvider provider = QueueStores.provider(type);
    provider.validate(config);
    String identity = provider.identity(config);
    synchronized (lockOf(identity)) {
      Entry e = OPEN.get(identity);
      if (e == null) {
        Storage storage = provider.open(config);
        QueueManager manager;
        try {
          manager = new QueueManager(storage, QueueManagerConfig.defaults());
          manager.start();
        } catch (RuntimeException ex) {
          storage.close();
          throw ex;
        }
        e = new Entry(identity, storage, manager);
        OPEN.put(identity, e);
        log.info("Opened store {}", storage.description());
      }
      e.references++;
      return new Lease(e);
    }
  }

  /** How many leases are held on the store of that identity (0 when it is not open). */
  static int references(String identity) {
    synchronized (lockOf(identity)) {
      Entry e = OPEN.get(identity);
      return e == null ? 0 : e.references;
    }
  }

  private static Object lockOf(String identity) {
    return LOCKS.computeIfAbsent(identity, k -> new Object());
  }

  private static void release(Entry e) {
    synchronized (lockOf(e.identity)) {
      if (--e.references > 0) {
        return;
      }
      OPEN.remove(e.identity);
      try {
        e.manager.stop();
      } catch (CaptureStillRunningException | DeliveryStillRunningException ex) {
        log.warn("Leaving store {} open: {}", e.storage.description(), ex.getMessage());
        return;
      }
      if (e.manager.shutdownComplete()) {
        e.storage.close();
        log.info("Closed store {}", e.storage.description());
      }
    }
  }

  private static final class Entry {
    final String identity;
    final Storage storage;
    final QueueManager manager;
    int references; // guarded by the identity's lock

    Entry(String identity, Storage storage, QueueManager manager) {
      this.identity = identity;
      this.storage = storage;
      this.manager = manager;
    }
  }

  /** A hold on a shared store. Close it once; a second close does nothing. */
  public static final class Lease implements AutoCloseable {
    private final Entry entry;
    private boolean closed;

    private Lease(Entry entry) {
      this.entry = entry;
    }

    /** The open store. */
    public Storage storage() {
      return entry.storage;
    }

    /** The started manager over the store. */
    public QueueManager manager() {
      return entry.manager;
    }

    @Override
    public void close() {
      synchronized (this) {
        if (closed) {
          return;
        }
        closed = true;
      }
      release(entry);
    }
  }
}
