package io.queuebridge.cli;

import io.queuebridge.core.store.ConsumerGroupStore;
import io.queuebridge.core.store.DurableQueueStore;
import io.queuebridge.core.store.QueueStores;
import io.queuebridge.core.store.Storage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The {@link StoreFixture} in a store of one kind, and how a command names it: an embedded {@code
 * memory} store handed to the commands by a test opener, or a real {@code file} store in a
 * temporary directory, written, closed, and opened by the commands the ordinary way.
 */
final class FixtureStore implements AutoCloseable {
  enum Kind {
    MEMORY,
    FILE,
    /** Skipped, visibly, without the PostgreSQL test server. */
    POSTGRES
  }

  private final Storage memory; // null for a file store
  private final StoreOpener opener;
  private final List<String> storeArgs;
  private final AutoCloseable resource;
  private final Supplier<Storage> reopen;

  private FixtureStore(
      Storage memory,
      StoreOpener opener,
      List<String> storeArgs,
      AutoCloseable resource,
      Supplier<Storage> reopen) {
    this.memory = memory;
    this.opener = opener;
    this.storeArgs = storeArgs;
    this.resource = resource;
    this.reopen = reopen;
  }

  /**
   * The fixture in a fresh schema of the PostgreSQL test server, named by {@code --store} pairs;
   * the test is skipped, visibly, when {@code QUEUEBRIDGE_TEST_PG_URL} names no server.
   */
  static FixtureStore postgres() {
    String url = System.getenv("QUEUEBRIDGE_TEST_PG_URL");
    org.junit.jupiter.api.Assumptions.assumeTrue(
        url != null && !url.isBlank(),
        "QUEUEBRIDGE_TEST_PG_URL is not set: no PostgreSQL server for the postgres variant");
    io.queuebridge.store.postgres.PostgresTestDatabase db =
        io.queuebridge.store.postgres.PostgresTestDatabase.create();
    try (Storage storage = QueueStores.open("postgres", db.config())) {
      StoreFixture.fill(storage);
    }
    List<String> args = new ArrayList<>(List.of("--store-type", "postgres"));
    db.config().forEach((k, v) -> args.addAll(List.of("--store", k + "=" + v)));
    return new FixtureStore(
        null,
        StoreOpener.existingStores(),
        args,
        db,
        () -> QueueStores.open("postgres", db.config()));
  }

  static FixtureStore create(Kind kind, Path dir) {
    if (kind == Kind.POSTGRES) {
      return postgres();
    }
    if (kind == Kind.MEMORY) {
      Storage storage = QueueStores.memory();
      StoreFixture.fill(storage);
      return new FixtureStore(
          storage,
          serving(storage),
          List.of("--store-type", "memory"),
          null,
          () -> unclosable(storage));
    }
    Path path = dir.resolve("store");
    try (Storage storage = QueueStores.file(path)) {
      StoreFixture.fill(storage);
    }
    return new FixtureStore(
        null,
        StoreOpener.existingStores(),
        List.of("--store-type", "file", "--store", "path=" + path),
        null,
        () -> QueueStores.file(path));
  }

  /**
   * An opener handing out {@code storage} (not closed by the command) for type {@code memory}, and
   * opening every other store the ordinary way.
   */
  static StoreOpener serving(Storage storage) {
    return (spec, writable) ->
        spec.type().equals("memory")
            ? unclosable(storage)
            : StoreOpener.existingStores().open(spec, writable);
  }

  private static Storage unclosable(Storage storage) {
    return new Storage() {
      @Override
      public DurableQueueStore queues() {
        return storage.queues();
      }

      @Override
      public ConsumerGroupStore groups() {
        return storage.groups();
      }

      @Override
      public String description() {
        return storage.description();
      }

      @Override
      public void close() {}
    };
  }

  /**
   * Adds to the fixture: {@code change} gets the store open for writing (the embedded memory store,
   * or the file or PostgreSQL store opened again), which is closed after it, before any command
   * runs on it.
   */
  void amend(Change change) throws Exception {
    try (Storage storage = reopen.get()) {
      change.apply(storage);
    }
  }

  /** A change {@link #amend} makes. */
  interface Change {
    void apply(Storage storage) throws Exception;
  }

  /** Runs {@code args} followed by the options naming this store. */
  Cli.Run run(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(storeArgs);
    return Cli.run(opener, StoreFixture.CLOCK, all.toArray(String[]::new));
  }

  /** The embedded memory store, for tests that append while a command runs. */
  Storage memory() {
    return memory;
  }

  @Override
  public void close() {
    if (memory != null) {
      memory.close();
    }
    if (resource != null) {
      try {
        resource.close();
      } catch (Exception e) {
        throw new IllegalStateException("cannot drop the test database", e);
      }
    }
  }
}
