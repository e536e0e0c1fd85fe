package io.queuebridge.core.store.memory;

import io.queuebridge.core.errors.StoreClosedException;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import io.queuebridge.core.store.contract.StoreContractTest;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A check of the kit itself: runs it, reopen tests included, against handles onto one memory store
 * per directory that outlives them. Closing a handle closes only the handle; opening the directory
 * again hands out a new handle onto the same data. A correct "persistent" store must therefore pass
 * every test, which shows that the persistence tests ask only what the SPI promises.
 */
class ReopenableMemoryStoreContractTest extends StoreContractTest {
  private final Map<Path, Storage> behind = new HashMap<>();

  @Override
  protected Storage openStorage(Path dir) {
    return new Handle(behind.computeIfAbsent(dir, d -> QueueStores.memory()));
  }

  @Override
  protected boolean persistent() {
    return true;
  }

  @Override
  protected boolean durableSync() {
    return false;
  }

  @Override
  protected boolean exactTruncation() {
    return true;
  }

  @Override
  protected boolean exactTimeOffset() {
    return true;
  }

  /** A closable view of a store: after close, every call but close is StoreClosedException. */
  private static final class Handle implements Storage {
    private final Storage target;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final DurableQueueStore queues;
    private final ConsumerGroupStore groups;

    Handle(Storage target) {
      this.target = target;
      this.queues = guard(DurableQueueStore.class, target.queues());
      this.groups = guard(ConsumerGroupStore.class, target.groups());
    }

    @Override
    public DurableQueueStore queues() {
      return queues;
    }

    @Override
    public ConsumerGroupStore groups() {
      return groups;
    }

    @Override
    public String description() {
      return "handle on " + target.description();
    }

    @Override
    public void close() {
      closed.set(true);
    }

    private <T> T guard(Class<T> type, T delegate) {
      return type.cast(
          Proxy.newProxyInstance(
              type.getClassLoader(),
              new Class<?>[] {type},
              (proxy, method, args) -> invoke(delegate, method, args)));
    }

    private Object invoke(Object delegate, Method method, Object[] args) throws Throwable {
      if (method.getName().equals("close") && method.getParameterCount() == 0) {
        closed.set(true);
        return null;
      }
      if (method.getDeclaringClass() == Object.class) {
        return method.invoke(delegate, args);
      }
      if (closed.get()) {
        throw new StoreClosedException(description());
      }
      try {
        return method.invoke(delegate, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }

  /** The messages are the objects appended, kept in memory: no earlier release wrote any. */
  @Override
  protected boolean readsEarlierReleases() {
    return false;
  }
}
