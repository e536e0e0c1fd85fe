package io.queuebridge.connect.source;

import io.queuebridge.core.store.ConsumerGroupState;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A test store ({@code queue.store.type=faulty}): a memory store whose consumer-group writes fail
 * with {@link #GROUP_WRITE_FAILURE} while it is set, and whose queue reads ({@code readBatch},
 * {@code tail}, {@code awaitAppend}) fail with {@link #READ_FAILURE} while that is set — fault
 * injection at the SPI seam. Stores of one {@code name} are shared through the worker-wide registry
 * like every store.
 */
public final class FaultyStoreProvider implements QueueStoreProvider {
  /** Thrown by every group write while set. */
  static final AtomicReference<RuntimeException> GROUP_WRITE_FAILURE = new AtomicReference<>();

  /** Thrown by every queue read while set. */
  static final AtomicReference<RuntimeException> READ_FAILURE = new AtomicReference<>();

  private static final Set<String> READS = Set.of("readBatch", "tail", "awaitAppend");

  @Override
  public String name() {
    return "faulty";
  }

  @Override
  public void validate(Map<String, String> config) {}

  @Override
  public String identity(Map<String, String> config) {
    return "faulty:" + config.getOrDefault("name", "default");
  }

  @Override
  public Storage open(Map<String, String> config) {
    Storage memory = QueueStores.memory();
    ConsumerGroupStore groups = new FaultyGroups(memory.groups());
    DurableQueueStore queues =
        (DurableQueueStore)
            Proxy.newProxyInstance(
                DurableQueueStore.class.getClassLoader(),
                new Class<?>[] {DurableQueueStore.class},
                (proxy, method, args) -> {
                  RuntimeException e = READ_FAILURE.get();
                  if (e != null && READS.contains(method.getName())) {
                    throw e;
                  }
                  try {
                    return method.invoke(memory.queues(), args);
                  } catch (InvocationTargetException t) {
                    throw t.getCause();
                  }
                });
    return new Storage() {
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
        return identity(config);
      }

      @Override
      public void close() {
        memory.close();
      }
    };
  }

  /** Delegates the primitives; the conveniences are the interface's defaults built on them. */
  private static final class FaultyGroups implements ConsumerGroupStore {
    private final ConsumerGroupStore delegate;

    FaultyGroups(ConsumerGroupStore delegate) {
      this.delegate = delegate;
    }

    private static void maybeFail() {
      RuntimeException e = GROUP_WRITE_FAILURE.get();
      if (e != null) {
        throw e;
      }
    }

    @Override
    public void createGroup(ConsumerGroupState group) {
      maybeFail();
      delegate.createGroup(group);
    }

    @Override
    public Optional<ConsumerGroupState> findGroup(String queue, String groupId) {
      return delegate.findGroup(queue, groupId);
    }

    @Override
    public void updateGroup(ConsumerGroupState group) {
      maybeFail();
      delegate.updateGroup(group);
    }

    @Override
    public void deleteGroup(String queue, String groupId) {
      maybeFail();
      delegate.deleteGroup(queue, groupId);
    }

    @Override
    public List<ConsumerGroupState> listGroups(String queue) {
      return delegate.listGroups(queue);
    }
  }
}
