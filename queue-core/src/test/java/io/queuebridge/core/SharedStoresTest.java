package io.queuebridge.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.queuebridge.core.store.QueueStoreProvider;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SharedStoresTest {
  /** Opens a memory store once {@link #gate} opens; counts its opens. */
  public static final class SlowProvider implements QueueStoreProvider {
    static volatile CountDownLatch entered = new CountDownLatch(1);
    static volatile CountDownLatch gate = new CountDownLatch(1);
    static final AtomicInteger opens = new AtomicInteger();

    public SlowProvider() {}

    @Override
    public String name() {
      return "slow-test";
    }

    @Override
    public void validate(Map<String, String> config) {}

    @Override
    public String identity(Map<String, String> config) {
      return "slow-test:" + config.getOrDefault("name", "default");
    }

    @Override
    public Storage open(Map<String, String> config) {
      opens.incrementAndGet();
      entered.countDown();
      try {
        if (!gate.await(30, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the test never opened the gate");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      return QueueStores.memory();
    }
  }

  private final ExecutorService threads = Executors.newCachedThreadPool();
  private ClassLoader contextBefore;
  private ClassLoader withSlowProvider;

  @BeforeEach
  void registerTheSlowProviderThroughTheContextClassLoader(@TempDir Path dir) throws IOException {
    Path services = dir.resolve("META-INF/services");
    Files.createDirectories(services);
    Files.writeString(
        services.resolve(QueueStoreProvider.class.getName()), SlowProvider.class.getName());
    withSlowProvider =
        new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader());
    contextBefore = Thread.currentThread().getContextClassLoader();
    SlowProvider.entered = new CountDownLatch(1);
    SlowProvider.gate = new CountDownLatch(1);
    SlowProvider.opens.set(0);
  }

  @AfterEach
  void tearDown() {
    SlowProvider.gate.countDown();
    Thread.currentThread().setContextClassLoader(contextBefore);
    threads.shutdownNow();
  }

  private CompletableFuture<SharedStores.Lease> acquireSlow(String name) {
    return CompletableFuture.supplyAsync(
        () -> {
          Thread.currentThread().setContextClassLoader(withSlowProvider);
          return SharedStores.acquire("slow-test", Map.of("name", name));
        },
        threads);
  }

  @Test
  void aSlowOpenDoesNotHoldUpLeasesOnOtherStores() throws Exception {
    CompletableFuture<SharedStores.Lease> slow = acquireSlow("a");
    assertThat(SlowProvider.entered.await(10, TimeUnit.SECONDS)).isTrue();

    // While store "a" is still opening, another store opens and closes without waiting for it.
    CompletableFuture<Void> other =
        CompletableFuture.runAsync(
            () -> {
              try (SharedStores.Lease lease =
                  SharedStores.acquire("memory", Map.of("name", "shared-stores-test"))) {
                assertThat(lease.storage()).isNotNull();
              }
            },
            threads);
    other.get(10, TimeUnit.SECONDS);
    assertThat(slow).isNotDone();

    SlowProvider.gate.countDown();
    slow.get(10, TimeUnit.SECONDS).close();
    assertThat(SharedStores.references("slow-test:a")).isZero();
  }

  @Test
  void aSecondLeaseOnAStoreBeingOpenedWaitsAndSharesIt() throws Exception {
    CompletableFuture<SharedStores.Lease> first = acquireSlow("b");
    assertThat(SlowProvider.entered.await(10, TimeUnit.SECONDS)).isTrue();
    CompletableFuture<SharedStores.Lease> second = acquireSlow("b");

    SlowProvider.gate.countDown();
    SharedStores.Lease one = first.get(10, TimeUnit.SECONDS);
    SharedStores.Lease two = second.get(10, TimeUnit.SECONDS);
    assertThat(SlowProvider.opens).hasValue(1);
    assertThat(two.storage()).isSameAs(one.storage());
    assertThat(SharedStores.references("slow-test:b")).isEqualTo(2);

    one.close();
    assertThat(SharedStores.references("slow-test:b")).isEqualTo(1);
    two.close();
    assertThat(SharedStores.references("slow-test:b")).isZero();
  }
}
