package io.queuebridge.connect.sink;

import io.queuebridge.core.errors.QueueStoreException;
import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.PreparedBatch;
import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test store named {@code flaky}: the {@code file} store at {@code path}, except that the next
 * {@link #FAIL_AFTER_APPEND} calls of {@code appendBatchAndSync} (or {@code appendPreparedAndSync})
 * append and then report a failed durability barrier — the case where a retry must not duplicate
 * the batch —, the next {@link #FAIL_BEFORE_APPEND} calls fail without writing (an unreachable
 * database), and the next {@link #FAIL_GET_QUEUE} calls of {@code getQueue} and the next {@link
 * #FAIL_CHECKPOINTS} calls of {@code checkpoints} fail (reads on the task thread); {@link #hold}
 * and {@link #holdWriterGetQueue} make the writer thread wait.
 */
public final class FlakyStoreProvider implements QueueStoreProvider {
  /** How many of the next durable batch appends fail after writing. */
  public static final AtomicInteger FAIL_AFTER_APPEND = new AtomicInteger();

  /** How many of the next durable batch appends fail without writing anything. */
  public static final AtomicInteger FAIL_BEFORE_APPEND = new AtomicInteger();

  /** How many of the next {@code getQueue} calls fail. */
  public static final AtomicInteger FAIL_GET_QUEUE = new AtomicInteger();

  /** How many of the next {@code checkpoints} calls (watermark reads) fail. */
  public static final AtomicInteger FAIL_CHECKPOINTS = new AtomicInteger();

  /** Durable batch appends made so far. */
  public static final AtomicInteger BATCHES = new AtomicInteger();

  /** While set and not counted down, durable batch appends wait for it before writing. */
  public static volatile CountDownLatch hold;

  /**
   * While set and not counted down, {@code getQueue} calls on a sink's preparing thread (the
   * manager reading the target's configuration for a batch) wait for it: a test changes the queue
   * meanwhile.
   */
  public static volatile CountDownLatch holdWriterGetQueue;

  private static QueueStoreProvider file() {
    return QueueStores.provider("file"); // not in the constructor: ServiceLoader is iterating
  }

  @Override
  public String name() {
    return "flaky";
  }

  @Override
  public void validate(Map<String, String> config) {
    file().validate(config);
  }

  @Override
  public String identity(Map<String, String> config) {
    return "flaky:" + file().identity(config);
  }

  @Override
  public Storage open(Map<String, String> config) {
    Storage real = file().open(config);
    DurableQueueStore queues =
        (DurableQueueStore)
            Proxy.newProxyInstance(
                DurableQueueStore.class.getClassLoader(),
                new Class<?>[] {DurableQueueStore.class},
                (proxy, method, args) -> {
                  // appendPreparedAndSync: the default of DurableQueueStore would call the real
                  // store's appendBatchAndSync, past this handler; so it is a batch append here
                  boolean batch =
                      method.getName().equals("appendBatchAndSync")
                          || method.getName().equals("appendPreparedAndSync");
                  String queue =
                      args != null && args.length > 0 && args[0] instanceof PreparedBatch p
                          ? p.queue()
                          : args != null && args.length > 0 && args[0] instanceof String q
                              ? q
                              : null;
                  CountDownLatch h = hold;
                  if (batch && h != null) {
                    h.await();
                  }
                  if (batch && FAIL_BEFORE_APPEND.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    throw new QueueStoreException(queue, "injected: the store is unreachable");
                  }
                  CountDownLatch writerRead = holdWriterGetQueue;
                  if (writerRead != null
                      && method.getName().equals("getQueue")
                      && Thread.currentThread().getName().startsWith("queue-sink-prepare-")) {
                    writerRead.await();
                  }
                  if (method.getName().equals("getQueue")
                      && FAIL_GET_QUEUE.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    throw new QueueStoreException(queue, "injected: reading the queue failed");
                  }
                  if (method.getName().equals("checkpoints")
                      && FAIL_CHECKPOINTS.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    throw new QueueStoreException(queue, "injected: reading the watermarks failed");
                  }
                  Object result;
                  try {
                    result = method.invoke(real.queues(), args);
                  } catch (InvocationTargetException e) {
                    throw e.getCause();
                  }
                  if (batch) {
                    BATCHES.incrementAndGet();
                  }
                  if (batch && FAIL_AFTER_APPEND.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    throw new QueueStoreException(
                        queue, "injected: durability barrier failed after the append");
                  }
                  return result;
                });
    return new Storage() {
      @Override
      public DurableQueueStore queues() {
        return queues;
      }

      @Override
      public ConsumerGroupStore groups() {
        return real.groups();
      }

      @Override
      public String description() {
        return "flaky " + real.description();
      }

      @Override
      public void close() {
        real.close();
      }
    };
  }
}
